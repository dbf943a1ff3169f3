"""The one ``lakelet`` command tree: lakectl's commands (lakelet/commands/, HTTP only) with the local stack's
commands (lakelet/stack/cli.py) hung on it. The console script and ``python -m lakelet`` enter here.

A help screen typer printed before is printed again from lakelet/help_cache.py, before typer is imported.
"""

from __future__ import annotations

import sys
from functools import cache
from typing import TYPE_CHECKING

from lakelet import help_cache

if TYPE_CHECKING:
    import typer


@cache
def tree() -> typer.Typer:
    """The whole command tree (built once per process: main() may run many times in one)."""
    from lakelet.commands import gc, localdir
    from lakelet.commands.main import app
    from lakelet.stack import cli as stack

    localdir.app.callback(invoke_without_command=True)(stack.local)
    localdir.app.command("export")(stack.local_export)
    localdir.app.command("import")(stack.local_import)
    gc.app.command("run")(stack.gc_run)
    return app


def main(argv: list[str] | None = None) -> int:
    """Console entry point (``lakelet``) and ``python -m lakelet``: the exit code, never an exception."""
    args = sys.argv[1:] if argv is None else list(argv)
    screen = help_cache.lookup(args)
    if screen is not None:
        sys.stdout.write(screen)
        return 0
    with help_cache.recording(args) as exit_codes:
        code = _run(args)
        exit_codes.append(code)
    return code


def _run(args: list[str]) -> int:
    try:
        tree()(args=args, prog_name="lakelet")
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    return 0
