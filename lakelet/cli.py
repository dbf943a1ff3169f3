"""The one ``lakelet`` command tree: lakectl's commands (lakelet/commands/, HTTP only) with the local stack's
commands (lakelet/stack/cli.py) hung on it. The console script and ``python -m lakelet`` enter here.

A help screen typer printed before is printed again from lakelet/help_cache.py, before typer is imported.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING

from lakelet import help_cache

if TYPE_CHECKING:
    import typer


# The root's own options that take a value (lakelet/commands/main.py, root): the word after them is no command.
_ROOT_VALUE_OPTIONS = frozenset({"--config", "-c", "--endpoint-url", "--access-key-id", "--secret-access-key"})
_ROOT_FLAGS = frozenset({"--json", "--no-color", "--debug"})


def command_name(args: Sequence[str]) -> str | None:
    """The top-level command ``args`` run, when the root's options before it are all known; else None."""
    words = iter(args)
    for word in words:
        if word in _ROOT_VALUE_OPTIONS:
            next(words, None)
        elif not word.startswith("-"):
            return word
        elif not (word in _ROOT_FLAGS or _joined_value(word)):
            return None  # help, completion, "--" or an unknown option: the whole tree answers
    return None


def _joined_value(word: str) -> bool:
    """``--config=FILE`` or ``-cFILE``: a root option and its value in one word."""
    return word.partition("=")[0] in _ROOT_VALUE_OPTIONS if word.startswith("--") else word.startswith("-c")


# The command that runs the stack. Its old spelling, ``lakelet local`` with the stack's flags, still works for
# one release (rewritten by ``_deprecated_stack_spelling``); ``lakelet local`` alone is lakectl's group.
UP = "up"


@cache
def _stack_commands() -> None:
    # Once per process: the groups are module-level objects shared by every tree built here.
    from lakelet.commands import gc, localdir
    from lakelet.stack import cli as stack
    from lakelet.stack import export_cli

    localdir.app.command("export", help="Export the local stack's data directory (not lakectl's).")(
        export_cli.local_export
    )
    localdir.app.command("import", help="Import an export into a new data directory (not lakectl's).")(
        export_cli.local_import
    )
    gc.app.command("run")(stack.gc_run)


IMPORT_SOURCE = "import-source"


def _add_up(root: typer.Typer) -> None:
    from lakelet.stack import cli as stack
    from lakelet.stack import import_source

    root.command(UP)(stack.up)
    root.add_typer(
        import_source.app, name=IMPORT_SOURCE, help="fill the local stack's import source bucket (s3://lakelet-import)"
    )


def _deprecated_stack_spelling(args: list[str]) -> list[str]:
    """``lakelet local --flags`` (the stack's old spelling) is ``lakelet up --flags``, with a note on stderr.
    ``lakelet local`` alone, ``local --help`` and ``local SUBCOMMAND`` are lakectl's."""
    if command_name(args) != "local":
        return args
    at = args.index("local")
    rest = args[at + 1 :]
    if not rest or not rest[0].startswith("-") or rest[0] in help_cache.HELP_FLAGS:
        return args
    sys.stderr.write(
        "lakelet: starting the stack with 'lakelet local' is deprecated and will be removed in the next release: "
        "use 'lakelet up'\n"
    )
    return [*args[:at], UP, *rest]


@cache
def tree(name: str | None = None) -> typer.Typer:
    """The command tree: every command, or only the top-level command ``name`` and its subcommands (typer
    builds the whole tree it is given before running one command). Built once per process and name: main()
    may run many times in one."""
    from lakelet.commands.main import GROUPS, new_app, register

    if name in (UP, IMPORT_SOURCE):
        root = new_app()
        _add_up(root)
        return root
    if name not in GROUPS:
        name = None
    if name is None or GROUPS[name] in ("gc", "localdir"):
        _stack_commands()
    root = new_app()
    register(root, name)
    if name is None:
        _add_up(root)
    return root


def main(argv: list[str] | None = None) -> int:
    """Console entry point (``lakelet``) and ``python -m lakelet``: the exit code, never an exception."""
    args = _deprecated_stack_spelling(sys.argv[1:] if argv is None else list(argv))
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
        # Shell completion walks the whole tree, whatever the words typed so far.
        name = None if "_LAKELET_COMPLETE" in os.environ else command_name(args)
        tree(name)(args=args, prog_name="lakelet")
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    return 0
