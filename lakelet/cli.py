"""The one ``lakelet`` command tree: lakectl's commands (lakelet/commands/, HTTP only) with the local stack's
commands (lakelet/stack/cli.py) hung on it. The console script and ``python -m lakelet`` enter here."""

from __future__ import annotations

from lakelet.commands import gc, localdir
from lakelet.commands.main import app
from lakelet.stack import cli as stack

localdir.app.callback(invoke_without_command=True)(stack.local)
localdir.app.command("export")(stack.local_export)
localdir.app.command("import")(stack.local_import)
gc.app.command("run")(stack.gc_run)


def main(argv: list[str] | None = None) -> int:
    """Console entry point (``lakelet``) and ``python -m lakelet``: the exit code, never an exception."""
    try:
        app(args=argv, prog_name="lakelet")
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    return 0
