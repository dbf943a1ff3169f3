"""``lakelet local export DIR`` and ``lakelet local import DIR``: the commands over lakelet/stack/export.py and
export_import.py, hung on lakectl's ``local`` group by lakelet/cli.py.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated, NoReturn

import typer

from lakelet.defaults import (
    DEFAULT_ACCESS_KEY_ID,
    DEFAULT_SECRET_ACCESS_KEY,
)
from lakelet.stack.cli import (
    DATA_DIR_DEFAULT_TEXT,
    ENV_ACCESS_KEY_ID,
    ENV_SECRET_ACCESS_KEY,
    NOT_INSTALLED_HINT,
    resolve_data_dir,
)
from lakelet.stack.statefile import ENV_DATA_DIR, read_state

ExportDirArg = Annotated[Path, typer.Argument(help="the export's directory", file_okay=False)]
DataDirOpt = Annotated[
    Path | None,
    typer.Option(
        envvar=ENV_DATA_DIR,
        show_envvar=True,
        show_default=DATA_DIR_DEFAULT_TEXT,
        file_okay=False,
        help="the stack's data directory",
    ),
]


def local_export(export_dir: ExportDirArg, data_dir: DataDirOpt = None) -> None:
    """Write a data directory's repositories, refs, commits, staged entries, objects, users, credentials and
    settings to a new directory, as JSON lines and object files that any Lakelet version imports (moto's
    snapshots are readable by the moto version that wrote them only). A running stack is read in place."""
    from lakelet.defaults import LOCAL_REGION as region

    directory = resolve_data_dir(data_dir)
    assert directory is not None
    try:
        from lakelet.persistence import DataDirError
        from lakelet.stack.export import (
            Endpoint,
            ExportError,
            export_stack,
            stopped_stack_aws,
        )
        from lakelet.stack.local import LOCAL_TABLE_PREFIX
    except ImportError as error:
        _fail("export", f"the local stack is not installed ({error}): {NOT_INSTALLED_HINT}")
    running = read_state(directory)
    try:
        if running is not None:
            endpoint = Endpoint(
                str(running["moto_url"]),
                str(running.get("aws_access_key_id") or running["access_key_id"]),
                str(running.get("aws_secret_access_key") or running["secret_access_key"]),
                str(running.get("region") or region),
                LOCAL_TABLE_PREFIX,
            )
            counts = export_stack(endpoint, export_dir)
        else:
            with stopped_stack_aws(directory, region, LOCAL_TABLE_PREFIX) as endpoint:
                counts = export_stack(endpoint, export_dir)
    except (ExportError, DataDirError, OSError) as error:
        _fail("export", str(error))
    print(
        f"Exported {directory} to {export_dir}: {counts.summary()}. It holds every secret in clear: keep it "
        f"private. Import it with `lakelet local import {export_dir} --data-dir NEW_DIR`.",
        flush=True,
    )


def local_import(export_dir: ExportDirArg, data_dir: DataDirOpt = None) -> None:
    """Create a new data directory from an export (lakelet local export): the stack starts on it, the export is
    written through the AWS APIs it runs on, the secrets are sealed under its new KMS key, and it stops."""
    directory = resolve_data_dir(data_dir)
    assert directory is not None
    try:
        from lakelet.persistence import DataDirError
        from lakelet.stack.app_environment import Credentials
        from lakelet.stack.export import Endpoint, ExportError
        from lakelet.stack.export_import import import_stack, read_manifest
        from lakelet.stack.local import LOCAL_TABLE_PREFIX, LocalStack
    except ImportError as error:
        _fail("import", f"the local stack is not installed ({error}): {NOT_INSTALLED_HINT}")
    try:
        read_manifest(export_dir)  # before anything is created
    except ExportError as error:
        _fail("import", str(error))
    if directory.exists() and any(directory.iterdir()):
        _fail(
            "import",
            f"{directory} is not empty: import into a new data directory (--data-dir NEW_DIR), then "
            "start the stack on it",
        )
    keys = Credentials(
        os.environ.get(ENV_ACCESS_KEY_ID) or DEFAULT_ACCESS_KEY_ID,
        os.environ.get(ENV_SECRET_ACCESS_KEY) or DEFAULT_SECRET_ACCESS_KEY,
    )
    stack = LocalStack(api_port=0, s3_port=0, credentials=keys, data_dir=directory)
    try:
        stack.start()
        aws = stack.aws_credentials
        counts = import_stack(
            Endpoint(stack.moto_url, aws.access_key_id, aws.secret_access_key, stack.region, LOCAL_TABLE_PREFIX),
            export_dir,
        )
    except (ExportError, DataDirError, OSError) as error:
        _fail("import", f"{error} ({directory} is incomplete: remove it before trying again)")
    finally:
        stack.stop()
    print(
        f"Imported {export_dir} into {directory}: {counts.summary()}. Start it with "
        f"`lakelet up --data-dir {directory}`.",
        flush=True,
    )


def _fail(command: str, line: str) -> NoReturn:
    print(f"lakelet up {command}: {line}", file=sys.stderr)
    raise typer.Exit(1)
