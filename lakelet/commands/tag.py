"""``lakelet tag create|list|show|delete``."""

from typing import Annotated

import typer

from lakelet.commands.api import q
from lakelet.commands.common import AfterOpt, AmountOpt, JsonOpt, PrefixOpt, YesOpt, confirm
from lakelet.commands.context import api, emit, emit_table
from lakelet.commands.errors import CLIError
from lakelet.commands.output import out
from lakelet.commands.uri import parse

app = typer.Typer(no_args_is_help=True)
TagArg = Annotated[str, typer.Argument(help="lakefs://REPOSITORY/TAG")]


@app.command("create")
def create(
    tag: TagArg,
    ref: Annotated[str, typer.Argument(help="lakefs://REPOSITORY/REF to tag")],
    force: Annotated[bool, typer.Option("--force", "-f", help="replace an existing tag")] = False,
    json_out: JsonOpt = False,
) -> None:
    """Create a tag on a ref."""
    uri, target = parse(tag, ref=True), parse(ref, ref=True)
    if target.repository != uri.repository:
        raise CLIError("tag and ref are in different repositories", "tag a ref of the same repository")
    a = api()
    tags = f"/repositories/{q(uri.repository)}/tags"
    if force:
        # As lakectl: the target must resolve before the old tag goes (lakeFS's createTag never replaces a tag;
        # its force only lifts a read-only repository's refusal), then the tag is created anew.
        a.raw(f"resolve {target}", "GET", f"/repositories/{q(uri.repository)}/commits/{q(target.ref)}")
        a.raw(f"delete tag {uri}", "DELETE", f"{tags}/{q(uri.ref)}", ok=(204, 404))
    _, created = a.raw(f"create tag {uri}", "POST", tags, None, {"id": uri.ref, "ref": target.ref})
    emit(created, f"Created tag '{created['id']}' ({created['commit_id']})", json_out)


@app.command("list")
def list_(
    repository: Annotated[str, typer.Argument(help="lakefs://REPOSITORY")],
    amount: AmountOpt = None,
    after: AfterOpt = "",
    prefix: PrefixOpt = "",
    json_out: JsonOpt = False,
) -> None:
    """List tags."""
    uri = parse(repository)
    a = api()
    tags = a.pages(
        f"list tags of {uri.repository}",
        f"/repositories/{q(uri.repository)}/tags",
        {"prefix": prefix or None},
        after=after,
        limit=amount,
    )
    emit_table(tags, json_out, ["TAG", "COMMIT ID"], lambda t: (t["id"], t["commit_id"]))


@app.command("show")
def show(tag: TagArg, json_out: JsonOpt = False) -> None:
    """Show the commit a tag points at."""
    uri = parse(tag, ref=True)
    a = api()
    ref = a.get(f"show tag {uri}", f"/repositories/{q(uri.repository)}/tags/{q(uri.ref)}")
    emit(ref, f"Tag: {ref['id']}\nCommit ID: {ref['commit_id']}", json_out)


@app.command("delete")
def delete(tag: TagArg, yes: YesOpt = False) -> None:
    """Delete a tag."""
    uri = parse(tag, ref=True)
    confirm(f"delete tag {uri}", yes)
    a = api()
    a.raw(f"delete tag {uri}", "DELETE", f"/repositories/{q(uri.repository)}/tags/{q(uri.ref)}")
    out().line(f"Tag '{uri.ref}' deleted")
