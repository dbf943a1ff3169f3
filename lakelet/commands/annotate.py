"""``lakelet annotate`` (alias ``blame``): each entry under a path with the latest commit that changed it."""

from typing import Annotated, Any

import typer

from lakelet.commands.api import q
from lakelet.commands.common import JsonOpt
from lakelet.commands.context import api, want_json
from lakelet.commands.output import out, timestamp
from lakelet.commands.uri import parse

MESSAGE_CHARS = 200


def register(app: typer.Typer) -> None:
    for name in ("annotate", "blame"):
        app.command(name, help="List entries under a path, each with the latest commit that changed it.")(annotate)


def annotate(
    path: Annotated[str, typer.Argument(help="lakefs://REPOSITORY/REF/PATH")],
    recursive: Annotated[bool, typer.Option("--recursive", "-r", help="every object under the path")] = False,
    first_parent: Annotated[bool, typer.Option("--first-parent", help="follow only first parents")] = False,
    json_out: JsonOpt = False,
) -> None:
    uri = parse(path, ref=True)
    a = api()
    repo, ref = q(uri.repository), q(uri.ref)
    listing = a.pages(
        f"list {uri}",
        f"/repositories/{repo}/refs/{ref}/objects/ls",
        {"prefix": uri.path, "delimiter": "" if recursive else "/"},
    )
    rows: list[dict[str, Any]] = []
    for entry in listing:
        query: dict[str, Any] = {"amount": 1, "limit": True, "first_parent": first_parent or None}
        query["objects" if recursive else "prefixes"] = [entry["path"]]
        _, page = a.raw(f"log {entry['path']}", "GET", f"/repositories/{repo}/refs/{ref}/commits", query)
        commits = (page or {}).get("results") or []
        row = {"path": entry["path"], "commit": commits[0] if commits else None}
        rows.append(row)
        if not want_json(json_out):
            out().line(_line(row))
    if want_json(json_out):
        out().json(rows)


def _line(row: dict[str, Any]) -> str:
    commit = row["commit"] or {}
    message = str(commit.get("message", ""))
    if len(message) > MESSAGE_CHARS:
        message = message[: MESSAGE_CHARS - 3] + "..."
    message = message.split("\n", 1)[0]
    date = timestamp(commit.get("creation_date")) if commit.get("creation_date") else ""
    return (
        f"{row['path']:<15} {commit.get('committer', '')!s:<20} {str(commit.get('id', ''))[:16]:<20} {date}  {message}"
    )
