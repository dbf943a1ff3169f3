"""``lakelet repo create-bare``, as lakectl's (cmd/lakectl/cmd/repo_create_bare.go): a repository with no initial
branch or commit, the target of ``refs-restore``."""

from typing import Annotated

import typer

from lakelet.commands.context import api
from lakelet.commands.output import out
from lakelet.commands.repo import app, check_name, check_namespace
from lakelet.commands.uri import parse


@app.command("create-bare")
def create_bare(
    repository: Annotated[str, typer.Argument(help="lakefs://REPOSITORY")],
    storage_namespace: Annotated[str, typer.Argument(help="where its data lives, e.g. s3://bucket/prefix")],
    default_branch: Annotated[
        str,
        typer.Option("--default-branch", "-d", help="the default branch name of this repository (will not be created)"),
    ] = "main",
) -> None:
    """Create a new repository with no initial branch or commit."""
    uri = parse(repository)
    check_name(uri.repository)
    check_namespace(storage_namespace)
    out().line(f"Repository: {uri}")
    _, created = api().raw(
        f"create bare repository {uri.repository}",
        "POST",
        "/repositories",
        {"bare": "true"},
        {"name": uri.repository, "storage_namespace": storage_namespace, "default_branch": default_branch},
        ok=(201,),
    )
    out().line(
        f"Repository '{created['id']}' created:\nstorage namespace: {created['storage_namespace']}\n"
        f"default branch: {created['default_branch']}\ntimestamp: {created['creation_date']}"
    )
