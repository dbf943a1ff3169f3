"""Options and small helpers shared by the command modules."""

from typing import Annotated

import typer

from lakelet.commands.errors import CLIError

JsonOpt = Annotated[bool, typer.Option("--json", help="print the result as JSON")]
AmountOpt = Annotated[int | None, typer.Option("--amount", help="how many to show (default: all)", min=1)]
AfterOpt = Annotated[str, typer.Option("--after", help="show results after this value (pagination)")]
PrefixOpt = Annotated[str, typer.Option("--prefix", help="only results whose id starts with this prefix")]
YesOpt = Annotated[bool, typer.Option("--yes", "-y", help="do not ask for confirmation")]


def key_values(pairs: list[str] | None, flag: str) -> dict[str, str]:
    """``k=v`` flags as a dict; a missing '=' is a usage error naming the flag."""
    result: dict[str, str] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise typer.BadParameter(f"{pair!r} is not KEY=VALUE", param_hint=flag)
        result[key] = value
    return result


def confirm(what: str, yes: bool) -> None:
    """Ask before destroying something, unless --yes; without a terminal to ask, refuse."""
    if yes:
        return
    import sys

    if not sys.stdin.isatty():
        raise CLIError(f"refusing to {what} without confirmation", "pass --yes")
    if not typer.confirm(f"Are you sure you want to {what}?"):
        raise CLIError(f"did not {what}", "aborted by the user")
