"""``lakelet import --from s3://... --to lakefs://repo/branch/path/`` on the CLI's stack (as lakectl's import):
the objects land under the path without being copied, the answer names the commit, and a location the
deployment does not allow is refused with the setting's name."""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import Callable
from pathlib import Path

import boto3

from tests.cli.conftest import Result
from tests.e2e.conftest import LocalProcess
from tests.e2e.s3support import moto_endpoint

Cli = Callable[..., Result]
SOURCE = "cli-import-source"


def _seed(stack: LocalProcess, files: dict[str, bytes]) -> None:
    s3 = boto3.client(
        "s3",
        endpoint_url=moto_endpoint(stack),
        region_name="us-east-1",
        aws_access_key_id=stack.aws_access_key_id,
        aws_secret_access_key=stack.aws_secret_access_key,
    )
    with contextlib.suppress(s3.exceptions.BucketAlreadyOwnedByYou):
        s3.create_bucket(Bucket=SOURCE)
    for key, data in files.items():
        s3.put_object(Bucket=SOURCE, Key=key, Body=data)


def test_import_lands_the_prefix_under_the_path(cli: Cli, cli_stack: LocalProcess, repo: str) -> None:
    run = uuid.uuid4().hex[:8]
    _seed(cli_stack, {f"{run}/a.csv": b"a", f"{run}/nested/b.csv": b"bb"})
    result = cli(
        "import",
        "--from",
        f"s3://{SOURCE}/{run}/",
        "--to",
        f"lakefs://{repo}/main/landed/",
        "-m",
        "from the cli",
        "--meta",
        "team=data",
    )
    assert "Ingested objects: 2" in result.stdout and "Commit: " in result.stdout
    listed = cli("fs", "ls", "--recursive", f"lakefs://{repo}/main/landed/").stdout
    assert "landed/a.csv" in listed and "landed/nested/b.csv" in listed
    assert cli("fs", "cat", f"lakefs://{repo}/main/landed/nested/b.csv").stdout == "bb"
    stat = json.loads(cli("fs", "stat", "--json", f"lakefs://{repo}/main/landed/a.csv").stdout)
    assert stat["physical_address"] == f"s3://{SOURCE}/{run}/a.csv"
    log = json.loads(cli("log", "--json", f"lakefs://{repo}/main").stdout)
    assert log[0]["message"] == "from the cli" and log[0]["metadata"]["team"] == "data"


def test_import_from_a_location_not_allowed_fails_naming_the_setting(cli: Cli, repo: str) -> None:
    result = cli("import", "--from", "s3://somewhere-else/x/", "--to", f"lakefs://{repo}/main/x/", code=1)
    assert "LAKELET_IMPORT_ALLOWED_LOCATIONS" in result.stderr


def test_the_stacks_import_source_filled_by_lakelet_is_importable(
    cli: Cli, cli_stack: LocalProcess, repo: str, tmp_path: Path
) -> None:
    import re
    import subprocess
    import sys

    from tests.e2e.conftest import PROJECT_DIR

    state_file = re.search(r"State file\s+(\S+)", cli_stack.banner)
    assert state_file is not None
    data_dir = Path(state_file.group(1)).parent
    run = uuid.uuid4().hex[:8]
    (tmp_path / "raw" / "events").mkdir(parents=True)
    (tmp_path / "raw" / "events" / "day1.csv").write_text("id\n1\n")
    (tmp_path / "raw" / "schema.json").write_text("{}")
    upload = subprocess.run(
        [sys.executable, "-m", "lakelet", "import-source", "upload", str(tmp_path / "raw"), "--prefix", run],
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "LAKELET_DATA_DIR": str(data_dir)},
        cwd=PROJECT_DIR,
        capture_output=True,
        text=True,
        check=False,
    )
    assert upload.returncode == 0, upload.stderr
    assert upload.stdout.strip() == f"Uploaded 2 file(s) to s3://lakelet-import/{run}/"
    result = cli("import", "--from", f"s3://lakelet-import/{run}/events/", "--to", f"lakefs://{repo}/main/events/")
    assert "Ingested objects: 1" in result.stdout
    assert cli("fs", "cat", f"lakefs://{repo}/main/events/day1.csv").stdout == "id\n1\n"
    no_stack = subprocess.run(
        [sys.executable, "-m", "lakelet", "import-source", "upload", str(tmp_path / "raw")],
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "LAKELET_DATA_DIR": str(tmp_path / "none")},
        cwd=PROJECT_DIR,
        capture_output=True,
        text=True,
        check=False,
    )
    assert no_stack.returncode == 1 and "no running stack" in no_stack.stderr
