"""``lakelet pr list|create|show|merge|close|reopen``: lakeFS's pull requests (the pulls API). lakectl has no pull
request commands; these follow its conventions (repository URIs, ``--amount``/``--after``, a conflict table and
exit code 3 on a conflicting merge, as ``lakelet merge``)."""

from typing import Annotated, Any

import typer

from lakelet.commands.api import q
from lakelet.commands.common import AfterOpt, AmountOpt, JsonOpt, key_values
from lakelet.commands.context import api, emit, emit_table, want_json
from lakelet.commands.errors import MergeConflict
from lakelet.commands.output import out
from lakelet.commands.uri import parse

app = typer.Typer(no_args_is_help=True)
RepoArg = Annotated[str, typer.Argument(help="lakefs://REPOSITORY")]
IdArg = Annotated[str, typer.Argument(help="the pull request's id")]
STATUSES = ("open", "closed", "all")


def _pulls(repository: str) -> str:
    return f"/repositories/{q(repository)}/pulls"


@app.command("list")
def list_(
    repository: RepoArg,
    status: Annotated[str, typer.Option("--status", help="open, closed (closed or merged) or all")] = "all",
    amount: AmountOpt = None,
    after: AfterOpt = "",
    json_out: JsonOpt = False,
) -> None:
    """List pull requests, oldest first."""
    if status not in STATUSES:
        raise typer.BadParameter(f"{status!r}: use open, closed or all", param_hint="--status")
    uri = parse(repository)
    pulls = api().pages(
        f"list pull requests of {uri.repository}",
        _pulls(uri.repository),
        {"status": status},
        after=after,
        limit=amount,
    )
    emit_table(
        pulls,
        json_out,
        ["ID", "STATUS", "TITLE", "SOURCE", "DESTINATION", "AUTHOR", "CREATED"],
        lambda p: (
            p["id"],
            p["status"],
            p["title"],
            p["source_branch"],
            p["destination_branch"],
            p["author"],
            p["creation_date"],
        ),
    )


@app.command("create")
def create(
    source: Annotated[str, typer.Argument(help="lakefs://REPOSITORY/SOURCE_BRANCH")],
    destination: Annotated[str, typer.Argument(help="lakefs://REPOSITORY/DESTINATION_BRANCH")],
    title: Annotated[str, typer.Option("--title", "-t", help="the pull request's title")],
    description: Annotated[str, typer.Option("--description", "-d", help="what it changes and why")] = "",
    json_out: JsonOpt = False,
) -> None:
    """Open a pull request to merge SOURCE into DESTINATION."""
    src, dst = parse(source, ref=True), parse(destination, ref=True)
    if src.repository != dst.repository:
        from lakelet.commands.errors import CLIError

        raise CLIError("source and destination are in different repositories", "open it within one repository")
    _, created = api().raw(
        f"open a pull request from {src.ref} to {dst.ref}",
        "POST",
        _pulls(src.repository),
        None,
        {"title": title, "description": description, "source_branch": src.ref, "destination_branch": dst.ref},
    )
    emit(created, f"Pull request {created['id']} created: {src.ref} -> {dst.ref}", json_out)


def _get(repository: str, pr_id: str) -> dict[str, Any]:
    return dict(api().get(f"read pull request {pr_id}", f"{_pulls(repository)}/{q(pr_id)}"))


@app.command("show")
def show(repository: RepoArg, pr_id: IdArg, json_out: JsonOpt = False) -> None:
    """Show a pull request."""
    uri = parse(repository)
    pr = _get(uri.repository, pr_id)
    lines = [
        f"ID: {pr['id']}",
        f"Title: {pr['title']}",
        f"Status: {pr['status']}",
        f"Source: {pr['source_branch']}",
        f"Destination: {pr['destination_branch']}",
        f"Author: {pr['author']}",
        f"Created: {pr['creation_date']}",
    ]
    if pr.get("closed_date"):
        lines.append(f"Closed: {pr['closed_date']}")
    if pr.get("merged_commit_id"):
        lines.append(f"Merged commit: {pr['merged_commit_id']}")
    if pr.get("description"):
        lines += ["", pr["description"]]
    emit(pr, "\n".join(lines), json_out)


@app.command("merge")
def merge(
    repository: RepoArg,
    pr_id: IdArg,
    strategy: Annotated[str | None, typer.Option(help="settle every conflict: source-wins or dest-wins")] = None,
    message: Annotated[str | None, typer.Option("--message", "-m", help="merge commit message")] = None,
    meta: Annotated[list[str] | None, typer.Option("--meta", help="KEY=VALUE metadata (repeatable)")] = None,
    json_out: JsonOpt = False,
) -> None:
    """Merge a pull request (its source into its destination) and mark it merged."""
    if strategy is not None and strategy not in ("source-wins", "dest-wins"):
        raise typer.BadParameter(f"{strategy!r}: use source-wins or dest-wins", param_hint="--strategy")
    uri = parse(repository)
    body: dict[str, Any] = {"message": message or "", "metadata": key_values(meta, "--meta")}
    if strategy:
        body["strategy"] = strategy
    status, answer = api().raw(
        f"merge pull request {pr_id}",
        "PUT",
        f"{_pulls(uri.repository)}/{q(pr_id)}/merge",
        {"amount": 1000},
        body,
        ok=(200, 202, 409),
    )
    if status == 409 and isinstance(answer, dict) and "conflicts" in answer:
        shown = want_json(json_out)
        if shown:
            out().json(answer)
        more = bool((answer.get("pagination") or {}).get("has_more"))
        raise MergeConflict(
            f"merge of pull request {pr_id} has conflicts ({len(answer['conflicts'])}{'+' if more else ''})",
            answer["conflicts"],
            more,
            shown,
        )
    if status == 409:
        from lakelet.commands.errors import from_status

        raise from_status(f"merge pull request {pr_id}", status, None, str((answer or {}).get("message", "")))
    if status == 202:
        emit(answer, f"Pull request {pr_id}: the merge goes on as task {answer['id']}; it stays open", json_out)
        return
    emit(answer, f"Pull request {pr_id} merged: {answer['reference']}", json_out)


def _set_status(repository: str, pr_id: str, status: str, verb: str, json_out: bool) -> None:
    uri = parse(repository)
    api().raw(f"{verb} pull request {pr_id}", "PATCH", f"{_pulls(uri.repository)}/{q(pr_id)}", None, {"status": status})
    emit({"id": pr_id, "status": status}, f"Pull request {pr_id} {verb}ed".replace("eed", "ed"), json_out)


@app.command("close")
def close(repository: RepoArg, pr_id: IdArg, json_out: JsonOpt = False) -> None:
    """Close a pull request without merging it."""
    _set_status(repository, pr_id, "closed", "close", json_out)


@app.command("reopen")
def reopen(repository: RepoArg, pr_id: IdArg, json_out: JsonOpt = False) -> None:
    """Reopen a closed pull request."""
    _set_status(repository, pr_id, "open", "reopen", json_out)
