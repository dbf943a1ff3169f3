"""The root of the ``lakelet`` typer tree and lakectl's everyday commands on the official lakeFS clients.

Everything here talks HTTP to a lakeFS server. The stack's commands (``lakelet local`` with no subcommand or with
flags, ``lakelet local export|import``, ``lakelet gc run``) are added to this same tree by lakelet/cli.py, the
console entry point.
"""

from __future__ import annotations

import sys
import traceback
from pathlib import Path
from typing import Annotated, Any

import typer
from typer._click.core import Context  # typer 0.29 vendors click (pinned)
from typer.core import TyperGroup

from lakelet.commands import fastparams
from lakelet.commands.context import Session, session, set_session
from lakelet.commands.errors import EXIT_INTERRUPTED, CLIError, MergeConflict
from lakelet.commands.output import Output, out, set_output

fastparams.install()


class RootGroup(TyperGroup):
    """Turns every CLIError into one line on stderr and its exit code; --debug adds the traceback."""

    def invoke(self, ctx: Context) -> Any:
        try:
            return super().invoke(ctx)
        except CLIError as e:
            if isinstance(e, MergeConflict):
                from lakelet.commands.merge import print_conflicts

                print_conflicts(e)
            _fail(e.line(), e.exit_code)
        except KeyboardInterrupt:
            _fail("interrupted: what completed is kept; run the command again to resume", EXIT_INTERRUPTED)
        except ValueError as e:  # names and values checked before sending anything (lakeFS's patterns)
            first = str(e).strip().splitlines()
            _fail(
                f"invalid value: {' '.join(first[-2:]) if len(first) > 1 else first[0] if first else e!r}: "
                "check the names in the command (lakeFS naming rules)",
                1,
            )


def _fail(line: str, code: int) -> None:
    if session().debug:
        traceback.print_exc(file=sys.stderr)
    out().error(f"error: {line}")
    raise typer.Exit(code) from None


app = typer.Typer(
    cls=RootGroup,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    help="Lakelet: git-like version control for a data lake. lakectl's commands, and the local stack.",
    context_settings={"help_option_names": ["-h", "--help"]},
)


@app.callback()
def root(
    ctx: typer.Context,
    config: Annotated[
        Path | None, typer.Option("--config", "-c", help="config file (default ~/.lakectl.yaml)", dir_okay=False)
    ] = None,
    endpoint_url: Annotated[str | None, typer.Option(help="lakeFS server URL (over file and environment)")] = None,
    access_key_id: Annotated[str | None, typer.Option(help="access key id (over file and environment)")] = None,
    secret_access_key: Annotated[str | None, typer.Option(help="secret access key (over file and environment)")] = None,
    json_output: Annotated[bool, typer.Option("--json", help="print data as JSON")] = False,
    no_color: Annotated[bool, typer.Option("--no-color", help="no colours")] = False,
    debug: Annotated[bool, typer.Option("--debug", help="show tracebacks")] = False,
) -> None:
    set_session(Session(config, endpoint_url, access_key_id, secret_access_key, json_output, debug))
    set_output(Output(no_color=no_color))


def _register() -> None:
    from lakelet.commands import (
        actions,
        auth,
        branch,
        commit,
        diff,
        doctor,
        fs,
        gc,
        imports,
        localdir,
        merge,
        repo,
        tag,
    )

    app.add_typer(repo.app, name="repo", help="create, list and delete repositories")
    app.add_typer(branch.app, name="branch", help="create, list, show, delete, reset and revert branches")
    app.add_typer(tag.app, name="tag", help="create, list, show and delete tags")
    commit.register(app)
    diff.register(app)
    merge.register(app)
    imports.register(app)
    app.add_typer(fs.app, name="fs", help="objects: ls, cat, stat, rm, presign, upload, download, update-metadata")
    app.add_typer(
        localdir.app,
        name="local",
        help="run the local stack (no subcommand; "
        "'lakelet local --help' shows its flags), export or import its data directory, and lakectl's "
        "local directories in step with a branch path (clone|status|pull|commit|checkout)",
    )
    app.add_typer(gc.app, name="gc", help="garbage collection rules, and 'gc run' on the local stack")
    app.add_typer(actions.app, name="actions", help="action files (validate) and the runs of their hooks")
    app.add_typer(auth.app, name="auth", help="users, groups, policies and credentials")
    doctor.register(app)


_register()
