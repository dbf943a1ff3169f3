"""``lakelet repo create|list|delete|create-bare``; create-bare as lakectl's (cmd/lakectl/cmd/repo_create_bare.go):
a repository with no initial branch or commit, the target of ``refs-restore``."""

from typing import Annotated

import typer

from lakelet.commands.api import q
from lakelet.commands.common import AfterOpt, AmountOpt, JsonOpt, PrefixOpt, YesOpt, confirm
from lakelet.commands.context import api, emit, emit_table
from lakelet.commands.output import out, timestamp
from lakelet.commands.uri import parse

app = typer.Typer(no_args_is_help=True)


@app.command("create")
def create(
    repository: Annotated[str, typer.Argument(help="lakefs://REPOSITORY")],
    storage_namespace: Annotated[
        str | None,
        typer.Argument(
            help="where its data lives, e.g. s3://bucket/prefix (default: the server's namespace prefix + name)"
        ),
    ] = None,
    default_branch: Annotated[str, typer.Option("--default-branch", "-d", help="the default branch")] = "main",
    sample_data: Annotated[bool, typer.Option("--sample-data", help="create it with sample data")] = False,
    json_out: JsonOpt = False,
) -> None:
    """Create a repository."""
    uri = parse(repository)
    check_name(uri.repository)
    a = api()
    if storage_namespace is None:
        storage = (a.get("read the server's storage config", "/config") or {}).get("storage_config") or {}
        prefix = storage.get("default_namespace_prefix")
        if not prefix:
            from lakelet.commands.errors import CLIError

            raise CLIError(
                "the server offers no default namespace prefix", "give STORAGE_NAMESPACE, e.g. s3://bucket/repo"
            )
        # Servers configured with a trailing "/" report one (older Lakelet servers did): never send "//".
        storage_namespace = prefix.rstrip("/") + "/" + uri.repository
    check_namespace(storage_namespace)
    _, created = a.raw(
        f"create repository {uri.repository}",
        "POST",
        "/repositories",
        None,
        {
            "name": uri.repository,
            "storage_namespace": storage_namespace,
            "default_branch": default_branch,
            "sample_data": sample_data,
        },
    )
    emit(
        created,
        f"Repository: {uri}\nRepository '{created['id']}' created:\n"
        f"storage namespace: {created['storage_namespace']}\ndefault branch: {created['default_branch']}\n"
        f"timestamp: {created['creation_date']}",
        json_out,
    )


# lakeFS's own rules (its OpenAPI patterns), checked before anything is sent as the SDK's models did: a
# ValueError is the CLI's "invalid value" (lakelet/commands/main.py).
REPOSITORY_NAME = r"^[a-z0-9][a-z0-9-]{2,62}$"
STORAGE_NAMESPACE = r"^(s3|gs|https?|mem|local|transient)://.*$"


def check_name(name: str) -> None:
    import re

    if not re.match(REPOSITORY_NAME, name):
        raise ValueError(f"repository name {name!r} must match /{REPOSITORY_NAME}/")


def check_namespace(namespace: str) -> None:
    import re

    if not re.match(STORAGE_NAMESPACE, namespace):
        raise ValueError(f"storage namespace {namespace!r} must match /{STORAGE_NAMESPACE}/")


@app.command("list")
def list_(amount: AmountOpt = None, after: AfterOpt = "", prefix: PrefixOpt = "", json_out: JsonOpt = False) -> None:
    """List repositories."""
    a = api()
    repos = a.pages("list repositories", "/repositories", {"prefix": prefix or None}, after=after, limit=amount)
    emit_table(
        repos,
        json_out,
        ["REPOSITORY", "CREATION DATE", "DEFAULT REF NAME", "STORAGE NAMESPACE"],
        lambda r: (r["id"], timestamp(r.get("creation_date")), r.get("default_branch"), r.get("storage_namespace")),
    )


@app.command("delete")
def delete(repository: Annotated[str, typer.Argument(help="lakefs://REPOSITORY")], yes: YesOpt = False) -> None:
    """Delete a repository (its data stays in the storage namespace)."""
    uri = parse(repository)
    confirm(f"delete repository {uri.repository}", yes)
    a = api()
    a.raw(f"delete repository {uri.repository}", "DELETE", f"/repositories/{q(uri.repository)}")
    out().line(f"Repository '{uri.repository}' deleted")


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
