"""``lakelet gc set-config|get-config|delete-config``: the repository's GC rules through the API. ``lakelet gc run``
(the local Spark GC) is the stack's command (lakelet/stack/cli.py), hung on this group by lakelet/cli.py."""

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from lakelet.commands.common import JsonOpt
from lakelet.commands.context import api, want_json
from lakelet.commands.errors import CLIError
from lakelet.commands.output import out
from lakelet.commands.uri import parse

app = typer.Typer(no_args_is_help=True)
RepoArg = Annotated[str, typer.Argument(help="lakefs://REPOSITORY")]


@app.command("set-config")
def set_config(
    repository: RepoArg,
    filename: Annotated[str, typer.Option("--filename", "-f", help="rules JSON file ('-' for stdin)")],
) -> None:
    """Set the GC rules from a JSON file: {"default_retention_days": N, "branches": [{"branch_id", ...}]}."""
    import lakefs_sdk

    uri = parse(repository)
    try:
        text = sys.stdin.read() if filename == "-" else Path(filename).read_text()
        rules = lakefs_sdk.GarbageCollectionRules.from_dict(json.loads(text))
    except OSError as e:
        raise CLIError(f"cannot read {filename}: {e.strerror}", "give the path of a rules JSON file") from None
    except (ValueError, TypeError) as e:
        raise CLIError(
            f"{filename} is not valid GC rules ({str(e).splitlines()[0]})",
            'write {"default_retention_days": 21, "branches": [{"branch_id": "main", "retention_days": 28}]}',
        ) from None
    a = api()
    a.call(f"set GC rules of {uri.repository}", a.repositories.set_gc_rules, uri.repository, rules)
    out().info(f"GC rules of {uri.repository} set")


@app.command("get-config")
def get_config(repository: RepoArg, json_out: JsonOpt = False) -> None:
    """Show the GC rules."""
    uri = parse(repository)
    a = api()
    rules = a.call(f"read GC rules of {uri.repository}", a.repositories.get_gc_rules, uri.repository)
    if want_json(json_out):
        out().json(rules)
        return
    out().line(f"default retention days: {rules.default_retention_days}")
    out().table(["BRANCH", "RETENTION DAYS"], [(b.branch_id, b.retention_days) for b in rules.branches or []])


@app.command("delete-config")
def delete_config(repository: RepoArg) -> None:
    """Remove the GC rules (the repository is then never collected)."""
    uri = parse(repository)
    a = api()
    a.call(f"delete GC rules of {uri.repository}", a.repositories.delete_gc_rules, uri.repository)
    out().info(f"GC rules of {uri.repository} deleted")
