"""``lakelet merge`` (strategies, per-path strategies, dry-run previews, conflict tables), ``cherry-pick``,
``revert`` and ``find-merge-base``.

Lakelet's merge extensions (README, "Diff, merge and history") are reached with plain HTTP: a conflict answers
409 with every conflicting path and what each side did; ``dry_run`` answers a preview. A conflict exits with
EXIT_CONFLICT (3) after printing the table.
"""

from typing import Annotated, Any

import typer

from lakelet.commands.api import q
from lakelet.commands.branch import revert
from lakelet.commands.common import JsonOpt, key_values
from lakelet.commands.context import api, emit, want_json
from lakelet.commands.errors import CLIError, MergeConflict, from_status
from lakelet.commands.output import out
from lakelet.commands.uri import parse

STRATEGIES = ("source-wins", "dest-wins")
PATH_STRATEGIES = ("source-wins", "dest-wins", "fail")


def register(app: typer.Typer) -> None:
    app.command("merge", help="Merge a source ref into a destination branch.")(merge)
    app.command("cherry-pick", help="Apply one commit's changes onto a branch as a new commit.")(cherry_pick)
    app.command("revert", help="Revert commits on a branch (same as 'branch revert').")(revert)
    app.command("find-merge-base", help="Find the commit a merge of SOURCE into DESTINATION would start from.")(
        find_merge_base
    )


def path_strategies(items: list[str] | None) -> list[dict[str, str]]:
    rules = []
    for item in items or []:
        glob, sep, strategy = item.rpartition("=")
        if not sep or not glob or strategy not in PATH_STRATEGIES:
            raise typer.BadParameter(
                f"{item!r} is not GLOB=STRATEGY with STRATEGY one of {', '.join(PATH_STRATEGIES)}",
                param_hint="--path-strategy",
            )
        rules.append({"path": glob, "strategy": strategy})
    return rules


def merge(
    source: Annotated[str, typer.Argument(help="lakefs://REPOSITORY/SOURCE_REF")],
    destination: Annotated[str, typer.Argument(help="lakefs://REPOSITORY/DESTINATION_BRANCH")],
    strategy: Annotated[str | None, typer.Option(help="settle every conflict: source-wins or dest-wins")] = None,
    path_strategy: Annotated[
        list[str] | None,
        typer.Option(
            "--path-strategy",
            help="GLOB=source-wins|dest-wins|fail for conflicts under GLOB (repeatable, first "
            "match wins; ** crosses folders)",
        ),
    ] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="show what the merge would do, commit nothing")] = False,
    message: Annotated[str | None, typer.Option("--message", "-m", help="merge commit message")] = None,
    meta: Annotated[list[str] | None, typer.Option("--meta", help="KEY=VALUE metadata (repeatable)")] = None,
    squash: Annotated[bool, typer.Option("--squash", help="one parent only (squash merge)")] = False,
    allow_empty: Annotated[bool, typer.Option(help="merge even with no changes")] = False,
    force: Annotated[bool, typer.Option("--force", help="allow merging into a read-only branch")] = False,
    json_out: JsonOpt = False,
) -> None:
    src, dst = parse(source, ref=True), parse(destination, ref=True)
    if src.repository != dst.repository:
        raise CLIError("source and destination are in different repositories", "merge within one repository")
    if strategy is not None and strategy not in STRATEGIES:
        raise typer.BadParameter(f"{strategy!r}: use source-wins or dest-wins", param_hint="--strategy")
    body: dict[str, Any] = {
        "message": message or "",
        "metadata": key_values(meta, "--meta"),
        "squash_merge": squash,
        "allow_empty": allow_empty,
    }
    if force:
        body["force"] = True
    if strategy:
        body["strategy"] = strategy
    rules = path_strategies(path_strategy)
    if rules:
        body["path_strategies"] = rules
    if dry_run:
        body["dry_run"] = True
    path = f"/repositories/{q(src.repository)}/refs/{q(src.ref)}/merge/{q(dst.ref)}"
    status, answer = api().raw(
        f"merge {src.ref} into {dst.ref}", "POST", path, {"amount": 1000}, body, ok=(200, 202, 409)
    )
    if status == 409:
        raise_conflicts(f"merge of {src.ref} into {dst.ref}", answer, json_out)
        raise CLIError(
            f"merge of {src.ref} into {dst.ref} failed (409 {answer.get('message', '')})",
            "retry; the destination moved meanwhile",
        )
    if status == 202:
        answer = _follow_merge(src.ref, dst.ref, path, answer["id"], body, json_out)
    if dry_run:
        _print_preview(answer, json_out)
        return
    emit(
        answer,
        f'Source: {src}\nDestination: {dst}\nMerged "{src.ref}" into "{dst.ref}" to get "{answer.get("reference")}".',
        json_out,
    )


def raise_conflicts(label: str, answer: Any, json_out: bool, hint: str | None = None) -> None:
    """A 409 that lists conflicts (a merge's, a cherry-pick's) raises MergeConflict: the table, exit 3."""
    if not (isinstance(answer, dict) and "conflicts" in answer):
        return
    shown = want_json(json_out)
    if shown:
        out().json(answer)
    more = bool((answer.get("pagination") or {}).get("has_more"))
    message = f"{label} has conflicts ({len(answer['conflicts'])}{'+' if more else ''})"
    if hint is None:
        raise MergeConflict(message, answer["conflicts"], more, shown)
    raise MergeConflict(message, answer["conflicts"], more, shown, hint)


def find_merge_base(
    source: Annotated[str, typer.Argument(help="lakefs://REPOSITORY/SOURCE_REF")],
    destination: Annotated[str, typer.Argument(help="lakefs://REPOSITORY/DESTINATION_REF")],
    json_out: JsonOpt = False,
) -> None:
    src, dst = parse(source, ref=True), parse(destination, ref=True)
    if not want_json(json_out):
        out().line(f"Source: {src}\nDestination: {dst}")
    if src.repository != dst.repository:
        raise CLIError("both references must belong to the same repository", "compare refs of one repository")
    found = api().get(
        f"find the merge base of {src.ref} and {dst.ref}",
        f"/repositories/{q(src.repository)}/refs/{q(src.ref)}/merge/{q(dst.ref)}",
    )
    emit(
        found,
        f'Found base "{found["base_commit_id"]}" when merging "{found["source_commit_id"]}" into '
        f'"{found["destination_commit_id"]}".',
        json_out,
    )


def _follow_merge(
    source: str, destination: str, path: str, task_id: str, body: dict[str, Any], json_out: bool
) -> dict[str, Any]:
    """The server handed the merge to its workflow: follow it. A task that failed on conflicts reports only a
    message, so the conflict list is then read from a preview of the same merge (only_conflicts)."""
    from lakelet.commands.commit import follow_task

    label = f"merge of {source} into {destination}"
    final = follow_task(label, path + "/status", task_id)
    if not final.get("error"):
        return {"reference": (final.get("result") or {}).get("reference")}
    code, message = int(final.get("status_code") or 500), str(final["error"].get("message", ""))
    if code != 409:
        raise from_status(label, code, None, message)
    preview_body = {k: v for k, v in body.items() if k in ("strategy", "path_strategies")} | {"dry_run": True}
    _, preview = api().raw(
        f"list the conflicts of {label}", "POST", path, {"only_conflicts": True, "amount": 1000}, preview_body
    )
    conflicts = [
        {
            "path": r.get("path"),
            "source": (r.get("conflict") or {}).get("source"),
            "destination": (r.get("conflict") or {}).get("destination"),
        }
        for r in preview.get("results") or []
        if not (r.get("conflict") or {}).get("resolution")
    ]
    more = bool((preview.get("pagination") or {}).get("has_more"))
    shown = want_json(json_out)
    if shown:
        out().json({"message": message, "conflicts": conflicts, "pagination": preview.get("pagination")})
    raise MergeConflict(f"{label} has conflicts ({len(conflicts)}{'+' if more else ''})", conflicts, more, shown)


def _print_preview(answer: dict[str, Any], json_out: bool) -> None:
    summary = answer.get("summary") or {}
    if want_json(json_out):
        out().json(answer)
    else:
        out().line(
            "Dry run: "
            + ", ".join(f"{k} {summary.get(k, 0)}" for k in ("added", "removed", "changed", "conflict", "unresolved"))
        )
        rows = []
        for r in answer.get("results") or []:
            conflict = r.get("conflict") or {}
            rows.append(
                (
                    r.get("type"),
                    r.get("path"),
                    conflict.get("source", ""),
                    conflict.get("destination", ""),
                    conflict.get("resolution", ""),
                )
            )
        if rows:
            out().table(["CHANGE", "PATH", "SOURCE", "DESTINATION", "RESOLUTION"], rows)
    if summary.get("unresolved"):
        raise typer.Exit(3)


def print_conflicts(error: MergeConflict) -> None:
    """The conflict list as a table: the path, and what each side did since the merge base."""
    if error.shown:
        return
    out().table(
        ["PATH", "SOURCE", "DESTINATION"],
        [(c.get("path"), c.get("source"), c.get("destination")) for c in error.conflicts],
        title="Merge conflicts",
    )
    if error.more:
        out().line("(more conflicts: list them all with 'lakelet merge --dry-run')")


def cherry_pick(
    commit: Annotated[str, typer.Argument(help="lakefs://REPOSITORY/COMMIT (any ref)")],
    branch: Annotated[str, typer.Argument(help="lakefs://REPOSITORY/BRANCH")],
    parent_number: Annotated[
        int | None, typer.Option("--parent-number", "-m", min=1, help="for a merge commit: the parent to diff with")
    ] = None,
    json_out: JsonOpt = False,
) -> None:
    c, b = parse(commit, ref=True), parse(branch, ref=True)
    if c.repository != b.repository:
        raise CLIError("commit and branch are in different repositories", "cherry-pick within one repository")
    a = api()
    body: dict[str, Any] = {"ref": c.ref}
    if parent_number is not None:
        body["parent_number"] = parent_number
    label = f"cherry-pick {c.ref} onto {b}"
    path = f"/repositories/{q(b.repository)}/branches/{q(b.ref)}/cherry-pick"
    status, result = a.raw(label, "POST", path, None, body, ok=(200, 201, 409))
    if status == 409:
        raise_conflicts(
            label,
            result,
            json_out,
            "the branch changed these paths too: settle them on the branch and commit, then cherry-pick again",
        )
        raise from_status(label, status, _json_bytes(result))
    if want_json(json_out):
        out().json(result)
    else:
        from lakelet.commands.commit import format_commit
        from lakelet.commands.output import jsonable

        out().line(f"Branch: {b}\n" + format_commit(jsonable(result)))


def _json_bytes(data: Any) -> bytes:
    import json

    return json.dumps(data).encode()
