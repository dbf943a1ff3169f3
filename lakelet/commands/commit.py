"""``lakelet commit`` (followed to the end when the server hands it to the workflow), ``commit status``,
``log`` and ``show commit``."""

import datetime
import time
from typing import Annotated, Any

import typer

from lakelet.commands.api import q
from lakelet.commands.common import AfterOpt, AmountOpt, JsonOpt, key_values
from lakelet.commands.context import api, emit, want_json
from lakelet.commands.errors import CLIError, from_status
from lakelet.commands.output import jsonable, out, timestamp
from lakelet.commands.uri import URI, parse

# Polls start fast (most workflow commits end within seconds) and slow down to every 2 s for long ones.
POLL_FIRST_SECONDS, POLL_MAX_SECONDS = 0.2, 2.0
show_app = typer.Typer(no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.command(
        "commit",
        help="Commit a branch's changes: lakelet commit lakefs://REPO/BRANCH -m MSG; "
        "'lakelet commit status lakefs://REPO/BRANCH --id TASK' checks an --async one.",
    )(commit)
    app.command("log", help="Show the commit log of a ref.")(log)
    app.add_typer(show_app, name="show", help="show a commit")


def commit(
    branch: Annotated[str, typer.Argument(help="lakefs://REPOSITORY/BRANCH, or 'status'")],
    status_branch: Annotated[str | None, typer.Argument(help="with 'status': lakefs://REPOSITORY/BRANCH")] = None,
    message: Annotated[str | None, typer.Option("--message", "-m", help="commit message")] = None,
    meta: Annotated[list[str] | None, typer.Option("--meta", help="KEY=VALUE metadata (repeatable)")] = None,
    allow_empty_message: Annotated[bool, typer.Option(help="allow an empty message")] = False,
    allow_empty_commit: Annotated[bool, typer.Option(help="commit even with no changes")] = False,
    async_: Annotated[bool, typer.Option("--async", help="start the commit and print its task id")] = False,
    task_id: Annotated[str | None, typer.Option("--id", help="with 'status': the task id")] = None,
    epoch_time_seconds: Annotated[
        int | None, typer.Option("--epoch-time-seconds", help="the commit's date, in seconds since the epoch")
    ] = None,
    json_out: JsonOpt = False,
) -> None:
    if branch == "status":
        if status_branch is None or task_id is None:
            raise typer.BadParameter("usage: lakelet commit status lakefs://REPO/BRANCH --id TASK")
        _print_status(parse(status_branch, ref=True), task_id, json_out)
        return
    if status_branch is not None:
        raise typer.BadParameter(f"unexpected argument {status_branch!r}")
    uri = parse(branch, ref=True)
    if not message and not allow_empty_message:
        raise typer.BadParameter("a commit needs a message (-m), or --allow-empty-message")
    body: dict[str, Any] = {
        "message": message or "",
        "metadata": key_values(meta, "--meta"),
        "allow_empty": allow_empty_commit,
    }
    if epoch_time_seconds is not None and epoch_time_seconds >= 0:  # lakectl's default, -1, means now
        body["date"] = epoch_time_seconds
    result = run_commit(uri, body, async_)
    if async_:
        emit(
            {"id": result}, f"Commit task: {result}\nCheck it with: lakelet commit status {uri} --id {result}", json_out
        )
        return
    print_commit(uri, result, json_out)


def commits_path(uri: URI) -> str:
    return f"/repositories/{q(uri.repository)}/branches/{q(uri.ref)}/commits"


def run_commit(uri: URI, body: dict[str, Any], async_: bool = False) -> Any:
    """Commit; a 202 (the workflow took it) is followed to the end. With async_, return the task id."""
    a = api()
    if async_:
        _, answer = a.raw(f"commit {uri}", "POST", commits_path(uri) + "/async", body=body, ok=(202,))
        return answer["id"]
    status, answer = a.raw(f"commit {uri}", "POST", commits_path(uri), body=body, ok=(201, 202))
    if status == 201:
        return answer
    return follow(uri, answer["id"])


def follow(uri: URI, task_id: str) -> dict[str, Any]:
    """Poll a commit task to the end; its Commit, or the error the synchronous call would have raised."""
    answer = follow_task(f"commit {uri}", commits_path(uri) + "/status", task_id)
    if answer.get("error"):
        raise from_status(
            f"commit {uri}",
            int(answer.get("status_code") or 500),
            _json_bytes({"message": answer["error"].get("message", "")}),
        )
    return dict(answer["result"])


def follow_task(label: str, status_path: str, task_id: str) -> dict[str, Any]:
    """Poll a workflow task (lakeFS's async status shape) until it completes, with a spinner and the elapsed time
    on a terminal; returns the final status (``result`` or ``error`` + ``status_code``)."""
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    a = api()
    started = time.monotonic()
    console = out().err
    with Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        TimeElapsedColumn(),
        console=console,
        transient=True,
        disable=not out().interactive or not console.is_terminal,
    ) as progress:
        progress.add_task(f"{label} (task {task_id})", total=None)
        pause = POLL_FIRST_SECONDS
        while True:
            _, answer = a.raw(f"read the status of {label}", "GET", status_path, {"id": task_id})
            if answer.get("completed"):
                break
            time.sleep(pause)
            pause = min(pause * 1.5, POLL_MAX_SECONDS)
    out().info(f"{label} {'failed' if answer.get('error') else 'completed'} in {time.monotonic() - started:.1f} s")
    return dict(answer)


def _json_bytes(data: Any) -> bytes:
    import json

    return json.dumps(data).encode()


def task_status(uri: URI, task_id: str) -> dict[str, Any]:
    a = api()
    _, answer = a.raw(f"read commit status of {uri}", "GET", commits_path(uri) + "/status", {"id": task_id})
    return dict(answer)


def _print_status(uri: URI, task_id: str, json_out: bool) -> None:
    answer = task_status(uri, task_id)
    if want_json(json_out):
        out().json(answer)
        return
    if not answer.get("completed"):
        out().line(f"Task {task_id}: running (updated {answer.get('update_time', '')})")
    elif answer.get("error"):
        out().line(f"Task {task_id}: failed ({answer.get('status_code')} {answer['error'].get('message', '')})")
        raise typer.Exit(1)
    else:
        out().line(f"Task {task_id}: completed")
        print_commit(uri, answer["result"], False)


def print_commit(uri: URI, commit: Any, json_out: bool) -> None:
    data = jsonable(commit)
    if want_json(json_out):
        out().json(data)
        return
    out().line(f'Branch: {URI(uri.repository, uri.ref)}\nCommit for branch "{uri.ref}" completed.\n')
    out().line(format_commit(data))


def format_commit(c: dict[str, Any], show_meta_range_id: bool = False) -> str:
    lines = [
        f"ID:            {c.get('id')}",
        f"Author:        {c.get('committer', '')}",
        f"Date:          {timestamp(c.get('creation_date'))}",
    ]
    if show_meta_range_id:
        lines.append(f"Meta Range ID: {c.get('meta_range_id', '')}")
    parents = c.get("parents") or []
    if len(parents) > 1:
        lines.append(f"Merge:         {' '.join(p[:7] for p in parents)}")
    lines += ["", f"    {c.get('message', '')}"]
    for k, v in sorted((c.get("metadata") or {}).items()):
        lines.append(f"    {k} = {v}")
    return "\n".join(lines) + "\n"


def log(
    ref: Annotated[str, typer.Argument(help="lakefs://REPOSITORY/REF")],
    amount: AmountOpt = None,
    after: AfterOpt = "",
    objects: Annotated[
        list[str] | None, typer.Option("--objects", help="only commits that changed these objects")
    ] = None,
    prefixes: Annotated[
        list[str] | None, typer.Option("--prefixes", help="only commits that changed these prefixes")
    ] = None,
    first_parent: Annotated[bool, typer.Option("--first-parent", help="follow only first parents")] = False,
    since: Annotated[datetime.datetime | None, typer.Option(help="only commits after this date-time (UTC)")] = None,
    show_meta_range_id: Annotated[bool, typer.Option(help="show each commit's metarange id")] = False,
    limit: Annotated[
        bool, typer.Option("--limit", help="stop at --amount (the server does not look further for more)")
    ] = False,
    stop_at: Annotated[str, typer.Option("--stop-at", help="a ref to stop at (included in the results)")] = "",
    dot: Annotated[bool, typer.Option("--dot", help="print the commits as a Graphviz dot graph")] = False,
    no_merges: Annotated[bool, typer.Option("--no-merges", help="skip merge commits")] = False,
    json_out: JsonOpt = False,
) -> None:
    uri = parse(ref, ref=True)
    objs = [o for item in objects or [] for o in item.split(",") if o]
    pres = [p for item in prefixes or [] for p in item.split(",") if p]
    if since is not None and since.tzinfo is None:
        since = since.replace(tzinfo=datetime.UTC)
    a = api()
    commits = list(
        a.pages(
            f"log {uri}",
            f"/repositories/{q(uri.repository)}/refs/{q(uri.ref)}/commits",
            {
                "objects": objs or None,
                "prefixes": pres or None,
                "first_parent": first_parent or None,
                "since": since.isoformat() if since is not None else None,
                "stop_at": stop_at or None,
                "limit": limit or None,
            },
            after=after,
            # Merge commits are dropped here, after the server's page: ask for more so --amount N still shows N.
            limit=None if no_merges else amount,
        )
    )
    if no_merges:
        commits = [c for c in commits if len(c.get("parents") or []) <= 1][:amount]
    if dot:
        out().line(dot_graph(uri.repository, commits, api().settings.endpoint))
        return
    if want_json(json_out):
        out().json(commits)
        return
    for c in commits:
        out().line(format_commit(jsonable(c), show_meta_range_id))


def dot_graph(repository: str, commits: list[dict[str, Any]], endpoint: str) -> str:
    """The commits as lakectl's ``log --dot`` prints them: a bottom-up digraph, each node linking to the web UI."""
    import html
    from urllib.parse import quote

    base = endpoint.rstrip("/").removesuffix("/api/v1").rstrip("/")
    lines = ["digraph {", '\trankdir="BT"']
    for c in commits:
        parents = c.get("parents") or []
        label = f"{c['id'][:8]}<br/> {html.escape(str(c.get('message', '')))}"
        if len(parents) > 1:
            label = f"<b>{label}</b>"
        href = f"{base}/repositories/{quote(repository, safe='')}/commits/{c['id']}"
        lines += ["", f'\t"{c["id"]}" [shape=note target="_blank" href="{href}" label=< {label} >]']
        lines += [f'\t"{p}" -> "{c["id"]}";' for p in parents]
    return "\n".join(lines) + "\n\n}"


@show_app.command("commit")
def show_commit(
    commit: Annotated[str, typer.Argument(help="lakefs://REPOSITORY/COMMIT")],
    show_meta_range_id: Annotated[bool, typer.Option(help="show the metarange id")] = False,
    json_out: JsonOpt = False,
) -> None:
    """Show one commit."""
    uri = parse(commit, ref=True)
    a = api()
    c = a.get(f"show commit {uri}", f"/repositories/{q(uri.repository)}/commits/{q(uri.ref)}")
    emit(c, format_commit(jsonable(c), show_meta_range_id), json_out)


def require_branch(uri: URI) -> None:
    if not uri.ref:
        raise CLIError(f"{uri} names no branch", f"use lakefs://{uri.repository}/<branch>")
