"""``lakelet branch-protect add|list|delete``: a repository's branch protection rules, as lakectl's.

The per-rule routes (POST|DELETE /repositories/{repository}/branch_protection) edit the list on the server with
a compare-and-swap of their own, so two people adding rules at once both keep theirs.
"""

from typing import Annotated

import typer

from lakelet.commands.api import q
from lakelet.commands.common import JsonOpt
from lakelet.commands.context import api, emit_table
from lakelet.commands.errors import CLIError
from lakelet.commands.uri import parse

app = typer.Typer(no_args_is_help=True)
RepoArg = Annotated[str, typer.Argument(help="lakefs://REPOSITORY")]
PatternArg = Annotated[str, typer.Argument(help="a branch name pattern, e.g. 'main' or 'stable_*'")]


def _rules_path(repository: str) -> str:
    return f"/repositories/{q(repository)}/settings/branch_protection"


def _patterns(repository: str) -> list[str]:
    rules = api().get(f"list branch protection rules of {repository}", _rules_path(repository)) or []
    return [str(rule.get("pattern", "")) for rule in rules]


@app.command("list")
def list_(repository: RepoArg, json_out: JsonOpt = False) -> None:
    """List all branch protection rules."""
    uri = parse(repository)
    emit_table(
        [{"pattern": p} for p in _patterns(uri.repository)],
        json_out,
        ["Branch Name Pattern"],
        lambda r: (r["pattern"],),
    )


@app.command("add")
def add(repository: RepoArg, pattern: PatternArg) -> None:
    """Add a branch protection rule for a branch name pattern."""
    uri = parse(repository)
    api().raw(
        f"add branch protection rule {pattern!r} to {uri.repository}",
        "POST",
        f"/repositories/{q(uri.repository)}/branch_protection",
        body={"pattern": pattern},
    )


@app.command("delete")
def delete(repository: RepoArg, pattern: PatternArg) -> None:
    """Delete a branch protection rule."""
    uri = parse(repository)
    if pattern not in _patterns(uri.repository):
        raise CLIError("Branch protection rule not found", f"'lakelet branch-protect list {uri}' shows the rules")
    api().raw(
        f"delete branch protection rule {pattern!r} of {uri.repository}",
        "DELETE",
        f"/repositories/{q(uri.repository)}/branch_protection",
        body={"pattern": pattern},
    )
