"""``lakelet branch create|list|show|delete|reset|revert`` (and the top-level ``revert``)."""

from typing import Annotated

import typer

from lakelet.commands.api import q
from lakelet.commands.common import AfterOpt, AmountOpt, JsonOpt, YesOpt, confirm
from lakelet.commands.context import api, emit, emit_table
from lakelet.commands.errors import CLIError
from lakelet.commands.output import out
from lakelet.commands.uri import URI, parse

app = typer.Typer(no_args_is_help=True)
BranchArg = Annotated[str, typer.Argument(help="lakefs://REPOSITORY/BRANCH")]


@app.command("create")
def create(
    branch: BranchArg,
    source: Annotated[str, typer.Option("--source", "-s", help="lakefs://REPOSITORY/REF to branch from")],
    json_out: JsonOpt = False,
) -> None:
    """Create a branch from a ref."""
    uri, src = parse(branch, ref=True), parse(source, ref=True)
    if src.repository != uri.repository:
        raise CLIError("source and branch are in different repositories", "branch from a ref of the same repository")
    a = api()
    # lakeFS answers the new branch's commit id as the bare text of the body (text/html).
    _, commit_id = a.raw(
        f"create branch {uri}",
        "POST",
        f"/repositories/{q(uri.repository)}/branches",
        None,
        {"name": uri.ref, "source": src.ref},
        text=True,
    )
    emit(
        {"id": uri.ref, "commit_id": commit_id, "source": src.ref},
        f"Source ref: {src}\ncreated branch '{uri.ref}' {commit_id}",
        json_out,
    )


@app.command("list")
def list_(
    repository: Annotated[str, typer.Argument(help="lakefs://REPOSITORY")],
    amount: AmountOpt = None,
    after: AfterOpt = "",
    prefix: Annotated[str, typer.Option(help="only branches with this prefix")] = "",
    json_out: JsonOpt = False,
) -> None:
    """List branches."""
    uri = parse(repository)
    a = api()
    refs = a.pages(
        f"list branches of {uri.repository}",
        f"/repositories/{q(uri.repository)}/branches",
        {"prefix": prefix or None},
        after=after,
        limit=amount,
    )
    emit_table(refs, json_out, ["BRANCH", "COMMIT ID"], lambda r: (r["id"], r["commit_id"]))


@app.command("show")
def show(branch: BranchArg, json_out: JsonOpt = False) -> None:
    """Show a branch's head commit."""
    uri = parse(branch, ref=True)
    a = api()
    ref = a.get(f"show branch {uri}", branch_path(uri))
    emit(ref, f"Branch: {uri}\nCommit ID: {ref['commit_id']}", json_out)


@app.command("delete")
def delete(branch: BranchArg, yes: YesOpt = False) -> None:
    """Delete a branch (uncommitted changes on it are lost)."""
    uri = parse(branch, ref=True)
    confirm(f"delete branch {uri}", yes)
    a = api()
    a.raw(f"delete branch {uri}", "DELETE", branch_path(uri))
    out().line(f"Branch '{uri.ref}' deleted")


@app.command("reset")
def reset(
    branch: BranchArg,
    prefix: Annotated[str | None, typer.Option(help="reset only uncommitted changes under this prefix")] = None,
    object_path: Annotated[str | None, typer.Option("--object", help="reset only this object")] = None,
    yes: YesOpt = False,
) -> None:
    """Discard a branch's uncommitted changes (all, under a prefix, or of one object)."""
    uri = parse(branch, ref=True)
    if prefix is not None and object_path is not None:
        raise typer.BadParameter("give --prefix or --object, not both")
    if prefix is not None:
        creation = {"type": "common_prefix", "path": prefix}
    elif object_path is not None:
        creation = {"type": "object", "path": object_path}
    else:
        creation = {"type": "reset"}
    confirm(f"discard uncommitted changes of {uri}", yes)
    a = api()
    a.raw(f"reset {uri}", "PUT", branch_path(uri), None, creation)
    out().line(f"Branch '{uri.ref}' reset")


@app.command("revert")
def revert(
    branch: BranchArg,
    commits: Annotated[list[str], typer.Argument(help="the commits (refs) to revert, newest first")],
    parent_number: Annotated[
        int, typer.Option("--parent-number", "-m", min=0, help="the parent to revert to, for a merge commit")
    ] = 0,
    allow_empty: Annotated[bool, typer.Option(help="allow a revert that changes nothing")] = False,
    yes: YesOpt = False,
    json_out: JsonOpt = False,
) -> None:
    """Revert commits: each becomes a new commit on the branch that undoes it."""
    uri = parse(branch, ref=True)
    confirm(f"revert {len(commits)} commit(s) on {uri}", yes)
    a = api()
    results = []
    for ref in commits:
        ref_id = parse(ref, ref=True).ref if ref.startswith("lakefs://") else ref
        a.raw(
            f"revert {ref_id} on {uri}",
            "POST",
            branch_path(uri) + "/revert",
            None,
            {"ref": ref_id, "parent_number": parent_number, "allow_empty": allow_empty},
        )
        results.append(ref_id)
    head = a.get(f"show branch {uri}", branch_path(uri))
    emit(
        {"reverted": results, "commit_id": head["commit_id"]},
        f"Branch: {uri}\nreverted {', '.join(results)}; head is now {head['commit_id']}",
        json_out,
    )


def branch_path(uri: URI) -> str:
    return f"/repositories/{q(uri.repository)}/branches/{q(uri.ref)}"
