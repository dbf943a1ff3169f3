"""``lakelet diff``: between two refs (three-dot by default, ``--two-way``), or a branch's uncommitted changes."""

from typing import Annotated, Any

import typer

from lakelet.commands.api import q
from lakelet.commands.common import JsonOpt
from lakelet.commands.context import api, want_json
from lakelet.commands.errors import CLIError
from lakelet.commands.output import jsonable, out
from lakelet.commands.uri import parse

SIGNS = {
    "added": ("+", "green"),
    "removed": ("-", "red"),
    "changed": ("~", "yellow"),
    "conflict": ("!", "magenta"),
    "prefix_changed": ("~", "yellow"),
}


def register(app: typer.Typer) -> None:
    app.command(
        "diff",
        help="Show changes: 'diff lakefs://REPO/LEFT lakefs://REPO/RIGHT' (what RIGHT changed "
        "since the merge base; --two-way compares the two directly) or 'diff lakefs://REPO/BRANCH' "
        "(its uncommitted changes).",
    )(diff)


def diff(
    left: Annotated[str, typer.Argument(help="lakefs://REPOSITORY/REF (a branch alone: its uncommitted changes)")],
    right: Annotated[str | None, typer.Argument(help="lakefs://REPOSITORY/REF")] = None,
    two_way: Annotated[bool, typer.Option("--two-way", help="compare the two refs directly (two-dot)")] = False,
    prefix: Annotated[str, typer.Option(help="only paths under this prefix")] = "",
    amount: Annotated[int | None, typer.Option(min=1, help="how many changes to show (default: all)")] = None,
    json_out: JsonOpt = False,
) -> None:
    a = api()
    luri = parse(left, ref=True)
    if right is None:
        changes = list(
            a.pages(
                f"diff uncommitted changes of {luri}",
                f"/repositories/{q(luri.repository)}/branches/{q(luri.ref)}/diff",
                {"prefix": prefix or None},
                limit=amount,
            )
        )
        title = f"uncommitted changes on {luri}"
    else:
        ruri = parse(right, ref=True)
        if ruri.repository != luri.repository:
            raise CLIError("the two refs are in different repositories", "diff refs of one repository")
        changes = list(
            a.pages(
                f"diff {luri} {ruri}",
                diff_path(luri.repository, luri.ref, ruri.ref),
                {"type": "two_dot" if two_way else "three_dot", "prefix": prefix or None},
                limit=amount,
            )
        )
        title = f"{luri.ref}{'..' if two_way else '...'}{ruri.ref}"
    print_changes([jsonable(c) for c in changes], title, json_out)


def diff_path(repository: str, left: str, right: str) -> str:
    return f"/repositories/{q(repository)}/refs/{q(left)}/diff/{q(right)}"


def print_changes(changes: list[dict[str, Any]], title: str, json_out: bool) -> None:
    if want_json(json_out):
        out().json(changes)
        return
    if not changes:
        out().info(f"no changes ({title})")
        return
    for c in changes:
        sign, color = SIGNS.get(c.get("type", ""), ("?", "white"))
        out().console.print(
            f"[{color}]{sign} {c.get('type', ''):8} {c.get('path', '')}[/]", highlight=False, markup=True
        ) if out().interactive else out().line(f"{sign} {c.get('type', ''):8} {c.get('path', '')}")
    out().info(f"{len(changes)} change(s) ({title})")
