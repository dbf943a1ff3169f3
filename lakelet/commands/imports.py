"""``lakelet import --from s3://... --to lakefs://repo/branch/path/``: lakectl's zero-copy import.

The server lists the source and commits entries pointing at its objects on ``_<branch>_imported``, then merges
that into the branch (importStart); the command polls importStatus with a progress bar of the objects ingested
so far, and cancels the import (importCancel) when interrupted.
"""

from __future__ import annotations

import time
from typing import Annotated, Any

import typer

from lakelet.commands.api import q
from lakelet.commands.common import JsonOpt, key_values
from lakelet.commands.context import api, emit
from lakelet.commands.errors import CLIError
from lakelet.commands.output import out
from lakelet.commands.uri import parse

POLL_SECONDS = 0.5


def register(app: typer.Typer) -> None:
    app.command("import", help="Import objects from an object store into a branch without copying them.")(
        import_command
    )


def import_command(
    source: Annotated[str, typer.Option("--from", help="the object store location: s3://bucket/prefix/")],
    destination: Annotated[str, typer.Option("--to", help="lakefs://REPOSITORY/BRANCH/PATH/ to import into")],
    message: Annotated[str | None, typer.Option("--message", "-m", help="commit message")] = None,
    meta: Annotated[list[str] | None, typer.Option("--meta", help="KEY=VALUE commit metadata (repeatable)")] = None,
    no_progress: Annotated[bool, typer.Option("--no-progress", help="draw no progress bar")] = False,
    json_out: JsonOpt = False,
) -> None:
    if not source.startswith("s3://") or len(source) <= len("s3://"):
        raise typer.BadParameter(f"{source!r} is not an s3:// location", param_hint="--from")
    to = parse(destination, ref=True)
    path = f"/repositories/{q(to.repository)}/branches/{q(to.ref)}/import"
    # lakectl imports --from as a prefix: everything under it lands under the destination path.
    body = {
        "paths": [{"type": "common_prefix", "path": source, "destination": to.path}],
        "commit": {"message": message or f"Import from {source}", "metadata": key_values(meta, "--meta")},
    }
    _, started = api().raw(f"import {source} into {to}", "POST", path, None, body, ok=(202,))
    import_id = str(started["id"])
    try:
        final = _follow(path, import_id, no_progress)
    except KeyboardInterrupt:
        api().raw(f"cancel import {import_id}", "DELETE", path, {"id": import_id}, ok=(204, 409))
        raise
    error = (final.get("error") or {}).get("message")
    if error:
        from lakelet.commands.errors import hint_for

        raise CLIError(
            f"import {import_id} of {source} failed ({error})",
            f"the branch is unchanged; {hint_for(int(final.get('status_code') or 400), str(error))}",
        )
    commit = final.get("commit") or {}
    emit(
        final,
        f"Import of {source} to {to} completed.\nIngested objects: {final.get('ingested_objects', 0)}\n"
        f"Commit: {commit.get('id', '')}",
        json_out,
    )


def _follow(path: str, import_id: str, no_progress: bool) -> dict[str, Any]:
    """Polls importStatus until the import completed or failed, drawing the count of objects ingested."""
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn  # only when it runs

    console = out().err
    enabled = not no_progress and console.is_terminal
    with Progress(
        SpinnerColumn(),
        TextColumn("Importing: {task.fields[count]} objects"),
        TimeElapsedColumn(),
        console=console,
        disable=not enabled,
        transient=True,
    ) as progress:
        task = progress.add_task("import", total=None, count=0)
        while True:
            _, status = api().raw(f"status of import {import_id}", "GET", path, {"id": import_id})
            progress.update(task, count=status.get("ingested_objects") or 0)
            if status.get("completed") or status.get("error"):
                return dict(status)
            time.sleep(POLL_SECONDS)
