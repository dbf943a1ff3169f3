"""lakelet.persistence.Persistence around a bare moto server (no app): what a crash leaves on disk is enough to
rebuild moto's state, across snapshots taken while it runs, with the same IDs, and Step Functions executions
keep their ends or are marked cut off.

A "crash" here is a copy of the data directory taken while the server runs: the files as the kernel has them,
which is what a ``kill -9`` leaves (the journal is written before each answer; nothing waits for a clean stop).
"""

from __future__ import annotations

import contextlib
import copy
import json
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
import requests
from botocore.config import Config

from lakelet.persistence import Persistence, workflows

pytestmark = pytest.mark.e2e  # starts moto's server in this process

ROLE = "arn:aws:iam::123456789012:role/test"


@pytest.fixture(autouse=True)
def _moto_config() -> Iterator[None]:
    from moto.core.config import default_user_config

    saved = copy.deepcopy(dict(default_user_config))
    yield
    default_user_config.clear()  # type: ignore[attr-defined]
    default_user_config.update(saved)  # type: ignore[typeddict-item]


class Served:
    """A Persistence on ``data_dir`` and moto's server in front of it, with boto3 clients."""

    def __init__(self, data_dir: Path, **options: Any) -> None:
        self.persistence = Persistence(data_dir, **options)
        self.recovery = self.persistence.open()
        self.server = self.persistence.server("127.0.0.1", 0)
        self.server.start()
        host, port = self.server.get_host_and_port()
        self.url = f"http://{host}:{port}"
        requests.post(
            f"{self.url}/moto-api/config", json={"stepfunctions": {"execute_state_machine": True}}, timeout=10
        ).raise_for_status()

    def client(self, service: str) -> Any:
        return boto3.client(
            service,
            endpoint_url=self.url,
            region_name="us-east-1",
            aws_access_key_id="k",
            aws_secret_access_key="s",
            config=Config(retries={"max_attempts": 1}),
        )

    def stop(self) -> None:
        self.server.stop()
        server = getattr(self.server, "_server", None)
        if server is not None:
            server.server_close()
        self.persistence.close()


def crash_image(data_dir: Path, target: Path, live: Persistence | None = None) -> Path:
    """A copy of ``data_dir`` as a kill leaves it. ``live``: the store still running on it, whose background
    snapshots are held off while copying, so the copy is of one instant (none removes a file mid-copy)."""
    with live._snapshot_lock if live is not None else contextlib.nullcontext():
        shutil.copytree(data_dir, target)
    (target / "lock").unlink(missing_ok=True)  # the kernel drops a dead process's lock
    return target


def wait_for(check: Any, timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.05)


def test_a_crash_image_rebuilds_moto_across_snapshots(tmp_path: Path) -> None:
    served = Served(tmp_path / "live", snapshot_records=15)
    try:
        s3, kms, dynamodb = served.client("s3"), served.client("kms"), served.client("dynamodb")
        s3.create_bucket(Bucket="bkt")
        key_id = kms.create_key()["KeyMetadata"]["KeyId"]
        sealed = kms.encrypt(KeyId=key_id, Plaintext=b"a secret")["CiphertextBlob"]
        dynamodb.create_table(
            TableName="t",
            KeySchema=[{"AttributeName": "p", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "p", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
        for i in range(40):  # enough for two snapshots in the background
            s3.put_object(Bucket="bkt", Key=f"k{i}", Body=f"v{i}".encode())
            dynamodb.put_item(TableName="t", Item={"p": {"S": f"k{i}"}, "n": {"N": str(i)}})
        upload = s3.create_multipart_upload(Bucket="bkt", Key="multi")["UploadId"]
        part = s3.upload_part(Bucket="bkt", Key="multi", UploadId=upload, PartNumber=1, Body=b"m" * 1000)["ETag"]
        s3.delete_object(Bucket="bkt", Key="k3")
        moto_dir = tmp_path / "live" / "moto"
        assert wait_for(lambda: min(int(p.stem.split("-")[1]) for p in moto_dir.glob("snapshot-*.bin")) >= 3)
        last_modified = s3.head_object(Bucket="bkt", Key="k7")["LastModified"]
        image = crash_image(tmp_path / "live", tmp_path / "image", served.persistence)  # snapshots every 15 records
    finally:
        served.stop()

    again = Served(image)
    try:
        assert again.recovery.replayed > 0 and not again.recovery.mismatches, again.recovery
        s3, kms, dynamodb = again.client("s3"), again.client("kms"), again.client("dynamodb")
        keys = {o["Key"] for o in s3.list_objects_v2(Bucket="bkt")["Contents"]}
        assert keys == {f"k{i}" for i in range(40)} - {"k3"}
        assert s3.get_object(Bucket="bkt", Key="k39")["Body"].read() == b"v39"
        assert s3.head_object(Bucket="bkt", Key="k7")["LastModified"] == last_modified
        assert dynamodb.get_item(TableName="t", Key={"p": {"S": "k21"}})["Item"]["n"] == {"N": "21"}
        assert kms.decrypt(KeyId=key_id, CiphertextBlob=sealed)["Plaintext"] == b"a secret"
        # The upload id moto made first is the one it made again: the client can finish the upload.
        s3.complete_multipart_upload(
            Bucket="bkt", Key="multi", UploadId=upload, MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": part}]}
        )
        assert s3.get_object(Bucket="bkt", Key="multi")["Body"].read() == b"m" * 1000
    finally:
        again.stop()
    # The clean stop left one snapshot and an empty journal: the next start replays nothing.
    third = Served(image)
    try:
        assert third.recovery.replayed == 0 and third.recovery.snapshot is not None
        assert third.client("s3").get_object(Bucket="bkt", Key="multi")["Body"].read() == b"m" * 1000
    finally:
        third.stop()


def test_workflow_executions_keep_their_end_or_are_marked_cut_off(tmp_path: Path) -> None:
    served = Served(tmp_path / "live")
    try:
        sfn = served.client("stepfunctions")
        quick = sfn.create_state_machine(
            name="quick",
            roleArn=ROLE,
            definition=json.dumps(
                {"StartAt": "P", "States": {"P": {"Type": "Pass", "Result": {"done": 1}, "End": True}}}
            ),
        )
        slow = sfn.create_state_machine(
            name="slow",
            roleArn=ROLE,
            definition=json.dumps({"StartAt": "W", "States": {"W": {"Type": "Wait", "Seconds": 600, "End": True}}}),
        )
        done = sfn.start_execution(stateMachineArn=quick["stateMachineArn"], name="done", input="{}")
        assert wait_for(lambda: sfn.describe_execution(executionArn=done["executionArn"])["status"] == "SUCCEEDED")
        running = sfn.start_execution(stateMachineArn=slow["stateMachineArn"], name="running", input="{}")
        first_look = sfn.describe_execution(executionArn=done["executionArn"])
        image = crash_image(tmp_path / "live", tmp_path / "image")
    finally:
        served.stop()

    again = Served(image)
    try:
        assert running["executionArn"] in again.recovery.orphans
        sfn = again.client("stepfunctions")
        ended = sfn.describe_execution(executionArn=done["executionArn"])
        assert (ended["status"], json.loads(ended["output"]), ended["startDate"], ended["stopDate"]) == (
            "SUCCEEDED",
            {"done": 1},
            first_look["startDate"],
            first_look["stopDate"],
        )
        cut = sfn.describe_execution(executionArn=running["executionArn"])
        assert (cut["status"], cut["error"]) == ("FAILED", workflows.ORPHAN_ERROR)
        # Both machines are still there and run new executions.
        again_done = sfn.start_execution(stateMachineArn=quick["stateMachineArn"], name="again", input="{}")
        assert wait_for(
            lambda: sfn.describe_execution(executionArn=again_done["executionArn"])["status"] == "SUCCEEDED"
        )
    finally:
        again.stop()


def test_writes_after_close_are_refused_not_lost(tmp_path: Path) -> None:
    served = Served(tmp_path / "live")
    s3 = served.client("s3")
    s3.create_bucket(Bucket="bkt")
    served.persistence.close()  # as at a stop, before the server is gone: later writes cannot be journaled
    try:
        with pytest.raises(Exception, match=r"ServiceUnavailable|503"):
            s3.put_object(Bucket="bkt", Key="late", Body=b"x")
        assert s3.list_objects_v2(Bucket="bkt").get("KeyCount") == 0  # reads still answer
    finally:
        served.server.stop()


def test_writes_go_on_while_a_snapshot_is_being_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The write lock is not held while a snapshot is pickled and written: with the snapshot's writer held
    back (until a marker file exists), a write is answered, and it is in the journal the snapshot started."""
    import threading

    from lakelet.persistence import snapshot

    marker = tmp_path / "go-on"
    real_write = snapshot.write

    def held_back(out: Any) -> None:
        deadline = time.monotonic() + 60
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        real_write(out)

    served = Served(tmp_path / "d")
    try:
        s3 = served.client("s3")
        s3.create_bucket(Bucket="bkt")
        monkeypatch.setattr(snapshot, "write", held_back)
        moto_dir = tmp_path / "d" / "moto"
        snapshotting = threading.Thread(target=served.persistence.snapshot)
        snapshotting.start()
        assert wait_for(lambda: list(moto_dir.glob(".snapshot-*.tmp")))  # the snapshot is under way
        writing = threading.Thread(target=lambda: s3.put_object(Bucket="bkt", Key="during", Body=b"d"))
        writing.start()
        writing.join(timeout=30)
        answered_during_snapshot = not writing.is_alive() and not marker.exists()
        marker.touch()
        snapshotting.join(timeout=60)
        writing.join(timeout=60)
        assert answered_during_snapshot, "a write waited for the snapshot to be written"
        assert not snapshotting.is_alive()
        assert sorted(p.name for p in moto_dir.glob("snapshot-*.bin")) == ["snapshot-2.bin"]
        image = crash_image(tmp_path / "d", tmp_path / "image")
    finally:
        monkeypatch.undo()
        served.stop()
    again = Served(image)
    try:
        assert again.recovery.replayed >= 1 and not again.recovery.mismatches
        assert again.client("s3").get_object(Bucket="bkt", Key="during")["Body"].read() == b"d"
    finally:
        again.stop()


def test_a_spilled_value_deleted_during_a_snapshot_is_in_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The snapshot's forked writer reads spilled S3 values from their files (lakelet/stack/moto_memory.py): a
    value deleted after the fork keeps its file until the writer is done, so the snapshot holds it."""
    import threading

    from lakelet.persistence import snapshot
    from lakelet.stack import moto_memory

    was_installed = moto_memory.installed()
    moto_memory.install(tmp_path, spill_bytes=1024)
    marker = tmp_path / "go-on"
    real_write = snapshot.write

    def held_back(out: Any) -> None:
        deadline = time.monotonic() + 60
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        real_write(out)

    big = bytes(range(256)) * 40
    served = Served(tmp_path / "d", keep_files=moto_memory.files_kept)
    try:
        s3 = served.client("s3")
        s3.create_bucket(Bucket="bkt")
        s3.put_object(Bucket="bkt", Key="big", Body=big)
        monkeypatch.setattr(snapshot, "write", held_back)
        snapshotting = threading.Thread(target=served.persistence.snapshot)
        snapshotting.start()
        assert wait_for(lambda: list((tmp_path / "d" / "moto").glob(".snapshot-*.tmp")))
        s3.delete_object(Bucket="bkt", Key="big")  # after the fork: the child's copy still names the file
        marker.touch()
        snapshotting.join(timeout=60)
        assert not snapshotting.is_alive()
    finally:
        monkeypatch.undo()
        served.server.stop()
        if not was_installed:
            moto_memory.uninstall()
    [written] = (tmp_path / "d" / "moto").glob("snapshot-2.bin")
    snapshot.load(written)  # the state at the fork: the key and its bytes
    from moto.s3.models import s3_backends

    [key] = list(s3_backends["123456789012"]["aws"].buckets["bkt"].keys.values())
    assert key.value == big
    served.persistence.close()
