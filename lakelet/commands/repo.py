"""``lakelet repo create|list|delete``."""

from __future__ import annotations

from typing import Annotated

import typer

from lakelet.commands.common import AfterOpt, AmountOpt, JsonOpt, YesOpt, confirm
from lakelet.commands.context import api, emit, emit_table
from lakelet.commands.output import out, timestamp
from lakelet.commands.uri import parse

app = typer.Typer(no_args_is_help=True)


@app.command("create")
def create(
    repository: Annotated[str, typer.Argument(help="lakefs://REPOSITORY")],
    storage_namespace: Annotated[str | None, typer.Argument(
        help="where its data lives, e.g. s3://bucket/prefix (default: the server's namespace prefix + name)")] = None,
    default_branch: Annotated[str, typer.Option("--default-branch", "-d", help="the default branch")] = "main",
    sample_data: Annotated[bool, typer.Option("--sample-data", help="create it with sample data")] = False,
    json_out: JsonOpt = False,
) -> None:
    """Create a repository."""
    import lakefs_sdk

    uri = parse(repository)
    a = api()
    if storage_namespace is None:
        storage = a.call("read the server's storage config", a.config.get_config).storage_config
        prefix = getattr(storage, "default_namespace_prefix", None)
        if not prefix:
            from lakelet.commands.errors import CLIError

            raise CLIError("the server offers no default namespace prefix", "give STORAGE_NAMESPACE, e.g. s3://bucket/repo")
        # Servers configured with a trailing "/" report one (older Lakelet servers did): never send "//".
        storage_namespace = prefix.rstrip("/") + "/" + uri.repository
    created = a.call(f"create repository {uri.repository}", a.repositories.create_repository,
                     lakefs_sdk.RepositoryCreation(  # type: ignore[call-arg]  # optional fields typed as required
                         name=uri.repository, storage_namespace=storage_namespace, default_branch=default_branch,
                         sample_data=sample_data))
    emit(created, f"Repository: {uri}\nRepository '{created.id}' created:\n"
                  f"storage namespace: {created.storage_namespace}\ndefault branch: {created.default_branch}\n"
                  f"timestamp: {created.creation_date}", json_out)


@app.command("list")
def list_(amount: AmountOpt = None, after: AfterOpt = "", json_out: JsonOpt = False) -> None:
    """List repositories."""
    a = api()
    repos = a.pages("list repositories", a.repositories.list_repositories, after=after, limit=amount)
    emit_table(repos, json_out, ["REPOSITORY", "CREATION DATE", "DEFAULT REF NAME", "STORAGE NAMESPACE"],
               lambda r: (r.id, timestamp(r.creation_date), r.default_branch, r.storage_namespace))


@app.command("delete")
def delete(repository: Annotated[str, typer.Argument(help="lakefs://REPOSITORY")], yes: YesOpt = False) -> None:
    """Delete a repository (its data stays in the storage namespace)."""
    uri = parse(repository)
    confirm(f"delete repository {uri.repository}", yes)
    a = api()
    a.call(f"delete repository {uri.repository}", a.repositories.delete_repository, uri.repository)
    out().line(f"Repository '{uri.repository}' deleted")
