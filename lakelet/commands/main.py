"""The root of the ``lakelet`` typer tree and lakectl's everyday commands on the official lakeFS clients.

Everything here talks HTTP to a lakeFS server. The stack's commands (``lakelet up``, ``lakelet local
export|import``, ``lakelet gc run``) are added to this same tree by lakelet/cli.py, the
console entry point.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from lakelet.commands import fastparams
from lakelet.commands.context import Session, session, set_session
from lakelet.commands.errors import EXIT_INTERRUPTED, CLIError, MergeConflict
from lakelet.commands.output import Output, out, set_output

fastparams.install()


class RootGroup(TyperGroup):
    """Turns every CLIError into one line on stderr and its exit code; --debug adds the traceback."""

    def invoke(self, ctx: Any) -> Any:  # click's Context: typer vendors click privately
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
        import traceback

        traceback.print_exc(file=sys.stderr)
    out().error(f"error: {line}")
    raise typer.Exit(code) from None


def new_app() -> typer.Typer:
    """An empty root (its global flags, no commands): ``register`` hangs the commands on it."""
    root_app = typer.Typer(
        cls=RootGroup,
        no_args_is_help=True,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
        help="Lakelet: git-like version control for a data lake. lakectl's commands, and the local stack.",
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    root_app.callback()(root)
    return root_app


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


# The top-level names and the module that hangs each on the root: ``register(app, name)`` imports that one module,
# so that a command imports and builds only its own group (typer inspects every command's signature when it
# builds a tree: with the other groups' imports, a quarter of ``lakelet repo list``'s CPU time). A name missing
# here still works, through the whole tree (lakelet/cli.py). The order is the help screen's.
GROUPS: dict[str, str] = {
    "repo": "repo",
    "branch": "branch",
    "tag": "tag",
    "commit": "commit",
    "log": "commit",
    "show": "commit",
    "diff": "diff",
    "merge": "merge",
    "cherry-pick": "merge",
    "revert": "merge",
    "find-merge-base": "merge",
    "annotate": "annotate",
    "blame": "annotate",
    "import": "imports",
    "fs": "fs",
    "local": "localdir",
    "gc": "gc",
    "actions": "actions",
    "cat-hook-output": "misc",
    "auth": "auth",
    "pr": "pr",
    "refs-dump": "refs",
    "refs-restore": "refs",
    "config": "doctor",
    "doctor": "doctor",
    "branch-protect": "protect",
    "identity": "misc",
    "completion": "misc",
    "plugin": "misc",
    "usage": "misc",
}
# The modules that hold one group (typer app) each: its top-level name and help. The others register their
# commands themselves.
_GROUP_OF_MODULE = {
    "repo": ("repo", "create, list and delete repositories"),
    "branch": ("branch", "create, list, show, delete, reset and revert branches"),
    "tag": ("tag", "create, list, show and delete tags"),
    "protect": ("branch-protect", "branch protection rules: add, list, delete"),
    "fs": ("fs", "objects: ls, cat, stat, rm, presign, upload, download, update-metadata"),
    "localdir": (
        "local",
        "lakectl's local directories in step with a branch path (init|clone|list|status|pull|commit|checkout), "
        "and export|import of the local stack's data directory (the stack itself: 'lakelet up')",
    ),
    "gc": ("gc", "garbage collection rules, and 'gc run' on the local stack"),
    "actions": ("actions", "action files (validate) and the runs of their hooks"),
    "auth": ("auth", "users, groups, policies and credentials"),
    "pr": ("pr", "pull requests: list, create, show, merge, close, reopen"),
}


def register(root_app: typer.Typer, name: str | None = None) -> None:
    """Hang every command on ``root_app``, or only the module that holds the top-level command ``name``."""
    modules = [GROUPS[name]] if name is not None else list(dict.fromkeys(GROUPS.values()))
    for module_name in modules:
        # __import__, not importlib's: python -X importtime (tests/cli/test_startup.py) sees only the former.
        module = __import__(f"lakelet.commands.{module_name}", fromlist=["app"])
        if module_name in _GROUP_OF_MODULE:
            group, help_text = _GROUP_OF_MODULE[module_name]
            root_app.add_typer(module.app, name=group, help=help_text)
        else:
            module.register(root_app)


def full_app() -> typer.Typer:
    """The root with every command (the console entry adds the stack's: lakelet/cli.py)."""
    root_app = new_app()
    register(root_app)
    return root_app


def __getattr__(name: str) -> typer.Typer:
    # ``app``, the whole tree, is built on first use: the console entry builds only the group a command needs.
    if name == "app":
        globals()["app"] = built = full_app()
        return built
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
