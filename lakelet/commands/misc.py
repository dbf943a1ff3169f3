"""lakectl's small top-level commands: ``identity``, ``completion``, ``plugin list``, ``usage summary`` and
``cat-hook-output``. Each prints what the server answers, as lakectl does (a server without a route answers 501,
and the error says so)."""

import os
from pathlib import Path
from typing import Annotated

import typer

from lakelet.commands.api import q
from lakelet.commands.common import JsonOpt
from lakelet.commands.context import api, emit, want_json
from lakelet.commands.output import out, timestamp
from lakelet.commands.uri import parse

PLUGIN_PREFIX = "lakectl-"
SHELLS = ("bash", "zsh", "fish", "powershell")
plugin_app = typer.Typer(no_args_is_help=True)
usage_app = typer.Typer(no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.command("identity", help="Show the configured user: id, email and creation date.")(identity)
    app.command("completion", help="Print the shell completion script: bash, zsh, fish or powershell.")(completion)
    app.command("cat-hook-output", help="Print the output of one hook run of an action run.")(cat_hook_output)
    app.add_typer(plugin_app, name="plugin", help="lakectl plugins: executables named lakectl-NAME on PATH")
    app.add_typer(usage_app, name="usage", help="usage reports from the server")


def identity(json_out: JsonOpt = False) -> None:
    user = (api().get("read the current user", "/user") or {}).get("user") or {}
    emit(
        user,
        f"User ID:          {user.get('id', '')}\nEmail:            {user.get('email') or ''}\n"
        f"Creation Date:    {timestamp(user.get('creation_date'))}",
        json_out,
    )


def completion(shell: Annotated[str, typer.Argument(help="bash, zsh, fish or powershell")]) -> None:
    """Load it with e.g. ``source <(lakelet completion bash)``."""
    if shell not in SHELLS:
        raise typer.BadParameter(f"{shell!r}: use one of {', '.join(SHELLS)}", param_hint="SHELL")
    # Private, kept: typer's only public face for its scripts is an app's --show-completion option, which prints
    # and exits the process itself; typer is pinned (requirements-cli.txt) and tests/cli checks the script.
    from typer._completion_shared import get_completion_script

    out().line(get_completion_script(prog_name="lakelet", complete_var="_LAKELET_COMPLETE", shell=shell).rstrip())


def plugins(path: str) -> list[str]:
    """The names of the executables called lakectl-NAME on ``path`` (lakectl's plugin rule), sorted, each once."""
    names: set[str] = set()
    for directory in dict.fromkeys(d or "." for d in path.split(os.pathsep)):
        try:
            entries = list(Path(directory).iterdir())
        except OSError:
            continue
        for entry in entries:
            name = entry.name
            plugin = len(name) > len(PLUGIN_PREFIX) and name.startswith(PLUGIN_PREFIX)
            if plugin and entry.is_file() and os.access(entry, os.X_OK):
                names.add(name.removeprefix(PLUGIN_PREFIX))
    return sorted(names)


@plugin_app.command("list")
def plugin_list() -> None:
    """List the lakectl plugins found on PATH."""
    found = plugins(os.environ.get("PATH", ""))
    if not found:
        out().line("No lakectl plugins found in your PATH.")
        return
    out().line("Available plugins:\n" + "\n".join(f"  {name}" for name in found))


@usage_app.command("summary")
def usage_summary(json_out: JsonOpt = False) -> None:
    """The server's usage report: requests per month."""
    summary = api().get("read the usage report summary", "/usage-report/summary") or {}
    if want_json(json_out):
        out().json(summary)
        return
    out().line(f"Usage report for installation ID: {summary.get('installation_id', '')}")
    out().table(
        ["Year", "Month", "Usage"],  # lakectl's headers
        [(r.get("year"), r.get("month"), r.get("count")) for r in summary.get("reports") or []],
    )


def cat_hook_output(
    repository: Annotated[str, typer.Argument(help="lakefs://REPOSITORY")],
    run_id: Annotated[str, typer.Argument(help="the action run id")],
    hook_run_id: Annotated[str, typer.Argument(help="the hook run id ('lakelet actions runs describe' lists them)")],
) -> None:
    uri = parse(repository)
    out().line(f"Repository: {uri}")
    _, text = api().raw(
        f"read the output of hook run {hook_run_id}",
        "GET",
        f"/repositories/{q(uri.repository)}/actions/runs/{q(run_id)}/hooks/{q(hook_run_id)}/output",
        text=True,
    )
    out().line(str(text))
