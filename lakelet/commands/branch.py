"""``lakelet branch create|list|show|delete|reset|revert`` (and the top-level ``revert``)."""

from __future__ import annotations

from typing import Annotated

import typer

from lakelet.commands.common import AfterOpt, AmountOpt, JsonOpt, YesOpt, confirm
from lakelet.commands.context import api, emit, emit_table
from lakelet.commands.errors import CLIError
from lakelet.commands.output import out
from lakelet.commands.uri import parse

app = typer.Typer(no_args_is_help=True)
BranchArg = Annotated[str, typer.Argument(help="lakefs://REPOSITORY/BRANCH")]


@app.command("create")
def create(branch: BranchArg,
           source: Annotated[str, typer.Option("--source", "-s", help="lakefs://REPOSITORY/REF to branch from")],
           json_out: JsonOpt = False) -> None:
    """Create a branch from a ref."""
    import lakefs_sdk

    uri, src = parse(branch, ref=True), parse(source, ref=True)
    if src.repository != uri.repository:
        raise CLIError("source and branch are in different repositories", "branch from a ref of the same repository")
    a = api()
    commit_id = a.call(f"create branch {uri}", a.branches.create_branch, uri.repository,
                       lakefs_sdk.BranchCreation(name=uri.ref, source=src.ref))  # type: ignore[call-arg]
    emit({"id": uri.ref, "commit_id": commit_id, "source": src.ref}, f"created branch '{uri.ref}' {commit_id}",
         json_out)


@app.command("list")
def list_(repository: Annotated[str, typer.Argument(help="lakefs://REPOSITORY")], amount: AmountOpt = None,
          after: AfterOpt = "", prefix: Annotated[str, typer.Option(help="only branches with this prefix")] = "",
          json_out: JsonOpt = False) -> None:
    """List branches."""
    uri = parse(repository)
    a = api()
    refs = a.pages(f"list branches of {uri.repository}", a.branches.list_branches, uri.repository,
                   after=after, prefix=prefix or None, limit=amount)
    emit_table(refs, json_out, ["BRANCH", "COMMIT ID"], lambda r: (r.id, r.commit_id))


@app.command("show")
def show(branch: BranchArg, json_out: JsonOpt = False) -> None:
    """Show a branch's head commit."""
    uri = parse(branch, ref=True)
    a = api()
    ref = a.call(f"show branch {uri}", a.branches.get_branch, uri.repository, uri.ref)
    emit(ref, f"Commit ID: {ref.commit_id}", json_out)


@app.command("delete")
def delete(branch: BranchArg, yes: YesOpt = False) -> None:
    """Delete a branch (uncommitted changes on it are lost)."""
    uri = parse(branch, ref=True)
    confirm(f"delete branch {uri}", yes)
    a = api()
    a.call(f"delete branch {uri}", a.branches.delete_branch, uri.repository, uri.ref)
    out().line(f"Branch '{uri.ref}' deleted")


@app.command("reset")
def reset(branch: BranchArg,
          prefix: Annotated[str | None, typer.Option(help="reset only uncommitted changes under this prefix")] = None,
          object_path: Annotated[str | None, typer.Option("--object", help="reset only this object")] = None,
          yes: YesOpt = False) -> None:
    """Discard a branch's uncommitted changes (all, under a prefix, or of one object)."""
    import lakefs_sdk

    uri = parse(branch, ref=True)
    if prefix is not None and object_path is not None:
        raise typer.BadParameter("give --prefix or --object, not both")
    if prefix is not None:
        creation = lakefs_sdk.ResetCreation(type="common_prefix", path=prefix)
    elif object_path is not None:
        creation = lakefs_sdk.ResetCreation(type="object", path=object_path)
    else:
        creation = lakefs_sdk.ResetCreation(type="reset")
    confirm(f"discard uncommitted changes of {uri}", yes)
    a = api()
    a.call(f"reset {uri}", a.branches.reset_branch, uri.repository, uri.ref, creation)
    out().line(f"Branch '{uri.ref}' reset")


@app.command("revert")
def revert(branch: BranchArg,
           commits: Annotated[list[str], typer.Argument(help="the commits (refs) to revert, newest first")],
           parent_number: Annotated[int, typer.Option("--parent-number", "-m", min=0,
                                                      help="the parent to revert to, for a merge commit")] = 0,
           allow_empty: Annotated[bool, typer.Option(help="allow a revert that changes nothing")] = False,
           yes: YesOpt = False, json_out: JsonOpt = False) -> None:
    """Revert commits: each becomes a new commit on the branch that undoes it."""
    import lakefs_sdk

    uri = parse(branch, ref=True)
    confirm(f"revert {len(commits)} commit(s) on {uri}", yes)
    a = api()
    results = []
    for ref in commits:
        ref_id = parse(ref, ref=True).ref if ref.startswith("lakefs://") else ref
        a.call(f"revert {ref_id} on {uri}", a.branches.revert_branch, uri.repository, uri.ref,
               lakefs_sdk.RevertCreation(ref=ref_id, parent_number=parent_number, allow_empty=allow_empty))
        results.append(ref_id)
    head = a.call(f"show branch {uri}", a.branches.get_branch, uri.repository, uri.ref)
    emit({"reverted": results, "commit_id": head.commit_id},
         f"Branch: {uri}\nreverted {', '.join(results)}; head is now {head.commit_id}", json_out)
