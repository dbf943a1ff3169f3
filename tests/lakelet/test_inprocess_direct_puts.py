"""The stack's own PutItem and PutObject past the WSGI chain (lakelet/stack/inprocess_direct.py, issue 43): a
PutItem's body is what botocore's serializer writes, the journal records what the lean pipeline's request would
record, the answers, stored objects and refusals are the lean pipeline's, a replay rebuilds the same items and
objects, the table-write witness counts a PutItem, and anything that must see the request (a layer in front of
moto, an event handler) or that botocore would send otherwise makes it take the lean pipeline."""

from __future__ import annotations

import errno
import json
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError, ParamValidationError

from lakelet.persistence import journal
from lakelet.stack import inprocess_direct, inprocess_lean, moto_fast_writes
from lakelet.stack.app_environment import Credentials
from lakelet.stack.local import LocalStack
from tests.lakelet.ddb_tables import create_keyed_table
from tests.lakelet.test_moto_fast_writes import stack_client
from tests.lakelet.test_persistence_store import crash_image

KEYS = Credentials("AKIADIRECTPUTSTEST00", "direct/puts+secret")
TABLE = "direct-puts"
BUCKET = "direct-puts"

PLAIN: list[dict[str, Any]] = [
    {"TableName": TABLE, "Item": {"h": {"S": "a"}, "r": {"S": "b"}}},
    {
        "TableName": TABLE,
        "Item": {
            "h": {"S": 'é \u2028 "q" \\ </>'},
            "r": {"S": "ü"},
            "n": {"N": "-1.5e3"},
            "t": {"BOOL": False},
            "z": {"NULL": True},
            "ss": {"SS": ["x", "y"]},
            "ns": {"NS": ["1", "2"]},
            "l": {"L": [{"S": "in"}, {"M": {"k": {"N": "1"}, "e": {"L": []}}}]},
            "m": {"M": {}},
        },
        "ReturnValues": "ALL_OLD",
        "ReturnConsumedCapacity": "TOTAL",
    },
    {"ReturnConsumedCapacity": "NONE", "Item": {"r": {"S": "1"}, "h": {"S": "0"}}, "TableName": TABLE},
]
# Each leaves the call to the lean pipeline: botocore validates or encodes it, or moto answers a form not listed.
NOT_PLAIN: list[dict[str, Any]] = [
    {"TableName": TABLE, "Item": {"h": {"S": "a"}, "r": {"B": b"bytes"}}},
    {"TableName": TABLE, "Item": {"h": {"S": "a"}, "r": {"BS": [b"x"]}}},
    {"TableName": TABLE, "Item": {"h": {"S": "a"}, "r": {"N": 1}}},
    {"TableName": TABLE, "Item": {"h": {"S": "a"}, "r": {"S": "b", "N": "1"}}},
    {"TableName": TABLE, "Item": {"h": {"S": "a"}, "r": {"SS": ["x", 1]}}},
    {"TableName": TABLE, "Item": {"h": {"S": "a"}}, "ConditionExpression": "attribute_not_exists(h)"},
    {"TableName": TABLE, "Item": {"h": {"S": "a"}}, "ReturnValues": "ALL_NEW"},
    {"TableName": TABLE, "Item": {}},
    {"TableName": "", "Item": {"h": {"S": "a"}}},
]


def _deep(levels: int) -> dict[str, Any]:
    value: dict[str, Any] = {"S": "bottom"}
    for _ in range(levels):
        value = {"L": [value]}
    return value


def test_the_body_of_a_plain_put_item_is_what_botocore_serializes() -> None:
    client = boto3.client(
        "dynamodb",
        region_name="us-east-1",
        endpoint_url="http://127.0.0.1:9",
        aws_access_key_id="k",
        aws_secret_access_key="s",
    )
    model = client.meta.service_model.operation_model("PutItem")
    for params in [*PLAIN, {"TableName": TABLE, "Item": {"h": {"S": "a"}, "d": _deep(31)}}]:
        assert inprocess_direct._plain(params), params
        assert json.dumps(params).encode() == client._serializer.serialize_to_request(params, model)["body"]
    for params in NOT_PLAIN + [{"TableName": TABLE, "Item": {"h": {"S": "a"}, "d": _deep(33)}}]:
        assert not inprocess_direct._plain(params), params
    with pytest.raises(ParamValidationError):  # what botocore says of a form the direct way leaves to it
        client._serializer.serialize_to_request(NOT_PLAIN[2], model)


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStack]:
    with LocalStack(api_port=0, credentials=KEYS, data_dir=tmp_path_factory.mktemp("direct") / "data") as running:
        create_keyed_table(_client(running), TABLE)
        _client(running, "s3").create_bucket(Bucket=BUCKET)
        yield running


def _client(stack: LocalStack, service: str = "dynamodb", **config: Any) -> Any:
    return stack_client(stack, service, **config)


@pytest.fixture
def lean_only(monkeypatch: pytest.MonkeyPatch) -> Callable[[], None]:
    """Switches the direct way off for the rest of the test."""
    return lambda: monkeypatch.setattr(inprocess_lean, "_direct", [])


def _answer(call: Callable[..., Any], **params: Any) -> Any:
    """The parsed answer without its request id (and an object's time), or the error's class, code, message and
    status."""
    try:
        answer = dict(call(**params))
    except ClientError as error:
        meta = error.response["ResponseMetadata"]
        return type(error).__name__, error.response["Error"], meta["HTTPStatusCode"]
    meta = answer.pop("ResponseMetadata")
    assert re.fullmatch("[A-Za-z0-9]{52}", meta["RequestId"]), meta
    headers = {k: v for k, v in meta["HTTPHeaders"].items() if k not in ("x-amzn-requestid", "last-modified")}
    return answer, meta["HTTPStatusCode"], headers, meta["RetryAttempts"]


def _last_record(stack: LocalStack) -> journal.Record:
    assert stack.persistence is not None and stack.persistence._journal is not None
    *_, record = journal.read_records(stack.persistence._journal.path)
    return record


def _request(record: journal.Record) -> tuple[dict[str, Any], bytes, int]:
    """What a replay runs: the environ (but the signing date) and the body, and the status recorded."""
    recorded = {
        key: value for key, value in record.environ.items() if key not in ("HTTP_X_AMZ_DATE", "HTTP_AUTHORIZATION")
    }
    scope = re.sub(r"/\d{8}/", "/DATE/", record.environ["HTTP_AUTHORIZATION"])
    return {**recorded, "scope": scope}, record.body, record.status


@pytest.mark.e2e
def test_answers_and_records_are_the_lean_pipelines(stack: LocalStack, lean_only: Callable[[], None]) -> None:
    dynamodb = _client(stack)

    def puts() -> list[Any]:
        seen = []
        for params in PLAIN:
            for _ in range(2):  # the second replaces the first: ALL_OLD returns it
                seen.append((_answer(dynamodb.put_item, **params), _request(_last_record(stack))))
            key = {name: params["Item"][name] for name in ("h", "r")}
            dynamodb.delete_item(TableName=TABLE, Key=key)
        return seen

    before = inprocess_direct.counters["direct"]
    direct = puts()
    assert inprocess_direct.counters["direct"] == before + 2 * len(PLAIN)
    lean_only()
    assert direct == puts()
    assert inprocess_direct.counters["direct"] == before + 2 * len(PLAIN)
    assert direct[3][0][0]["Attributes"] == PLAIN[1]["Item"]  # botocore's parser read the old item
    assert direct[3][0][0]["ConsumedCapacity"] == {"TableName": TABLE, "CapacityUnits": 1.0}


@pytest.mark.e2e
def test_refusals_are_the_lean_pipelines(stack: LocalStack, lean_only: Callable[[], None]) -> None:
    dynamodb = _client(stack)
    refused = [
        {"TableName": "no-such-table", "Item": {"h": {"S": "a"}, "r": {"S": "b"}}},
        {"TableName": TABLE, "Item": {"h": {"S": "refused"}}},  # the sort key missing
        {"TableName": TABLE, "Item": {"h": {"N": "1"}, "r": {"S": "b"}}},  # a key of the wrong type
        {"TableName": TABLE, "Item": {"h": {"S": ""}, "r": {"S": "b"}}},  # an empty key
    ]
    fast = moto_fast_writes.counters["fast"]
    direct = [_answer(dynamodb.put_item, **params) for params in refused]
    assert moto_fast_writes.counters["fast"] == fast  # each went through moto's own path, inside the direct way
    lean_only()
    assert direct == [_answer(dynamodb.put_item, **params) for params in refused]
    assert [(answer[1]["Code"], answer[2]) for answer in direct] == [
        ("ResourceNotFoundException", 400),
        *[("ValidationException", 400)] * 3,
    ], direct


@pytest.mark.e2e
def test_a_layer_in_front_of_moto_or_an_event_handler_sees_the_put(stack: LocalStack) -> None:
    dynamodb = _client(stack)
    server: Any = stack._moto._server  # type: ignore[union-attr]
    guard = server.app
    seen: list[str] = []

    def counting(environ: dict[str, Any], start_response: Any) -> Any:
        seen.append(environ.get("HTTP_X_AMZ_TARGET", ""))
        return guard(environ, start_response)

    before = inprocess_direct.counters["direct"]
    server.app = counting
    try:
        dynamodb.put_item(TableName=TABLE, Item={"h": {"S": "seen"}, "r": {"S": "1"}})
    finally:
        server.app = guard
    assert seen == ["DynamoDB_20120810.PutItem"]
    sent: list[bytes] = []
    dynamodb.meta.events.register("before-send.dynamodb.PutItem", lambda request, **_: sent.append(request.body))
    dynamodb.put_item(TableName=TABLE, Item={"h": {"S": "seen"}, "r": {"S": "2"}})
    assert json.loads(sent[0])["Item"]["r"] == {"S": "2"}
    assert inprocess_direct.counters["direct"] == before
    fresh = _client(stack)
    fresh.put_item(TableName=TABLE, Item={"h": {"S": "seen"}, "r": {"S": "3"}})
    assert inprocess_direct.counters["direct"] == before + 1


@pytest.mark.e2e
def test_a_put_of_a_watched_table_moves_its_witness(stack: LocalStack) -> None:
    branches = f"{stack.table_prefix}branches"
    witness = stack._table_writes.witness(branches)  # type: ignore[union-attr]
    mark = witness.mark()
    dynamodb = _client(stack)
    dynamodb.put_item(TableName=TABLE, Item={"h": {"S": "unwatched"}, "r": {"S": "1"}})
    assert witness.unchanged_since(mark)
    before = inprocess_direct.counters["direct"]
    key = _a_key(dynamodb, branches)
    dynamodb.put_item(TableName=branches, Item=key)
    assert inprocess_direct.counters["direct"] == before + 1
    assert not witness.unchanged_since(mark)
    dynamodb.delete_item(TableName=branches, Key=key)


def _a_key(dynamodb: Any, table: str) -> dict[str, Any]:
    """A key of the table that names no branch."""
    described = dynamodb.describe_table(TableName=table)["Table"]
    types = {one["AttributeName"]: one["AttributeType"] for one in described["AttributeDefinitions"]}
    return {key["AttributeName"]: {types[key["AttributeName"]]: "1"} for key in described["KeySchema"]}


OBJECTS: list[dict[str, Any]] = [
    {"Key": "data/a", "Body": b"hello"},
    {"Key": "data/gabc-0.x_y/z", "Body": b"", "ContentMD5": "1B2M2Y8AsgTpgAmY7PhCfg=="},
    {"Key": "k", "Body": bytes(range(256)) * 40, "ContentMD5": "not an md5 moto checks"},
]
# Each takes the lean pipeline: a header moto reads, a key botocore percent-encodes or moto's URL map changes.
NOT_PLAIN_OBJECTS: list[dict[str, Any]] = [
    {"Key": "m", "Body": b"m", "Metadata": {"a": "1"}},
    {"Key": "t", "Body": b"t", "ContentType": "text/csv"},
    {"Key": "c", "Body": b"c", "ChecksumAlgorithm": "SHA256"},
    {"Key": "é + space", "Body": b"e"},
    {"Key": "a//b", "Body": b"s"},
    {"Key": "a/../b", "Body": b"d"},
    {"Key": "s", "Body": "a string"},
]


def _object(s3: Any, key: str) -> Any:
    """What GetObject reads back: its fields, its body and its headers (the metadata moto stored)."""
    got = s3.get_object(Bucket=BUCKET, Key=key, ChecksumMode="ENABLED")
    seen = {k: v for k, v in got.items() if k not in ("ResponseMetadata", "Body", "LastModified")}
    headers = got["ResponseMetadata"]["HTTPHeaders"]
    kept = [(k, v) for k, v in headers.items() if k not in ("x-amzn-requestid", "last-modified", "date")]
    return seen, got["Body"].read(), kept


@pytest.mark.e2e
def test_object_puts_answer_store_and_record_as_the_lean_pipeline(
    stack: LocalStack, lean_only: Callable[[], None]
) -> None:
    s3 = _client(stack, "s3")

    def puts(objects: list[dict[str, Any]]) -> list[Any]:
        seen = []
        for params in objects:
            answer = _answer(s3.put_object, Bucket=BUCKET, **params)
            seen.append((answer, _request(_last_record(stack)), _object(s3, params["Key"])))
            s3.delete_object(Bucket=BUCKET, Key=params["Key"])
        return seen

    before = inprocess_direct.counters["direct"]
    direct = puts(OBJECTS)
    assert inprocess_direct.counters["direct"] == before + len(OBJECTS)
    lean = puts(NOT_PLAIN_OBJECTS)
    assert inprocess_direct.counters["direct"] == before + len(OBJECTS)
    lean_only()
    assert direct == puts(OBJECTS)
    assert lean == puts(NOT_PLAIN_OBJECTS)
    assert direct[0][0][0]["ChecksumCRC32"] == "NhCmhg=="


@pytest.mark.e2e
def test_an_answer_with_a_header_botocore_converts_is_read_by_its_parser(
    stack: LocalStack, lean_only: Callable[[], None]
) -> None:
    s3 = _client(stack, "s3")
    s3.create_bucket(Bucket="direct-puts-kms")
    rule = {"SSEAlgorithm": "aws:kms", "KMSMasterKeyID": "alias/direct"}
    s3.put_bucket_encryption(
        Bucket="direct-puts-kms",
        ServerSideEncryptionConfiguration={
            "Rules": [{"ApplyServerSideEncryptionByDefault": rule, "BucketKeyEnabled": True}]
        },
    )
    before = inprocess_direct.counters["direct"]
    direct = _answer(s3.put_object, Bucket="direct-puts-kms", Key="k", Body=b"x")
    assert inprocess_direct.counters["direct"] == before + 1
    lean_only()
    assert direct == _answer(s3.put_object, Bucket="direct-puts-kms", Key="k", Body=b"x")
    assert direct[0]["BucketKeyEnabled"] is True and direct[0]["ServerSideEncryption"] == "aws:kms"


@pytest.mark.e2e
def test_an_object_put_moto_refuses_is_refused_alike(stack: LocalStack, lean_only: Callable[[], None]) -> None:
    s3 = _client(stack, "s3")
    before = inprocess_direct.counters["direct"]
    direct = _answer(s3.put_object, Bucket="no-such-bucket", Key="k", Body=b"x")
    assert inprocess_direct.counters["direct"] == before + 1
    lean_only()
    assert direct == _answer(s3.put_object, Bucket="no-such-bucket", Key="k", Body=b"x")
    assert direct[1]["Code"] == "NoSuchBucket"


@pytest.mark.e2e
def test_a_client_that_sends_checksums_only_when_required_takes_the_lean_pipeline(stack: LocalStack) -> None:
    s3 = _client(stack, "s3", request_checksum_calculation="when_required")
    before = inprocess_direct.counters["direct"]
    s3.put_object(Bucket=BUCKET, Key="required", Body=b"r")
    assert inprocess_direct.counters["direct"] == before
    assert "ChecksumCRC32" not in s3.head_object(Bucket=BUCKET, Key="required", ChecksumMode="ENABLED")


# The tests below start stacks of their own: after those of the module's stack, which theirs would stop.
@pytest.mark.e2e
def test_direct_puts_replay_to_the_same_items(tmp_path: Path) -> None:
    items = [{"h": {"S": f"k{i % 3}"}, "r": {"S": "r"}, "n": {"N": str(i)}} for i in range(6)]
    with LocalStack(api_port=0, credentials=KEYS, data_dir=tmp_path / "data") as live:
        dynamodb = _client(live)
        create_keyed_table(dynamodb, "replayed")
        s3 = _client(live, "s3")
        s3.create_bucket(Bucket="replayed")
        before = inprocess_direct.counters["direct"]
        for i, item in enumerate(items):
            dynamodb.put_item(TableName="replayed", Item=item, ReturnValues="ALL_OLD")
            s3.put_object(Bucket="replayed", Key=f"k/{i % 4}", Body=f"v{i}".encode())
        assert inprocess_direct.counters["direct"] == before + 2 * len(items)
        image = crash_image(tmp_path / "data", tmp_path / "image")
        first = dynamodb.scan(TableName="replayed")["Items"], _objects(s3)
    with LocalStack(api_port=0, credentials=KEYS, data_dir=image) as again:
        assert again.persistence is not None and not again.persistence.recovery.mismatches
        items_again = _client(again).scan(TableName="replayed")["Items"]
        assert sorted(items_again, key=str) == sorted(first[0], key=str)
        assert _objects(_client(again, "s3")) == first[1]
    assert sorted(item["n"]["N"] for item in first[0]) == ["3", "4", "5"]
    assert [body for _, body in first[1].values()] == [b"v4", b"v5", b"v2", b"v3"]


def _objects(s3: Any) -> dict[str, Any]:
    listed = s3.list_objects_v2(Bucket="replayed")["Contents"]
    return {
        one["Key"]: (one["ETag"], s3.get_object(Bucket="replayed", Key=one["Key"])["Body"].read()) for one in listed
    }


@pytest.mark.e2e
def test_a_journal_that_cannot_be_written_refuses_a_direct_put(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with LocalStack(api_port=0, credentials=KEYS, data_dir=tmp_path / "data") as live:
        dynamodb = _client(live)
        create_keyed_table(dynamodb, "refused")

        def disk_full(*_: Any, **__: Any) -> None:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

        monkeypatch.setattr(journal.Journal, "append", disk_full)
        before = inprocess_direct.counters["direct"]
        with pytest.raises(ClientError) as refused:
            dynamodb.put_item(TableName="refused", Item={"h": {"S": "lost"}, "r": {"S": "1"}})
        assert inprocess_direct.counters["direct"] == before + 1
        assert refused.value.response["ResponseMetadata"]["HTTPStatusCode"] == 503
        assert "cannot write its journal" in str(refused.value)
        monkeypatch.undo()
