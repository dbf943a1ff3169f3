"""``make smoke`` (bench/smoke.py) against ``lakelet up --aws-limits``, as CI runs it: every step works, under the
deployed limits, and the smoke test leaves no repository behind. Small counts: the stack's workflow threshold is
lowered so a dozen objects make a workflow-sized commit."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable

import lakefs
from lakefs.client import Client

from tests.e2e.conftest import PROJECT_DIR, LocalProcess

_S3_LINE = re.compile(r"^\s*S3 gateway\s+(?P<url>http://\S+)", re.MULTILINE)


def test_the_smoke_test_passes_against_the_stack_with_aws_limits(launch: Callable[..., LocalProcess]) -> None:
    local = launch(env={"LAKELET_COMMIT_WORKFLOW_THRESHOLD": "5"})
    assert "AWS limits on" in local.banner
    s3 = _S3_LINE.search(local.banner)
    assert s3, local.banner
    run = subprocess.run(
        [
            sys.executable,
            "bench/smoke.py",
            "--endpoint",
            local.endpoint,
            "--access-key-id",
            local.access_key_id,
            "--secret-access-key",
            local.secret_access_key,
            "--s3-endpoint",
            s3.group("url"),
            "--workflow-objects",
            "12",
            "--workers",
            "4",
        ],
        cwd=PROJECT_DIR,
        check=False,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    rows = {line.split("  ")[0].strip(): line for line in run.stdout.splitlines() if "  " in line}
    for step in (
        "config",
        "repository",
        "branch",
        "upload (API)",
        "presigned upload 20 MiB",
        "commit",
        "merge with a conflict",
        "S3 gateway put and get",
        "workflow-sized commit",
        "GC dry run",
        "cleanup",
    ):
        assert step in rows and "  ok  " in rows[step], run.stdout
    assert "as a workflow" in rows["workflow-sized commit"], run.stdout
    assert "presigned multipart" in rows["presigned upload 20 MiB"], run.stdout
    client = Client(host=local.endpoint, username=local.access_key_id, password=local.secret_access_key)
    assert [r.id for r in lakefs.repositories(client=client) if r.id.startswith("smoke-")] == []


def test_the_smoke_test_fails_and_still_cleans_up(launch: Callable[..., LocalProcess]) -> None:
    """A step that fails (an S3 endpoint nobody serves) makes the run exit 1, and the repository still goes."""
    local = launch()
    run = subprocess.run(
        [
            sys.executable,
            "bench/smoke.py",
            "--endpoint",
            local.endpoint,
            "--access-key-id",
            local.access_key_id,
            "--secret-access-key",
            local.secret_access_key,
            "--s3-endpoint",
            "http://127.0.0.1:9",
            "--workflow-objects",
            "2",
            "--presigned-mib",
            "1",
        ],
        cwd=PROJECT_DIR,
        check=False,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 1, run.stdout + run.stderr
    assert "FAILED" in run.stdout and "1 step(s) failed" in run.stdout, run.stdout
    client = Client(host=local.endpoint, username=local.access_key_id, password=local.secret_access_key)
    assert [r.id for r in lakefs.repositories(client=client) if r.id.startswith("smoke-")] == []
