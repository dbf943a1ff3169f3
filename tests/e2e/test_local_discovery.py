"""The stack as a newcomer meets it: the state file, the quickstart repository, a quiet console, and
``lakelet gc run quickstart`` with no flags after a restart on new ports (one Spark run, in a subprocess, as typed).

Without persistence of the data directory (lakelet/persistence*), the restarted stack starts empty and creates
quickstart again: the record that it was created lives in the stack's own state (lakelet/stack/samples.py).
"""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

import boto3
import lakefs
import pytest
from lakefs.client import Client

from tests.e2e.conftest import PROJECT_DIR, LocalProcess

pytestmark = pytest.mark.e2e

DAY = 86_400
GC_TIMEOUT_SECONDS = 300
_GATEWAY_LINE = re.compile(r"S3 gateway\s+(?P<url>http://\S+)")
_MOTO_LINE = re.compile(r"AWS stand-in\s+moto at (?P<url>http://\S+)")
# The dev server's access log and the gateway's, one line each: 127.0.0.1 - - [date] [S3 ]"GET /x HTTP/1.1" 200 -
_REQUEST_LINE = re.compile(r'^127\.0\.0\.1 - - \[[^\]]+\] (S3 )?"[A-Z]+ \S+ HTTP/1\.1" \d{3} \S+$')


def banner_url(local: LocalProcess, pattern: re.Pattern[str]) -> str:
    found = pattern.search(local.banner)
    assert found, local.banner
    return found.group("url")


def stderr_lines(local: LocalProcess) -> list[str]:
    return local.stderr_path.read_text(errors="replace").splitlines()


def client_of(local: LocalProcess) -> Client:
    return Client(host=local.endpoint, username=local.access_key_id, password=local.secret_access_key)


def api_get(local: LocalProcess, path: str) -> None:
    """One plain request (the lakefs client may make several per call)."""
    import base64

    token = base64.b64encode(f"{local.access_key_id}:{local.secret_access_key}".encode()).decode()
    request = urllib.request.Request(local.api_url + path, headers={"Authorization": f"Basic {token}"})
    urllib.request.build_opener(urllib.request.ProxyHandler({})).open(request, timeout=10).close()


def wait_for_lines(local: LocalProcess, count: int, timeout: float = 5.0) -> list[str]:
    deadline = time.monotonic() + timeout
    while len(stderr_lines(local)) < count and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)  # and nothing more comes
    return stderr_lines(local)


def clean_env(**extra: str) -> dict[str, str]:
    """The environment of a user's shell with nothing configured but ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LAKELET_", "LAKECTL_", "PYSPARK_", "SPARK_"))}
    env.update(extra)
    return env


def test_state_file_quickstart_quiet_console_and_gc_with_no_flags_after_a_restart(
    launch: Callable[..., LocalProcess], tmp_path: Path
) -> None:
    data_dir = tmp_path / "data"
    state_path = data_dir / "state.json"
    first = launch("--sample-data", "--data-dir", str(data_dir))

    # The state file: private, and everything the banner says.
    assert stat.S_IMODE(state_path.stat().st_mode) == 0o600
    state = json.loads(state_path.read_text())
    assert state["pid"] == first.process.pid and state["api_url"] == first.endpoint
    assert state["s3_gateway_url"] == banner_url(first, _GATEWAY_LINE)
    assert state["moto_url"] == banner_url(first, _MOTO_LINE)
    assert (state["access_key_id"], state["secret_access_key"]) == (first.access_key_id, first.secret_access_key)
    assert state["data_dir"] == str(data_dir) and state["ui_url"] == first.endpoint + "/"

    # quickstart, with GC rules so that the printed `lakelet gc run quickstart --mark-only` works as pasted.
    client = client_of(first)
    quickstart = lakefs.Repository("quickstart", client=client)
    assert quickstart.properties.default_branch == "main"
    rules = client.sdk_client.repositories_api.get_gc_rules("quickstart")
    assert rules.default_retention_days == 7
    # As pasted: this stack's data directory is not the default one, so the command names it.
    assert re.search(
        rf"lakelet\S* gc run quickstart --mark-only --data-dir {re.escape(str(data_dir))} ", first.banner
    ), first.banner
    assert "aws s3 ls s3://quickstart/main/" in first.banner

    # A quiet console: exactly one line per request, API and gateway alike, and no metric blobs.
    quickstart.branch("main").object("hello.txt").upload(b"hello")
    before = len(stderr_lines(first))
    for path in ("/healthcheck", "/repositories/quickstart/branches"):
        api_get(first, path)
    s3 = boto3.client(
        "s3",
        endpoint_url=state["s3_gateway_url"],
        region_name="us-east-1",
        aws_access_key_id=first.access_key_id,
        aws_secret_access_key=first.secret_access_key,
    )
    assert s3.get_object(Bucket="quickstart", Key="main/hello.txt")["Body"].read() == b"hello"
    with pytest.raises(s3.exceptions.NoSuchKey):
        s3.list_objects_v2(Bucket="quickstart", Prefix="mian/")
    lines = wait_for_lines(first, before + 4)[before:]
    assert len(lines) == 4, lines
    assert all(_REQUEST_LINE.match(line) for line in lines), lines
    assert sum(' S3 "' in line for line in lines) == 2
    everything = first.stdout() + "\n".join(stderr_lines(first))
    assert '"_aws"' not in everything and "CloudWatchMetrics" not in everything

    # A clean stop removes the state file; a new start on new ports writes a new one.
    assert first.stop() == 0
    assert not state_path.exists()
    second = launch("--sample-data", "--data-dir", str(data_dir))
    restarted = json.loads(state_path.read_text())
    assert restarted["pid"] == second.process.pid and restarted["api_url"] == second.endpoint != first.endpoint
    assert restarted["moto_url"] != state["moto_url"]

    # History: an old version no commit in the last 7 days needs; its data is old in S3 terms only after a day.
    main = lakefs.Repository("quickstart", client=client_of(second)).branch("main")
    now = time.time()
    main.object("table/part-0.csv").upload(b"id,v\n1,a\n")
    main.commit(message="first", date=int(now - 30 * DAY))
    main.object("table/part-0.csv").upload(b"id,v\n1,b\n")
    main.commit(message="second", date=int(now - 20 * DAY))

    # As a user types it, in a shell where nothing is configured but where the stack keeps its data.
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "lakelet", "gc", "run", "quickstart"],
        cwd=PROJECT_DIR,
        env=clean_env(LAKELET_DATA_DIR=str(data_dir)),
        capture_output=True,
        text=True,
        timeout=GC_TIMEOUT_SECONDS,
        check=False,
    )
    elapsed = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    assert (
        "GC run " in done.stdout and "of quickstart (s3://lakelet-local/quickstart), mode mark-and-sweep" in done.stdout
    )
    # Every object is younger than the default age guard (a day): listed, none deleted.
    listed = int(re.search(r"objects listed\s+(\d+)", done.stdout).group(1))  # type: ignore[union-attr]
    assert listed >= 2
    assert re.search(rf"too young to collect\s+{listed} ", done.stdout), done.stdout
    assert re.search(r"deleted\s+0 \(0 B\)", done.stdout), done.stdout
    # Progress, phase by phase, and nothing else: no Spark start-up warnings, no pandas FutureWarning.
    progress = done.stderr.splitlines()
    assert [line.split()[1] for line in progress] == ["prepare", "list", "mark", "sweep"], done.stderr
    assert [line.split()[0] for line in progress] == ["[1/4]", "[2/4]", "[3/4]", "[4/4]"]
    print(f"lakelet gc run quickstart took {elapsed:.1f} s")

    # The sample dataset's README (chalicelib/samples/, include_samples).
    readmes = [o for o in main.objects(max_amount=1000) if o.path.upper().startswith("README")]
    assert readmes, [o.path for o in main.objects(max_amount=1000)]
    assert main.object(readmes[0].path).reader(mode="r").read().strip()


def test_verbose_prints_the_metrics(launch: Callable[..., LocalProcess]) -> None:
    local = launch("--verbose")
    api_get(local, "/healthcheck")
    deadline = time.monotonic() + 5
    while "CloudWatchMetrics" not in local.stdout() and time.monotonic() < deadline:
        time.sleep(0.05)
    blobs = [line for line in local.stdout().splitlines() if '"_aws"' in line]
    assert blobs and "CloudWatchMetrics" in blobs[-1] and "Latency" in blobs[-1]
    assert local.stop() == 0


def test_a_second_stack_refuses_a_data_directory_in_use(local_stack: LocalProcess) -> None:
    found = re.search(r"State file\s+(?P<path>\S+)/state\.json", local_stack.banner)
    assert found, local_stack.banner
    done = subprocess.run(
        [sys.executable, "-m", "lakelet", "up", "--api-port", "0", "--s3-port", "0", "--data-dir", found["path"]],
        cwd=PROJECT_DIR,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1
    assert f"another stack (pid {local_stack.process.pid}, API at {local_stack.endpoint})" in done.stderr
    assert json.loads((Path(found["path"]) / "state.json").read_text())["pid"] == local_stack.process.pid
