"""The aws cli (from PyPI, in the test venv) against the gateway of ``lakelet up``, configured with nothing but
the endpoint and the key pair: ``cp`` both ways, ``ls``, and ``sync`` of a directory tree up and back.

The cli's managed uploads never use parts under S3's 5 MiB minimum, which a deployed gateway's 6 MB Lambda payload
cannot carry (docs/s3-gateway.md): with ``--aws-limits`` (the e2e tier's stack) a 12 MiB ``cp`` gets the deployed
413, checked here; the round trips of big files run on a stack of this module's own, started --no-aws-limits."""

from __future__ import annotations

import hashlib
import os
import random
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import lakefs
import pytest
from lakefs.client import Client

from .conftest import LocalProcess, launch_local
from .s3support import s3_endpoint

pytestmark = pytest.mark.e2e

MIB = 1024 * 1024


def aws(local: LocalProcess, tmp_path: Path, *args: str) -> str:
    result = aws_run(local, tmp_path, *args)
    assert result.returncode == 0, f"aws {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}"
    return result.stdout


@pytest.fixture(scope="module")
def plain_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalProcess]:
    """A stack without AWS's limits: the local gateway takes the cli's 8 MiB parts and whole reads of any size."""
    local = launch_local(tmp_path_factory.mktemp("plain-stack"), "--no-aws-limits")
    try:
        yield local
    finally:
        local.stop()


@pytest.fixture
def plain_repo(plain_stack: LocalProcess, request: pytest.FixtureRequest) -> str:
    client = Client(
        host=plain_stack.endpoint, username=plain_stack.access_key_id, password=plain_stack.secret_access_key
    )
    name = f"cli-{uuid.uuid4().hex[:8]}"
    prefix = client.storage_config.default_namespace_prefix
    return str(lakefs.Repository(name, client=client).create(storage_namespace=f"{prefix}/{name}").id)


def aws_run(local: LocalProcess, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path),
        "AWS_ACCESS_KEY_ID": local.access_key_id,
        "AWS_SECRET_ACCESS_KEY": local.secret_access_key,
        # No config or credentials file of the developer's may help (or hinder).
        "AWS_CONFIG_FILE": str(tmp_path / "no-config"),
        "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "no-credentials"),
    }
    command = [sys.executable, "-m", "awscli", *args, "--endpoint-url", s3_endpoint(local)]
    return subprocess.run(
        command, env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL, check=False
    )


def make_tree(root: Path) -> dict[str, str]:
    rng = random.Random(5)
    files = {
        "README.md": b"# tree\n",
        "empty.txt": b"",
        "data/part-0000.csv": b"id,value\n" + b"".join(b"%d,%d\n" % (i, i * i) for i in range(2000)),
        "data/nested/deeper/blob.bin": rng.randbytes(300_000),
        "data/large.bin": rng.randbytes(9 * MIB),  # above the cli's 8 MiB threshold: a multipart upload
        "with space/ünïcode name.txt": "héllo wörld\n".encode(),
    }
    for name, data in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return digests(root)


def digests(root: Path) -> dict[str, str]:
    return {
        str(path.relative_to(root)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


def test_cp_both_ways(plain_stack: LocalProcess, plain_repo: str, tmp_path: Path) -> None:
    source = tmp_path / "upload.bin"
    source.write_bytes(random.Random(1).randbytes(12 * MIB + 17))
    aws(plain_stack, tmp_path, "s3", "cp", str(source), f"s3://{plain_repo}/main/cli/upload.bin")
    back = tmp_path / "download.bin"
    aws(plain_stack, tmp_path, "s3", "cp", f"s3://{plain_repo}/main/cli/upload.bin", str(back))
    assert back.read_bytes() == source.read_bytes()


def test_a_big_cp_gets_the_deployed_413_under_aws_limits(
    local_stack: LocalProcess, s3_repo: str, tmp_path: Path
) -> None:
    """What a deployed gateway answers the cli's 8 MiB parts: Lambda's 413; the object is not there afterwards."""
    source = tmp_path / "upload.bin"
    source.write_bytes(random.Random(1).randbytes(12 * MIB + 17))
    failed = aws_run(local_stack, tmp_path, "s3", "cp", str(source), f"s3://{s3_repo}/main/cli/upload.bin")
    assert failed.returncode != 0 and "(413)" in failed.stderr, failed.stderr
    missing = aws_run(
        local_stack, tmp_path, "s3api", "head-object", "--bucket", s3_repo, "--key", "main/cli/upload.bin"
    )
    assert missing.returncode != 0 and "404" in missing.stderr, missing.stderr


def test_sync_a_tree_up_and_back_down(plain_stack: LocalProcess, plain_repo: str, tmp_path: Path) -> None:
    up, down = tmp_path / "up", tmp_path / "down"
    expected = make_tree(up)
    # The files predate the upload, as they do outside a test: sync compares the local mtime with LastModified,
    # which (as on S3) has whole seconds, so a file written in the upload's own second would look newer.
    an_hour_ago = time.time() - 3600
    for path in up.rglob("*"):
        os.utime(path, (an_hour_ago, an_hour_ago))
    aws(plain_stack, tmp_path, "s3", "sync", str(up), f"s3://{plain_repo}/main/tree/")
    assert "PRE main/" in aws(plain_stack, tmp_path, "s3", "ls", f"s3://{plain_repo}/")  # branches, as folders
    recursive = aws(plain_stack, tmp_path, "s3", "ls", "--recursive", f"s3://{plain_repo}/main/tree/")
    assert sorted(line.split(None, 3)[3] for line in recursive.strip().splitlines()) == sorted(
        f"main/tree/{name}" for name in expected
    )
    assert f" {9 * MIB} main/tree/data/large.bin" in recursive
    aws(plain_stack, tmp_path, "s3", "sync", f"s3://{plain_repo}/main/tree/", str(down))
    assert digests(down) == expected
    # Nothing changed, so a second sync has nothing to do.
    assert aws(plain_stack, tmp_path, "s3", "sync", str(up), f"s3://{plain_repo}/main/tree/").strip() == ""


def test_a_listing_of_a_missing_branch_says_so(local_stack: LocalProcess, s3_repo: str, tmp_path: Path) -> None:
    result = aws_run(local_stack, tmp_path, "s3", "ls", f"s3://{s3_repo}/mian/")
    assert result.returncode != 0 and result.stdout == ""
    assert f"(NoSuchKey) when calling the ListObjectsV2 operation: ref 'mian' not found in repository {s3_repo}" in (
        result.stderr
    ), result.stderr
