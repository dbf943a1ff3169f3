"""``lakelet import-source upload PATH``: fill the local stack's import source bucket (``s3://lakelet-import``,
which imports on the stack may read) from local files, so ``lakelet import --from s3://lakelet-import/...``
has something to import. The stack is found by its state file, as the rest of the CLI finds it."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from lakelet.defaults import LOCAL_IMPORT_BUCKET, LOCAL_REGION
from lakelet.stack.statefile import ENV_DATA_DIR, default_data_dir, read_state

app = typer.Typer(no_args_is_help=True)


def _files(source: Path) -> list[tuple[Path, str]]:
    """(file, key under the prefix): a file is uploaded under its name, a directory's files under their paths."""
    if source.is_file():
        return [(source, source.name)]
    return [(f, f.relative_to(source).as_posix()) for f in sorted(source.rglob("*")) if f.is_file()]


@app.command("upload")
def upload(
    source: Annotated[Path, typer.Argument(help="a local file or directory")],
    prefix: Annotated[str, typer.Option("--prefix", help="the key prefix in the bucket, e.g. events/")] = "",
    data_dir: Annotated[
        Path | None, typer.Option(envvar=ENV_DATA_DIR, show_envvar=True, help="the running stack's data directory")
    ] = None,
) -> None:
    """Upload a file or a directory's files to the local stack's import source bucket."""
    if not source.exists():
        print(f"lakelet import-source upload: {source} does not exist", file=sys.stderr)
        raise typer.Exit(1)
    directory = (data_dir or default_data_dir()).expanduser()
    state = read_state(directory)
    if state is None:
        print(
            f"lakelet import-source upload: no running stack uses the data directory {directory}: start one with "
            "'lakelet up' (or 'make run'), or pass its --data-dir",
            file=sys.stderr,
        )
        raise typer.Exit(1)
    import boto3

    s3 = boto3.client(
        "s3",
        endpoint_url=str(state["moto_url"]),
        region_name=str(state.get("region") or LOCAL_REGION),
        # moto's own key pair (older stacks signed moto with the admin pair, and wrote no other).
        aws_access_key_id=str(state.get("aws_access_key_id") or state["access_key_id"]),
        aws_secret_access_key=str(state.get("aws_secret_access_key") or state["secret_access_key"]),
    )
    if prefix and not prefix.endswith("/"):
        prefix += "/"
    files = _files(source)
    for path, key in files:
        s3.upload_file(str(path), LOCAL_IMPORT_BUCKET, prefix + key)
    print(f"Uploaded {len(files)} file(s) to s3://{LOCAL_IMPORT_BUCKET}/{prefix}", flush=True)
