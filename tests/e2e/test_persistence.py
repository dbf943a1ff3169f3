"""``lakelet up --data-dir``: what the stack held is there after a clean stop and a restart on new ports, and
after ``kill -9`` every acknowledged write is; a data directory of an unknown format is refused.

Commits and merges above 3 changes run as Step Functions workflows here, so executions cross the restart too.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import boto3
import lakefs
import lakefs_sdk
import pytest
import requests
from botocore.config import Config
from lakefs.client import Client
from lakefs_sdk.models import GarbageCollectionRule, GarbageCollectionRules

from .conftest import PROJECT_DIR, LocalProcess

pytestmark = pytest.mark.e2e

WORKFLOWS = {"LAKELET_COMMIT_WORKFLOW_THRESHOLD": "3", "LAKELET_MERGE_WORKFLOW_THRESHOLD": "3"}
# The claim in the README: a write acknowledged before a kill -9 survives it. The journal record of every change
# reaches the kernel before moto answers, so the bound is 0 s; this is the bound the test holds the stack to.
KILL_BOUND_SECONDS = 0.0
_DATA_LINE = re.compile(r"^Data directory (?P<dir>.+?): (?P<what>.+)$", re.MULTILINE)


def client_of(local: LocalProcess) -> Client:
    return Client(host=local.endpoint, username=local.access_key_id, password=local.secret_access_key)


def sdk_of(local: LocalProcess, key: str | None = None, secret: str | None = None) -> lakefs_sdk.ApiClient:
    return lakefs_sdk.ApiClient(
        lakefs_sdk.Configuration(
            host=local.api_url, username=key or local.access_key_id, password=secret or local.secret_access_key
        )
    )


def gateway_of(local: LocalProcess, key: str, secret: str) -> Any:
    s3_url = re.search(r"^\s*S3 gateway\s+(http://\S+)", local.banner, re.MULTILINE)
    assert s3_url, local.banner
    return boto3.client(
        "s3",
        endpoint_url=s3_url.group(1),
        region_name="us-east-1",
        aws_access_key_id=key,
        aws_secret_access_key=secret,
        config=Config(retries={"max_attempts": 1}),
    )


def data_line(local: LocalProcess) -> str:
    found = _DATA_LINE.search(local.stdout())
    assert found, local.stdout()
    return found.group("what")


def api(local: LocalProcess, method: str, path: str, **kwargs: Any) -> requests.Response:
    return requests.request(
        method, local.api_url + path, auth=(local.access_key_id, local.secret_access_key), timeout=60, **kwargs
    )


def wait_task(local: LocalProcess, status_path: str) -> dict[str, Any]:
    deadline = time.monotonic() + 60
    while True:
        body: dict[str, Any] = api(local, "GET", status_path).json()
        if body["completed"] or time.monotonic() > deadline:
            return body
        time.sleep(0.2)


def blob(name: str, size: int) -> bytes:
    """Deterministic, incompressible-looking bytes for a name."""
    out = bytearray()
    counter = 0
    while len(out) < size:
        out += hashlib.sha256(f"{name}:{counter}".encode()).digest()
        counter += 1
    return bytes(out[:size])


def snapshot_of(local: LocalProcess, repos: list[str]) -> dict[str, Any]:
    """Everything observable through the API about ``repos``: refs, logs, listings, stats, contents."""
    client = client_of(local)
    seen: dict[str, Any] = {}
    for name in repos:
        repo = lakefs.Repository(name, client=client)
        branches = {b.id: b.get_commit().id for b in repo.branches()}
        tags = {t.id: t.get_commit().id for t in repo.tags()}
        logs = {
            b: [(c.id, c.message, c.meta_range_id, tuple(c.parents), c.metadata) for c in repo.ref(b).log()]
            for b in branches
        }
        objects = {}
        for ref in [*branches, *tags]:
            for entry in repo.ref(ref).objects():
                stat = repo.ref(ref).object(entry.path).stat()
                objects[(ref, entry.path)] = (
                    stat.physical_address,
                    stat.checksum,
                    stat.size_bytes,
                    stat.content_type,
                    stat.metadata,
                    stat.mtime,
                )
        seen[name] = {
            "branches": branches,
            "tags": tags,
            "logs": logs,
            "objects": objects,
            "properties": repo.properties.storage_namespace,
        }
    return seen


def read_all(local: LocalProcess, repo_name: str, refs: list[str]) -> dict[tuple[str, str], bytes]:
    """Every object's bytes, read the way the lakefs client reads: a presigned GET on moto (the server offers
    presign), which only works if nothing stored names an old moto port."""
    repo = lakefs.Repository(repo_name, client=client_of(local))
    return {
        (ref, e.path): repo.ref(ref).object(e.path).reader(mode="rb").read()
        for ref in refs
        for e in repo.ref(ref).objects()
    }


def test_a_clean_restart_keeps_everything(launch: Callable[..., LocalProcess], tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    first = launch("--data-dir", str(data_dir), env=WORKFLOWS)
    assert data_line(first) == "new"
    client, sdk = client_of(first), sdk_of(first)
    prefix = client.storage_config.default_namespace_prefix
    repo = lakefs.Repository("kept", client=client).create(storage_namespace=f"{prefix}/kept")
    main = repo.branch("main")
    written: dict[str, bytes] = {f"data/{i}.bin": blob(f"a{i}", 700 + i) for i in range(6)}
    written["big/one.bin"] = blob("big", 3 * 1024 * 1024 + 17)
    for path, data in written.items():
        main.object(path).upload(data, metadata={"origin": path}, content_type="application/x-test")
    main.commit(message="first", metadata={"k": "v"})  # 7 changes: the commit workflow
    dev = repo.branch("dev").create(source_reference="main")
    for i in range(4):
        dev.object(f"dev/{i}.txt").upload(f"dev {i}".encode())
    dev.object("data/0.bin").delete()
    dev.commit(message="on dev")
    dev.merge_into(main, message="merge dev")  # 5 changes: the merge workflow
    repo.tag("v1").create("main")
    main.object("staged/only.txt").upload(b"never committed")
    # An async commit on another branch: its status lives in a Step Functions execution.
    side = repo.branch("side").create(source_reference="main")
    for i in range(4):
        side.object(f"side/{i}").upload(blob(f"side{i}", 100))
    task = api(
        first, "POST", "/repositories/kept/branches/side/commits/async", json={"message": "async on side"}
    ).json()["id"]
    side_status = wait_task(first, f"/repositories/kept/branches/side/commits/status?id={task}")
    assert side_status["completed"] and side_status["result"]["message"] == "async on side", side_status

    other = lakefs.Repository("other", client=client).create(storage_namespace=f"{prefix}/other")
    # A user of its own, with a key pair whose secret is sealed by KMS, writing through the S3 gateway.
    auth = lakefs_sdk.AuthApi(sdk)
    auth.create_user(lakefs_sdk.UserCreation(id="alice"))
    auth.add_group_membership("Developers", "alice")
    auth.create_policy(
        lakefs_sdk.Policy(
            id="read-kept",
            statement=[
                lakefs_sdk.Statement(effect="allow", action=["fs:Read*"], resource="arn:lakefs:fs:::repository/kept/*")
            ],
        )
    )
    auth.attach_policy_to_user("alice", "read-kept")
    alice = auth.create_credentials("alice")
    gateway_of(first, alice.access_key_id, alice.secret_access_key).put_object(
        Bucket="other", Key="main/from-gateway.csv", Body=b"a,b\n1,2\n"
    )
    other.branch("main").commit(message="gateway data")
    rules = GarbageCollectionRules(
        default_retention_days=7, branches=[GarbageCollectionRule(branch_id="main", retention_days=30)]
    )
    sdk_repos = lakefs_sdk.RepositoriesApi(sdk)
    sdk_repos.set_gc_rules("kept", rules)

    before = snapshot_of(first, ["kept", "other"])
    contents = read_all(first, "kept", ["main", "dev", "v1"])
    assert contents[("main", "big/one.bin")] == written["big/one.bin"]
    assert first.stop() == 0

    second = launch("--data-dir", str(data_dir), env=WORKFLOWS)
    assert second.endpoint != first.endpoint  # new ports: nothing stored may name the old ones
    assert data_line(second).startswith("restored a snapshot and 0 journaled changes"), data_line(second)
    assert snapshot_of(second, ["kept", "other"]) == before
    assert read_all(second, "kept", ["main", "dev", "v1"]) == contents
    assert read_all(second, "other", ["main"]) == {("main", "from-gateway.csv"): b"a,b\n1,2\n"}
    # Bytes also through the API without presign, and through the gateway with alice's (KMS-sealed) key.
    plain = lakefs_sdk.ObjectsApi(sdk_of(second)).get_object("kept", "main", "big/one.bin", presign=False)
    assert bytes(plain) == written["big/one.bin"]
    gateway = gateway_of(second, alice.access_key_id, alice.secret_access_key)
    assert gateway.get_object(Bucket="kept", Key="v1/dev/2.txt")["Body"].read() == b"dev 2"
    auth2 = lakefs_sdk.AuthApi(sdk_of(second))
    assert [p.id for p in auth2.list_user_policies("alice").results] == ["read-kept"]
    assert "Developers" in [g.id for g in auth2.list_user_groups("alice").results]
    assert lakefs_sdk.RepositoriesApi(sdk_of(second)).get_gc_rules("kept") == rules
    assert wait_task(second, f"/repositories/kept/branches/side/commits/status?id={task}") == side_status
    # And it keeps working: a new commit on a restored branch, through the workflow again.
    main2 = lakefs.Repository("kept", client=client_of(second)).branch("main")
    for i in range(4):
        main2.object(f"after/{i}").upload(b"after")
    assert main2.commit(message="after restart").get_commit().parents == [before["kept"]["branches"]["main"]]
    assert second.stop() == 0


def test_kill_9_keeps_every_acknowledged_write(launch: Callable[..., LocalProcess], tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    first = launch("--data-dir", str(data_dir), env=WORKFLOWS)
    client = client_of(first)
    repo = lakefs.Repository("busy", client=client).create(
        storage_namespace=f"{client.storage_config.default_namespace_prefix}/busy"
    )
    gateway = gateway_of(first, first.access_key_id, first.secret_access_key)
    acked_objects: list[tuple[float, str, bytes]] = []
    acked_commits: list[tuple[float, str]] = []
    stop = threading.Event()

    def writer() -> None:
        """Uploads through the API and the gateway in turn, a commit every 8 uploads, until the stack dies."""
        main = repo.branch("main")
        i = 0
        try:
            while not stop.is_set():
                path, data = f"obj/{i:05d}", blob(f"k{i}", 200 + (i * 131) % 5000)
                if i % 2:
                    gateway.put_object(Bucket="busy", Key=f"main/{path}", Body=data)
                else:
                    main.object(path).upload(data)
                acked_objects.append((time.monotonic(), path, data))
                i += 1
                if i % 8 == 0:
                    commit_id = main.commit(message=f"batch {i}").get_commit().id
                    acked_commits.append((time.monotonic(), commit_id))
        except Exception:
            return

    thread = threading.Thread(target=writer)
    thread.start()
    deadline = time.monotonic() + 60
    while len(acked_commits) < 2 and time.monotonic() < deadline and thread.is_alive():
        time.sleep(0.05)
    time.sleep(0.4)  # kill in the middle of whatever it is doing
    killed_at = time.monotonic()
    first.process.send_signal(signal.SIGKILL)
    first.process.wait()
    stop.set()
    thread.join(timeout=60)
    assert len(acked_commits) >= 2, "the writer made too little progress to test anything"

    second = launch("--data-dir", str(data_dir), env=WORKFLOWS)
    recovered = data_line(second)
    assert re.match(r"restored a snapshot and [1-9]\d* journaled changes", recovered), recovered
    assert "answered differently" not in recovered
    repo2 = lakefs.Repository("busy", client=client_of(second))
    main = repo2.branch("main")
    log = [c.id for c in main.log()]
    for acked_at, commit_id in acked_commits:
        if acked_at <= killed_at - KILL_BOUND_SECONDS:
            assert commit_id in log, f"commit {commit_id} acknowledged {killed_at - acked_at:.3f} s before the kill"
    checked = 0
    for acked_at, path, data in acked_objects:
        if acked_at <= killed_at - KILL_BOUND_SECONDS:
            assert main.object(path).reader(mode="rb").read() == data, (path, killed_at - acked_at)
            checked += 1
    assert checked == len(acked_objects) >= 16
    # The restored stack takes writes and commits again.
    main.object("after-kill").upload(b"fine")
    assert main.commit(message="after kill").get_commit().parents == [log[0]]
    assert second.stop() == 0


def test_a_data_directory_of_another_format_is_refused(tmp_path: Path) -> None:
    data_dir = tmp_path / "future"
    (data_dir / "moto").mkdir(parents=True)
    (data_dir / "FORMAT").write_text(json.dumps({"kind": "lakelet-local-data", "format": 99}))
    (data_dir / "moto" / "snapshot-7.bin").write_bytes(b"from a later version")
    env = {k: v for k, v in os.environ.items() if not k.startswith("LAKELET_")}
    env["LAKELET_DATA_DIR"] = str(data_dir)  # the variable is read when no flag is given
    result = subprocess.run(
        [sys.executable, "-m", "lakelet", "up", "--api-port", "0", "--moto-port", "0", "--s3-port", "0"],
        cwd=PROJECT_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert result.returncode == 1, result
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert lines[-1].startswith("lakelet up: cannot start: data directory"), result.stderr
    assert "format 99, newer than this Lakelet reads" in lines[-1]
    assert "Traceback" not in result.stderr
    assert sorted(p.name for p in data_dir.iterdir()) == ["FORMAT", "moto"]  # nothing written, not even a lock
    assert (data_dir / "moto" / "snapshot-7.bin").read_bytes() == b"from a later version"


def test_a_damaged_journal_refuses_the_start_until_the_loss_is_accepted(
    launch: Callable[..., LocalProcess], tmp_path: Path
) -> None:
    from tests.lakelet.test_persistence_damage import flip, frame_holding, frames

    data_dir = tmp_path / "data"
    first = launch("--data-dir", str(data_dir))
    client = client_of(first)
    repo = lakefs.Repository("flipped", client=client).create(
        storage_namespace=f"{client.storage_config.default_namespace_prefix}/flipped"
    )
    for i in range(40):
        repo.branch("main").object(f"o/{i:02d}").upload(blob(f"f{i}", 300))
    first.process.send_signal(signal.SIGKILL)  # no clean-stop snapshot: the uploads are only in the journal
    first.process.wait()
    (journal_path,) = sorted((data_dir / "moto").glob("journal-*.log"))
    spans = frames(journal_path)
    third = spans[len(spans) // 3]
    flip(journal_path, third[0] + 8 + third[1] // 2)
    index = frame_holding(spans, third[0])
    files_before = {p: p.read_bytes() for p in data_dir.rglob("*") if p.is_file() and p.name != "lock"}

    env = {k: v for k, v in os.environ.items() if not k.startswith("LAKELET_")}
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "lakelet",
            "local",
            "--api-port",
            "0",
            "--moto-port",
            "0",
            "--s3-port",
            "0",
            "--data-dir",
            str(data_dir),
        ],
        cwd=PROJECT_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert result.returncode == 1, result
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert lines[-1].startswith(
        f"lakelet up: cannot start: journal {journal_path} at byte {third[0]} (a frame "
        f"that fails its checksum) is damaged, and {len(spans) - index - 1} journaled "
        "change(s) after it are readable"
    ), result.stderr
    assert "--accept-journal-loss" in lines[-1] and "Traceback" not in result.stderr
    assert {p: p.read_bytes() for p in data_dir.rglob("*") if p.is_file() and p.name != "lock"} == files_before

    second = launch("--data-dir", str(data_dir), "--accept-journal-loss")
    recovered = data_line(second)
    assert f"accepted the loss of journal {journal_path} at byte {third[0]}" in recovered, recovered
    (aside,) = data_dir.glob("damaged-*")
    assert (aside / journal_path.name).read_bytes() == files_before[journal_path]
    assert second.stop() == 0
    third_start = launch("--data-dir", str(data_dir))
    assert re.match(r"restored a snapshot and 0 journaled changes", data_line(third_start)), data_line(third_start)
    assert third_start.stop() == 0
