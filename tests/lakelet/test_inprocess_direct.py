"""In-process calls reach moto's callbacks without Flask (lakelet/stack/moto_direct.py, issue 43), under the same
journal: what they journal rebuilds the same state through recovery's WSGI replay, a journal that cannot be
written still refuses with 503, and what the direct path does not know goes the WSGI way."""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import flask
import pytest

from lakelet.persistence.journal import Journal
from lakelet.stack import inprocess_aws, moto_direct

from .ddb_tables import create_hash_table
from .test_persistence_store import Served, crash_image, wait_for

pytestmark = pytest.mark.e2e  # starts moto's server in this process

PASS = json.dumps({"StartAt": "P", "States": {"P": {"Type": "Pass", "Result": {"done": 1}, "End": True}}})
ROLE = "arn:aws:iam::123456789012:role/test"


class InProcess(Served):
    """Served, with this process's calls to it answered in process, as ``lakelet up`` answers its own."""

    def __init__(self, data_dir: Path) -> None:
        super().__init__(data_dir)
        inprocess_aws.install(self.url, self.server._server)

    def stop(self) -> None:
        inprocess_aws.uninstall()
        super().stop()


@pytest.fixture
def flask_calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The paths Flask's apps were called for (moto's own /moto-api aside: the fixture sets its config)."""
    calls: list[str] = []
    wsgi_app = flask.Flask.wsgi_app

    def counted(app: flask.Flask, environ: dict[str, Any], start_response: Any) -> Any:
        if not str(environ.get("PATH_INFO")).startswith("/moto-api"):
            calls.append(str(environ.get("PATH_INFO")))
        return wsgi_app(app, environ, start_response)

    monkeypatch.setattr(flask.Flask, "wsgi_app", counted)
    yield calls


def _state(s3: Any, dynamodb: Any, sfn: Any) -> dict[str, Any]:
    objects = {}
    for listed in s3.list_objects_v2(Bucket="bkt").get("Contents", []):
        got = s3.get_object(Bucket="bkt", Key=listed["Key"])
        objects[listed["Key"]] = (
            got["Body"].read(),
            got["ETag"],
            got["Metadata"],
            got["LastModified"],
            got.get("ContentType"),
        )
    items = sorted(dynamodb.scan(TableName="t")["Items"], key=lambda item: item["p"]["S"])
    executions = {}
    for machine in sfn.list_state_machines()["stateMachines"]:
        for execution in sfn.list_executions(stateMachineArn=machine["stateMachineArn"])["executions"]:
            described = sfn.describe_execution(executionArn=execution["executionArn"])
            executions[execution["executionArn"]] = {
                key: described.get(key) for key in ("status", "startDate", "stopDate", "input", "output")
            }
    return {"objects": objects, "items": items, "executions": executions}


def test_direct_calls_journal_what_a_replay_rebuilds(tmp_path: Path, flask_calls: list[str]) -> None:
    served = InProcess(tmp_path / "live")
    try:
        s3, dynamodb, sfn = served.client("s3"), served.client("dynamodb"), served.client("stepfunctions")
        before = dict(moto_direct.counters)
        s3.create_bucket(Bucket="bkt")
        create_hash_table(dynamodb, "t")
        for i in range(5):
            s3.put_object(
                Bucket="bkt", Key=f"k {i}+/é", Body=f"v{i}".encode() * 20, Metadata={"n": str(i), "with_under": "u"}
            )
            dynamodb.put_item(TableName="t", Item={"p": {"S": f"k{i}"}, "n": {"N": str(i)}})
        dynamodb.update_item(
            TableName="t",
            Key={"p": {"S": "k1"}},
            UpdateExpression="SET m = :m",
            ExpressionAttributeValues={":m": {"S": "x"}},
        )
        with pytest.raises(dynamodb.exceptions.ConditionalCheckFailedException) as failed:
            dynamodb.put_item(TableName="t", Item={"p": {"S": "k2"}}, ConditionExpression="attribute_not_exists(p)")
        assert failed.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400
        dynamodb.delete_item(TableName="t", Key={"p": {"S": "k3"}})
        upload = s3.create_multipart_upload(Bucket="bkt", Key="multi")["UploadId"]
        parts = [
            {
                "PartNumber": n,
                "ETag": s3.upload_part(Bucket="bkt", Key="multi", UploadId=upload, PartNumber=n, Body=body)["ETag"],
            }
            for n, body in ((1, b"a" * 5 * 1024 * 1024), (2, b"b" * 100))
        ]
        s3.complete_multipart_upload(Bucket="bkt", Key="multi", UploadId=upload, MultipartUpload={"Parts": parts})
        s3.copy_object(Bucket="bkt", Key="copied", CopySource={"Bucket": "bkt", "Key": "k 0+/é"})
        s3.delete_object(Bucket="bkt", Key="k 4+/é")
        with pytest.raises(s3.exceptions.NoSuchKey):
            s3.get_object(Bucket="bkt", Key="k 4+/é")
        assert s3.get_object(Bucket="bkt", Key="multi", Range="bytes=5242878-5242881")["Body"].read() == b"aabb"
        machine = sfn.create_state_machine(name="quick", roleArn=ROLE, definition=PASS)["stateMachineArn"]
        done = sfn.start_execution(stateMachineArn=machine, name="done", input='{"a": 1}')["executionArn"]
        assert wait_for(lambda: sfn.describe_execution(executionArn=done)["status"] == "SUCCEEDED")
        assert moto_direct.counters["wsgi"] == before["wsgi"]
        assert moto_direct.counters["direct"] - before["direct"] >= 25
        assert flask_calls == []  # not one of them went through Flask
        first = _state(s3, dynamodb, sfn)
        image = crash_image(tmp_path / "live", tmp_path / "image")
    finally:
        served.stop()

    again = Served(image)  # replays the journal through the WSGI path, into a fresh moto
    try:
        assert again.recovery.replayed >= 20 and not again.recovery.mismatches, again.recovery
        assert flask_calls  # the replay went through Flask
        rebuilt = _state(again.client("s3"), again.client("dynamodb"), again.client("stepfunctions"))
    finally:
        again.stop()
    assert rebuilt == first
    assert first["objects"]["k 1+/é"][2] == {"n": "1", "with_under": "u"}
    assert [item["p"]["S"] for item in first["items"]] == ["k0", "k1", "k2", "k4"]
    assert first["executions"][done]["status"] == "SUCCEEDED"


def test_an_unknown_service_goes_the_wsgi_way(tmp_path: Path, flask_calls: list[str]) -> None:
    served = InProcess(tmp_path / "live")
    try:
        before = dict(moto_direct.counters)
        queue = served.client("sqs").create_queue(QueueName="q")["QueueUrl"]
        assert queue.endswith("/q")
        assert moto_direct.counters["wsgi"] == before["wsgi"] + 1
        assert moto_direct.counters["direct"] == before["direct"]
        assert len(flask_calls) == 1
        served.client("dynamodb").list_tables()
        assert moto_direct.counters["direct"] == before["direct"] + 1 and len(flask_calls) == 1
    finally:
        served.stop()
    assert not moto_direct.installed()


def test_a_journal_that_cannot_be_written_refuses_direct_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    served = InProcess(tmp_path / "d")
    try:
        dynamodb = served.client("dynamodb")
        create_hash_table(dynamodb, "t")

        def disk_full(*_: Any, **__: Any) -> None:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

        monkeypatch.setattr(Journal, "append", disk_full)
        direct = moto_direct.counters["direct"]
        with pytest.raises(dynamodb.exceptions.ClientError) as refused:
            dynamodb.put_item(TableName="t", Item={"p": {"S": "lost"}})
        assert refused.value.response["ResponseMetadata"]["HTTPStatusCode"] == 503
        assert "cannot write its journal" in str(refused.value)
        assert moto_direct.counters["direct"] == direct + 1  # it ran the direct way, and was refused after
        assert "Item" not in dynamodb.get_item(TableName="t", Key={"p": {"S": "absent"}})  # reads still answer
    finally:
        monkeypatch.undo()
        served.stop()
