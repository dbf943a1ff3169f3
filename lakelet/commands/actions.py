"""``lakelet actions validate FILE`` and ``lakelet actions runs list|describe`` (lakectl's actions commands).

``validate`` checks a file locally with the server's own parser (chalicelib/graveler/actions/spec.py, pure
Python), so what it accepts is exactly what a run accepts; the runs commands read lakeFS's ActionsApi routes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from lakelet.commands.api import q
from lakelet.commands.common import AfterOpt, AmountOpt, JsonOpt
from lakelet.commands.context import api, emit, emit_table
from lakelet.commands.errors import CLIError
from lakelet.commands.output import out
from lakelet.commands.uri import parse

app = typer.Typer(no_args_is_help=True)
runs = typer.Typer(no_args_is_help=True)
app.add_typer(runs, name="runs", help="list and describe action runs")


@app.command("validate")
def validate(file: Annotated[Path, typer.Argument(help="an action file (YAML)")]) -> None:
    """Check an action file as the server will: schema, events, hook types (Lua hooks are refused)."""
    from chalicelib.adapters.action_yaml import load_action_yaml
    from chalicelib.graveler.actions import InvalidActionFile, parse_action

    try:
        data = file.read_bytes()
    except OSError as e:
        raise CLIError(f"cannot read {file}: {e.strerror}", "give the path of an action file") from None
    try:
        action = parse_action(data, load_action_yaml)
    except InvalidActionFile as e:
        raise CLIError(f"{file}: {e}", "fix the action file; lakeFS's schema: name, on, hooks") from None
    out().line(
        f"{file}: action '{action.name}' is valid ({len(action.hooks)} hook(s) on {', '.join(sorted(action.on))})"
    )


@runs.command("list")
def list_runs(
    repository: Annotated[str, typer.Argument(help="lakefs://REPOSITORY")],
    branch: Annotated[str, typer.Option("--branch", help="runs of this branch only")] = "",
    commit: Annotated[str, typer.Option("--commit", help="runs of this commit only")] = "",
    amount: AmountOpt = None,
    after: AfterOpt = "",
    json_out: JsonOpt = False,
) -> None:
    """List action runs, newest first."""
    uri = parse(repository)
    query = {k: v for k, v in (("branch", branch), ("commit", commit)) if v}
    items = api().pages(
        f"list runs of {uri.repository}",
        f"/repositories/{q(uri.repository)}/actions/runs",
        query,
        after=after,
        limit=amount,
    )
    emit_table(
        items,
        json_out,
        ["RUN ID", "EVENT", "BRANCH", "STATUS", "START TIME", "END TIME", "COMMIT ID"],
        lambda r: (
            r["run_id"],
            r["event_type"],
            r["branch"],
            r["status"],
            r["start_time"],
            r["end_time"],
            r["commit_id"],
        ),
    )


@runs.command("describe")
def describe(
    repository: Annotated[str, typer.Argument(help="lakefs://REPOSITORY")],
    run_id: Annotated[str, typer.Argument(help="the run id")],
    amount: AmountOpt = None,
    after: AfterOpt = "",
    json_out: JsonOpt = False,
) -> None:
    """A run's hooks, each with its output."""
    uri = parse(repository)
    a = api()
    base = f"/repositories/{q(uri.repository)}/actions/runs/{q(run_id)}"
    run = a.get(f"get run {run_id}", base)
    hooks = list(a.pages(f"list hooks of run {run_id}", f"{base}/hooks", after=after, limit=amount))
    if json_out:
        emit({"run": run, "hooks": hooks}, "", True)
        return
    lines = [
        f"Run ID: {run['run_id']}",
        f"Event: {run['event_type']}",
        f"Branch: {run['branch']}",
        f"Status: {run['status']}",
        f"Commit ID: {run['commit_id']}",
        "",
    ]
    for hook in hooks:
        _, output = a.raw(
            f"get output of hook run {hook['hook_run_id']}",
            "GET",
            f"{base}/hooks/{q(hook['hook_run_id'])}/output",
            text=True,
        )
        lines += [
            f"Hook run {hook['hook_run_id']}: action '{hook['action']}' hook '{hook['hook_id']}': {hook['status']}",
            str(output).rstrip(),
            "",
        ]
    out().line("\n".join(lines).rstrip())
