"""The plain PutObject and PutItem of an upload, answered from moto's backends (lakelet/stack/moto_fast_writes.py,
issue 43): the same answers, the same stored objects and items, the same refusals as moto's own response classes
give; anything else is left to moto; and what they journal rebuilds the same state through a replay."""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError
from moto.dynamodb.models import dynamodb_backends
from moto.dynamodb.models.dynamo_type import DynamoType
from moto.iam.models import get_account_id_from

from lakelet.stack import moto_fast_writes
from lakelet.stack.app_environment import Credentials
from lakelet.stack.local import LocalStack
from tests.lakelet.ddb_tables import create_hash_table
from tests.lakelet.test_inprocess_direct import InProcess
from tests.lakelet.test_persistence_store import Served, crash_image

pytestmark = pytest.mark.e2e  # starts the embedded stack (moto and the API), in this process

KEYS = Credentials("AKIAFASTWRITESTEST00", "fast/writes+secret")
BUCKET = "fast-writes"
VERSIONED = "fast-writes-versioned"
TABLE = "fast-writes"
INDEXED = "fast-writes-indexed"


@pytest.fixture(scope="module")
def stack() -> Iterator[LocalStack]:
    with LocalStack(api_port=0, credentials=KEYS) as running:
        s3, dynamodb = stack_client(running, "s3"), stack_client(running, "dynamodb")
        s3.create_bucket(Bucket=BUCKET)
        s3.create_bucket(Bucket=VERSIONED)
        s3.put_bucket_versioning(Bucket=VERSIONED, VersioningConfiguration={"Status": "Enabled"})
        keys = [{"AttributeName": "p", "KeyType": "HASH"}, {"AttributeName": "s", "KeyType": "RANGE"}]
        attributes = [{"AttributeName": "p", "AttributeType": "S"}, {"AttributeName": "s", "AttributeType": "S"}]
        dynamodb.create_table(
            TableName=TABLE, KeySchema=keys, AttributeDefinitions=attributes, BillingMode="PAY_PER_REQUEST"
        )
        dynamodb.create_table(
            TableName=INDEXED,
            KeySchema=keys,
            AttributeDefinitions=[*attributes, {"AttributeName": "g", "AttributeType": "N"}],
            GlobalSecondaryIndexes=[
                {
                    "IndexName": "by-g",
                    "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                    "Projection": {"ProjectionType": "ALL"},
                }
            ],
            BillingMode="PAY_PER_REQUEST",
        )
        yield running


def stack_client(stack: LocalStack, service: str, **config: Any) -> Any:
    """A client of the stack's moto with the stack's key (its calls are answered in process)."""
    keys = stack.aws_credentials
    return boto3.client(
        service,
        endpoint_url=stack.moto_url,
        region_name=stack.region,
        aws_access_key_id=keys.access_key_id,
        aws_secret_access_key=keys.secret_access_key,
        config=Config(retries={"max_attempts": 1}, **config),
    )


@pytest.fixture
def moto_only(monkeypatch: pytest.MonkeyPatch) -> Callable[[], None]:
    """Switches the fast answers off for the rest of the test (the stack's own PutItem past the WSGI chain,
    inprocess_direct.py, then goes through moto's own path)."""

    def switch_off() -> None:
        monkeypatch.setattr(moto_fast_writes, "answer", lambda *_: None)
        monkeypatch.setattr(moto_fast_writes, "put_item", lambda *_: None)

    return switch_off


def _answer(call: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """The parsed answer of ``call(*args, **kwargs)`` without its request id and date, or the error's class, code,
    message and status."""
    try:
        answer = dict(call(*args, **kwargs))
    except ClientError as error:
        meta = error.response["ResponseMetadata"]
        return (type(error).__name__, error.response["Error"], meta["HTTPStatusCode"])
    meta = answer.pop("ResponseMetadata")
    assert re.fullmatch("[A-Za-z0-9]{52}", meta["RequestId"]), meta
    headers = {k: v for k, v in meta["HTTPHeaders"].items() if k not in ("x-amzn-requestid", "date", "last-modified")}
    return answer, meta["HTTPStatusCode"], headers


def _object(s3: Any, bucket: str, key: str) -> Any:
    """What a reader of the object sees: body, ETag, metadata, checksum, storage, ACL, tags."""
    try:
        got = s3.get_object(Bucket=bucket, Key=key, ChecksumMode="ENABLED")
    except ClientError as error:
        return error.response["Error"]["Code"]
    seen = {k: v for k, v in got.items() if k not in ("ResponseMetadata", "Body", "LastModified", "VersionId")}
    seen["Body"] = got["Body"].read()
    seen["VersionId"] = "null" if got.get("VersionId") in (None, "null") else "drawn"
    seen["ACL"] = s3.get_object_acl(Bucket=bucket, Key=key)["Grants"]
    seen["Tags"] = s3.get_object_tagging(Bucket=bucket, Key=key)["TagSet"]
    return seen


PUTS: list[tuple[str, dict[str, Any]]] = [
    ("plain", {"Body": b"hello"}),
    ("empty", {"Body": b""}),
    ("odd key é+%20 &=?", {"Body": b"x" * 1000}),
    ("with md5", {"Body": b"abc", "ContentMD5": base64.b64encode(hashlib.md5(b"abc").digest()).decode()}),
    ("metadata", {"Body": b"m", "Metadata": {"a": "1"}}),
    ("typed", {"Body": b"t", "ContentType": "text/csv"}),
    ("tagged", {"Body": b"t", "Tagging": "a=b"}),
    ("acl", {"Body": b"t", "ACL": "public-read"}),
    ("class", {"Body": b"t", "StorageClass": "STANDARD_IA"}),
    ("sha256", {"Body": b"s", "ChecksumAlgorithm": "SHA256"}),
]
FAST_PUTS = {"plain", "empty", "odd key é+%20 &=?", "with md5"}


@pytest.mark.parametrize(("name", "params"), PUTS, ids=[name for name, _ in PUTS])
def test_a_put_object_answers_and_stores_as_moto_does(
    stack: LocalStack, moto_only: Callable[[], None], name: str, params: dict[str, Any]
) -> None:
    s3 = stack_client(stack, "s3", s3={"addressing_style": "path"})
    before = dict(moto_fast_writes.counters)
    fast = _answer(s3.put_object, Bucket=BUCKET, Key=f"fast/{name}", **params)
    taken = moto_fast_writes.counters["fast"] - before["fast"]
    assert taken == (1 if name in FAST_PUTS else 0)
    assert moto_fast_writes.counters["moto"] - before["moto"] == 1 - taken
    moto_only()
    slow = _answer(s3.put_object, Bucket=BUCKET, Key=f"moto/{name}", **params)
    assert fast == slow
    assert _object(s3, BUCKET, f"fast/{name}") == _object(s3, BUCKET, f"moto/{name}")


def test_puts_moto_must_answer_are_left_to_it(stack: LocalStack, moto_only: Callable[[], None]) -> None:
    s3 = stack_client(stack, "s3", s3={"addressing_style": "path"})
    calls = [
        lambda key: s3.put_object(Bucket="no-such-bucket", Key=key, Body=b"x"),
        lambda key: s3.put_object(Bucket=VERSIONED, Key=key, Body=b"v"),
        lambda key: s3.put_object(Bucket=BUCKET, Key=key, Body=b"once", IfNoneMatch="*"),
        lambda key: s3.put_object(Bucket=BUCKET, Key=key, Body=b"once", IfNoneMatch="*"),  # refused: it exists
        lambda key: s3.put_object(Bucket=BUCKET, Key=key.replace("/", "//"), Body=b"slashes"),
    ]
    before = dict(moto_fast_writes.counters)
    fast = [_answer(call, f"left/{i // 4}") for i, call in enumerate(calls)]
    assert moto_fast_writes.counters["fast"] == before["fast"]
    moto_only()
    slow = [_answer(call, f"moto-left/{i // 4}") for i, call in enumerate(calls)]
    assert fast[0][1]["Code"] == "NoSuchBucket"
    assert fast[3][1]["Code"] == "PreconditionFailed"
    assert [_without_version(a) for a in fast] == [_without_version(a) for a in slow]
    assert _object(s3, VERSIONED, "left/0") == _object(s3, VERSIONED, "moto-left/0")


def _without_version(answer: Any) -> Any:
    if isinstance(answer, tuple) and isinstance(answer[0], dict):
        answer[0].pop("VersionId", None)
        answer[2].pop("x-amz-version-id", None)
    return answer


ITEMS: list[dict[str, Any]] = [
    {"n": {"N": "1024"}, "e": {"S": "x" * 32}},
    {"b": {"B": b"\x00\x01\xff"}, "ok": {"BOOL": True}, "none": {"NULL": True}},
    {"ss": {"SS": ["a", "b"]}, "ns": {"NS": ["1", "2.5"]}, "bs": {"BS": [b"\x01"]}},
    {"l": {"L": [{"S": "x"}, {"N": "-1e3"}, {"M": {"k": {"S": 'é\u2028"\\'}}}]}},
]


@pytest.mark.parametrize("returns", ["NONE", "ALL_OLD"])
@pytest.mark.parametrize("capacity", ["NONE", "TOTAL"])
def test_a_put_item_answers_and_stores_as_moto_does(
    stack: LocalStack, moto_only: Callable[[], None], returns: str, capacity: str
) -> None:
    dynamodb = stack_client(stack, "dynamodb")

    partition = f"put-{returns}-{capacity}"

    def puts() -> list[Any]:
        answers = []
        for i, attributes in enumerate(ITEMS):
            for version in range(2):  # the second replaces the first: ALL_OLD returns it
                item = {"p": {"S": partition}, "s": {"S": str(i)}, "v": {"N": str(version)}, **attributes}
                call = {"ReturnValues": returns, "ReturnConsumedCapacity": capacity}
                answers.append(_answer(dynamodb.put_item, TableName=TABLE, Item=item, **call))
        return answers

    before = moto_fast_writes.counters["fast"]
    fast = puts()  # the same keys and values on both sides: the same bytes, so the same x-amz-crc32
    assert moto_fast_writes.counters["fast"] == before + 2 * len(ITEMS)
    stored = _stored(dynamodb, partition), _in_moto(partition), _updated(dynamodb, partition)
    for item in stored[0]:
        dynamodb.delete_item(TableName=TABLE, Key={"p": {"S": partition}, "s": item["s"]})
    moto_only()
    assert fast == puts()
    assert stored == (_stored(dynamodb, partition), _in_moto(partition), _updated(dynamodb, partition))
    assert len(stored[0]) == len(ITEMS)


def _in_moto(partition: str) -> list[Any]:
    """The partition's items as moto keeps them (types and Python values: bytes for binary values)."""
    table = dynamodb_backends[get_account_id_from(KEYS.access_key_id)]["us-east-1"].tables[TABLE]
    items = table.items[DynamoType({"S": partition})].values()  # type: ignore[attr-defined]
    return [{name: _plain(value) for name, value in item.attrs.items()} for item in items]


def _plain(value: Any) -> Any:
    inner = value.value
    if value.type == "L":
        inner = [_plain(one) for one in inner]
    elif value.type == "M":
        inner = {name: _plain(one) for name, one in inner.items()}
    return (value.type, type(inner).__name__, inner)


def _updated(dynamodb: Any, partition: str) -> list[Any]:
    """Each item as an UpdateItem returns it whole (its own writer of moto's stored values)."""
    return [
        dynamodb.update_item(
            TableName=TABLE,
            Key={"p": {"S": partition}, "s": {"S": str(i)}},
            UpdateExpression="SET u = :u",
            ExpressionAttributeValues={":u": {"N": "1"}},
            ReturnValues="ALL_NEW",
        )["Attributes"]
        for i in range(len(ITEMS))
    ]


def _stored(dynamodb: Any, partition: str) -> list[Any]:
    found = dynamodb.query(
        TableName=TABLE, KeyConditionExpression="p = :p", ExpressionAttributeValues={":p": {"S": partition}}
    )["Items"]
    return list(found)


def _nested(levels: int) -> dict[str, Any]:
    value: dict[str, Any] = {"S": "bottom"}
    for _ in range(levels):
        value = {"L": [value]}
    return value


def test_an_item_deeper_than_dynamodb_allows_is_left_to_moto(stack: LocalStack, moto_only: Callable[[], None]) -> None:
    dynamodb = stack_client(stack, "dynamodb")
    before = dict(moto_fast_writes.counters)
    deep = _answer(dynamodb.put_item, TableName=TABLE, Item={"p": {"S": "deep"}, "s": {"S": "0"}, "x": _nested(40)})
    assert moto_fast_writes.counters["fast"] == before["fast"]
    assert moto_fast_writes.counters["moto"] == before["moto"] + 1
    moto_only()
    assert deep == _answer(
        dynamodb.put_item, TableName=TABLE, Item={"p": {"S": "deep"}, "s": {"S": "0"}, "x": _nested(40)}
    )


def test_refused_put_items_are_refused_by_moto_and_store_nothing(
    stack: LocalStack, moto_only: Callable[[], None]
) -> None:
    dynamodb = stack_client(stack, "dynamodb")
    refused: list[tuple[str, dict[str, Any]]] = [
        ("no-such-table", {"p": {"S": "a"}, "s": {"S": "b"}}),
        (TABLE, {"p": {"S": ""}, "s": {"S": "b"}}),  # an empty key
        (TABLE, {"p": {"S": "refused"}}),  # the sort key missing
        (TABLE, {"p": {"N": "1"}, "s": {"S": "b"}}),  # a key of the wrong type
        (TABLE, {"p": {"S": "refused"}, "s": {"S": "big"}, "x": {"S": "x" * 410_000}}),  # over 400 KB
        (TABLE, {"p": {"S": "refused"}, "s": {"S": "empty set"}, "x": {"SS": []}}),
        (INDEXED, {"p": {"S": "refused"}, "s": {"S": "g"}, "g": {"NULL": True}}),  # an index key set to null
    ]

    def attempts() -> list[Any]:
        return [_answer(dynamodb.put_item, TableName=table, Item=item) for table, item in refused]

    before = dict(moto_fast_writes.counters)
    fast = attempts()
    moto_only()
    assert fast == attempts()
    assert moto_fast_writes.counters["fast"] == before["fast"]
    assert all(isinstance(answer[0], str) and answer[2] == 400 for answer in fast), fast
    assert _stored(dynamodb, "refused") == []


def test_an_iam_key_and_another_region_are_seen_as_moto_sees_them(
    tmp_path: Path, moto_only: Callable[[], None]
) -> None:
    """moto marks an IAM access key's last use at every request, and keeps DynamoDB's tables per region (the
    stack's guard takes only its own keys: this is moto under the journal alone)."""
    served = InProcess(tmp_path / "live")
    try:
        iam = served.client("iam")
        served.client("s3").create_bucket(Bucket="bkt")
        user = iam.create_user(UserName="fast-writer")["User"]["UserName"]

        def writes(key: Any, side: str) -> Any:
            def client(service: str) -> Any:
                return boto3.client(
                    service,
                    endpoint_url=served.url,
                    region_name="eu-west-1",
                    aws_access_key_id=key["AccessKeyId"],
                    aws_secret_access_key=key["SecretAccessKey"],
                    config=Config(s3={"addressing_style": "path"}),
                )

            s3, dynamodb = client("s3"), client("dynamodb")
            s3.put_object(Bucket="bkt", Key=f"{side}/by-iam-key", Body=b"k")
            s3_use = iam.get_access_key_last_used(AccessKeyId=key["AccessKeyId"])["AccessKeyLastUsed"]
            create_hash_table(dynamodb, f"{side}-regional")
            dynamodb.put_item(TableName=f"{side}-regional", Item={"p": {"S": "x"}})
            use = iam.get_access_key_last_used(AccessKeyId=key["AccessKeyId"])["AccessKeyLastUsed"]
            item = dynamodb.get_item(TableName=f"{side}-regional", Key={"p": {"S": "x"}})["Item"]
            return (s3_use["ServiceName"], s3_use["Region"]), (use["ServiceName"], use["Region"]), item

        before = moto_fast_writes.counters["fast"]
        fast = writes(iam.create_access_key(UserName=user)["AccessKey"], "fast")
        assert moto_fast_writes.counters["fast"] == before + 2
        moto_only()
        assert fast == writes(iam.create_access_key(UserName=user)["AccessKey"], "moto")
        assert fast[0] == ("s3", "eu-west-1") and fast[1] == ("dynamodb", "eu-west-1")
    finally:
        served.stop()


def test_fast_writes_journal_what_a_replay_rebuilds(tmp_path: Path) -> None:
    served = InProcess(tmp_path / "live")
    try:
        s3, dynamodb = served.client("s3"), served.client("dynamodb")
        s3.create_bucket(Bucket="bkt")
        create_hash_table(dynamodb, "t")
        before = moto_fast_writes.counters["fast"]
        for i in range(5):
            s3.put_object(Bucket="bkt", Key=f"k/{i}", Body=f"v{i}".encode() * 50)
            dynamodb.put_item(TableName="t", Item={"p": {"S": f"k{i % 3}"}, "n": {"N": str(i)}}, ReturnValues="ALL_OLD")
        assert moto_fast_writes.counters["fast"] - before == 10
        first = _replayable_state(s3, dynamodb)
        image = crash_image(tmp_path / "live", tmp_path / "image")
    finally:
        served.stop()
    again = Served(image)  # replays the journal through moto's own path
    try:
        assert again.recovery.replayed >= 12 and not again.recovery.mismatches, again.recovery
        assert _replayable_state(again.client("s3"), again.client("dynamodb")) == first
    finally:
        again.stop()
    assert first["items"] == [
        {"n": {"N": "3"}, "p": {"S": "k0"}},
        {"n": {"N": "4"}, "p": {"S": "k1"}},
        first["items"][2],
    ]


def _replayable_state(s3: Any, dynamodb: Any) -> dict[str, Any]:
    objects = {}
    for listed in s3.list_objects_v2(Bucket="bkt")["Contents"]:
        got = s3.get_object(Bucket="bkt", Key=listed["Key"], ChecksumMode="ENABLED")
        objects[listed["Key"]] = {k: v for k, v in got.items() if k not in ("ResponseMetadata", "Body")}
        objects[listed["Key"]]["Body"] = got["Body"].read()
    items = sorted(dynamodb.scan(TableName="t")["Items"], key=lambda item: item["p"]["S"])
    return {"objects": objects, "items": items}


def test_a_request_id_is_the_one_moto_draws_from_the_same_numbers() -> None:
    from moto.moto_api._internal import mock_random
    from moto.utilities.aws_headers import gen_amzn_requestid_long

    from lakelet.persistence import determinism

    installed = determinism.installed()
    determinism.install()  # as a stack with a data directory runs
    try:
        for seed in range(20):
            with determinism.pinned(seed, 0.0):
                ours = moto_fast_writes.request_id(), determinism.randbits()(32)
            with determinism.pinned(seed, 0.0):  # the same id, and the same draws after it
                assert ours == (gen_amzn_requestid_long(), determinism.randbits()(32))
        mock_random.seed(7)
        ours = moto_fast_writes.request_id(), mock_random.getrandbits(32)
        mock_random.seed(7)
        assert ours == (gen_amzn_requestid_long(), mock_random.getrandbits(32))
    finally:
        if not installed:
            determinism.uninstall()
    mock_random.seed(7)  # and without the pinning installed
    ours = moto_fast_writes.request_id(), mock_random.getrandbits(32)
    mock_random.seed(7)
    assert ours == (gen_amzn_requestid_long(), mock_random.getrandbits(32))
