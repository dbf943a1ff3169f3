"""lakelet/stack/moto_answers.py writes moto's DynamoDB answers that carry items exactly as moto's own path does.

Each scenario runs twice in a fresh ``mock_aws``, through boto3: once with moto as it is (no lakelet patch at all)
and once with the stack's patches (lakelet/stack/moto_speedups.py installs them all); every answer's status,
Content-Type and body must be the same bytes. The scenarios cover every kind of attribute value, unicode, empty
strings, projections, Select=COUNT, filters, Limit, ExclusiveStartKey, reverse order, the 1 MB cut of a page,
ConsumedCapacity, the write operations' ReturnValues, BatchGetItem, Scan and errors.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from typing import Any

import boto3
import moto.dynamodb.responses as moto_responses
import pytest
from moto import mock_aws
from moto.core.responses import BaseResponse

from lakelet.stack import moto_answers, moto_speedups
from tests.lakelet.ddb_tables import create_keyed_table

REGION = "us-east-1"
TABLE = "answers"
NUMBERED = "numbered"
Answer = tuple[int, str, bytes]


@pytest.fixture(autouse=True)
def restored() -> Iterator[None]:
    """The patches as they were before the test (tests/lakelet's patches must leave moto as they found it)."""
    was = moto_speedups.installed()
    try:
        yield
    finally:
        if was:
            moto_speedups.install()
        else:
            moto_speedups.uninstall()


def _answers(scenario: Callable[[Any], None], patched: bool) -> list[Answer]:
    if patched:
        moto_speedups.install()
    else:
        moto_speedups.uninstall()
    answers: list[Answer] = []
    with mock_aws():
        ddb = boto3.client("dynamodb", region_name=REGION)

        def record(http_response: Any, **_: Any) -> None:
            answers.append(
                (http_response.status_code, http_response.headers.get("Content-Type"), http_response.content)
            )

        _tables(ddb)
        ddb.meta.events.register("after-call.dynamodb", record)
        scenario(ddb)
    return answers


def same_as_moto(scenario: Callable[[Any], None], fast_path: bool = True) -> list[Answer]:
    """The scenario's answers with the patches, after checking they are moto's own, byte for byte."""
    moto_answers_before = moto_answers.counters["fast"]
    slow = _answers(scenario, patched=False)
    assert moto_answers.counters["fast"] == moto_answers_before  # moto's own path only
    fast = _answers(scenario, patched=True)
    assert (moto_answers.counters["fast"] > moto_answers_before) is fast_path  # the fast path wrote some of them
    assert len(fast) == len(slow)
    for mine, moto_own in zip(fast, slow, strict=True):
        assert mine == moto_own
    return fast


def _tables(ddb: Any) -> None:
    for name, range_type in ((TABLE, "S"), (NUMBERED, "N")):
        create_keyed_table(ddb, name, range_type)


def staged(h: str, i: int) -> dict[str, Any]:
    """A row shaped like the staging table's."""
    return {
        "h": {"S": h},
        "r": {"S": f"data/obj-{i:04d}"},
        "tombstone": {"BOOL": i % 7 == 0},
        "physical_address": {"S": f"s3://bucket/ns/{i:08x}"},
        "size": {"N": str(1000 + i)},
        "etag": {"S": f"{i:032x}"},
        "mtime": {"N": "1733100000"},
        "content_type": {"S": "application/octet-stream"},
        "user_metadata": {"S": '{"a": "é"}' if i % 3 else "{}"},
    }


VARIED: list[dict[str, Any]] = [
    {
        "h": {"S": "v"},
        "r": {"S": "a"},
        "n": {"N": "-1.5e3"},
        "m": {
            "M": {
                "s": {"S": "x"},
                "l": {"L": [{"N": "1"}, {"NULL": True}, {"M": {}}, {"L": []}, {"SS": ["q"]}]},
                "b": {"BOOL": False},
                "e": {"S": ""},
                "ü": {"M": {"deep": {"L": [{"M": {"x": {"N": "0"}}}]}}},
            }
        },
        "ss": {"SS": ["b", "a"]},
        "ns": {"NS": ["1", "2.5", "-3"]},
        "t": {"BOOL": True},
        "z": {"NULL": True},
        "u": {"S": 'é\u2603\n"\\ \U0001f600'},
        "empty": {"S": ""},
        "Ω name": {"S": "unicode name"},
        "el": {"L": []},
        "em": {"M": {}},
    },
    {"h": {"S": "v"}, "r": {"S": "b"}, "bin": {"B": b"\x00\xff"}, "bs": {"BS": [b"a", b"b"]}},
    {"h": {"S": "v"}, "r": {"S": "c"}, "mb": {"M": {"b": {"B": b"z"}}}, "lb": {"L": [{"S": "x"}, {"B": b"y"}]}},
    {"h": {"S": "v"}, "r": {"S": "d"}, "only": {"S": "keys and one"}},
    {"h": {"S": "v"}, "r": {"S": "é"}, "n": {"N": "7"}, "s": {"S": "after the others"}},
]


def _put_all(ddb: Any, items: list[dict[str, Any]], table: str = TABLE) -> None:
    for item in items:
        ddb.put_item(TableName=table, Item=item)


def _query(ddb: Any, h: str, **extra: Any) -> None:
    values = {":h": {"S": h}, **extra.pop("values", {})}
    ddb.query(TableName=TABLE, KeyConditionExpression=extra.pop("condition", "h = :h"), **extra, **_values(values))


def _values(values: dict[str, Any]) -> dict[str, Any]:
    return {"ExpressionAttributeValues": values}


def test_query_pages_of_staged_rows() -> None:
    def scenario(ddb: Any) -> None:
        _put_all(ddb, [staged("t", i) for i in range(60)])
        start: dict[str, Any] | None = None
        for forward in (True, False):
            while True:
                request: dict[str, Any] = {"ConsistentRead": True, "Limit": 25, "ScanIndexForward": forward}
                if start:
                    request["ExclusiveStartKey"] = start
                page = ddb.query(
                    TableName=TABLE,
                    KeyConditionExpression="h = :h",
                    ExpressionAttributeValues={":h": {"S": "t"}},
                    ReturnConsumedCapacity="TOTAL",
                    **request,
                )
                start = page.get("LastEvaluatedKey")
                if not start:
                    break
        _query(ddb, "t", ReturnConsumedCapacity="INDEXES")
        _query(ddb, "t", Select="COUNT")
        _query(ddb, "t", condition="h = :h AND r >= :r", values={":r": {"S": "data/obj-0050"}}, Limit=3)
        _query(ddb, "t", condition="h = :h AND begins_with(r, :r)", values={":r": {"S": "data/obj-001"}})
        _query(ddb, "t", FilterExpression="tombstone = :f", values={":f": {"BOOL": True}}, Limit=20)
        _query(ddb, "t", ProjectionExpression="r, #s", ExpressionAttributeNames={"#s": "size"}, Limit=4)
        _query(ddb, "nobody")

    answers = same_as_moto(scenario)
    assert len(answers) > 60 + 10


def test_every_kind_of_value_in_every_item_answer() -> None:
    def scenario(ddb: Any) -> None:
        _put_all(ddb, VARIED)
        _query(ddb, "v")
        _query(ddb, "v", ScanIndexForward=False, Limit=2)
        _query(ddb, "v", ProjectionExpression="m.l, u, #n", ExpressionAttributeNames={"#n": "Ω name"})
        _query(ddb, "v", ExclusiveStartKey={"h": {"S": "v"}, "r": {"S": "b"}}, ReturnConsumedCapacity="TOTAL")
        _query(ddb, "v", Select="COUNT", ReturnConsumedCapacity="INDEXES")
        for r in ("a", "b", "c", "missing"):
            ddb.get_item(TableName=TABLE, Key={"h": {"S": "v"}, "r": {"S": r}}, ReturnConsumedCapacity="TOTAL")
        ddb.get_item(TableName=TABLE, Key={"h": {"S": "v"}, "r": {"S": "a"}}, ProjectionExpression="ss, z, m.ü")
        ddb.get_item(TableName=TABLE, Key={"h": {"S": "v"}, "r": {"S": "a"}}, AttributesToGet=["n", "t"])
        ddb.batch_get_item(
            RequestItems={
                TABLE: {"Keys": [{"h": {"S": "v"}, "r": {"S": r}} for r in ("a", "d", "é", "gone")]},
                NUMBERED: {"Keys": [{"h": {"S": "v"}, "r": {"N": "1"}}]},
            },
            ReturnConsumedCapacity="TOTAL",
        )
        ddb.batch_get_item(RequestItems={TABLE: {"Keys": [{"h": {"S": "v"}, "r": {"S": "b"}}]}})
        ddb.scan(TableName=TABLE, Limit=3)
        ddb.scan(TableName=TABLE, FilterExpression="attribute_exists(n)")

    same_as_moto(scenario)


def test_writes_with_return_values() -> None:
    def scenario(ddb: Any) -> None:
        _put_all(ddb, VARIED[:1])
        key = {"h": {"S": "v"}, "r": {"S": "a"}}
        ddb.put_item(TableName=TABLE, Item={**VARIED[0], "extra": {"S": "x"}}, ReturnValues="ALL_OLD")
        ddb.put_item(TableName=TABLE, Item=staged("v", 1), ReturnValues="ALL_OLD", ReturnConsumedCapacity="TOTAL")
        ddb.put_item(TableName=TABLE, Item=staged("v", 2))
        for return_values in ("ALL_NEW", "UPDATED_OLD", "UPDATED_NEW", "ALL_OLD", "NONE"):
            ddb.update_item(
                TableName=TABLE,
                Key=key,
                UpdateExpression="SET n = n + :one, l = list_append(if_not_exists(l, :empty), :more)",
                ExpressionAttributeValues={":one": {"N": "1"}, ":empty": {"L": []}, ":more": {"L": [{"S": "é"}]}},
                ReturnValues=return_values,
            )
        ddb.update_item(
            TableName=TABLE,
            Key={"h": {"S": "v"}, "r": {"S": "bin"}},
            UpdateExpression="SET b = :b",
            ExpressionAttributeValues={":b": {"B": b"\x01"}},
            ReturnValues="ALL_NEW",
        )
        ddb.delete_item(TableName=TABLE, Key={"h": {"S": "v"}, "r": {"S": "bin"}}, ReturnValues="ALL_OLD")
        ddb.delete_item(TableName=TABLE, Key=key, ReturnValues="ALL_OLD", ReturnConsumedCapacity="TOTAL")
        ddb.delete_item(TableName=TABLE, Key=key, ReturnValues="ALL_OLD")
        with pytest.raises(ddb.exceptions.ConditionalCheckFailedException):
            ddb.put_item(
                TableName=TABLE,
                Item=staged("v", 2),
                ConditionExpression="attribute_not_exists(r)",
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )

    same_as_moto(scenario)


def test_errors_are_moto_s() -> None:
    def scenario(ddb: Any) -> None:
        with pytest.raises(ddb.exceptions.ResourceNotFoundException):
            ddb.query(TableName="nope", KeyConditionExpression="h = :h", ExpressionAttributeValues={":h": {"S": "x"}})
        with pytest.raises(ddb.exceptions.ClientError):
            ddb.query(TableName=TABLE, KeyConditionExpression="h = :h", ExpressionAttributeValues={":x": {"S": "x"}})
        with pytest.raises(ddb.exceptions.ClientError):
            ddb.get_item(TableName=TABLE, Key={"h": {"S": "v"}})
        with pytest.raises(ddb.exceptions.ClientError):
            _query(ddb, "v", ReturnConsumedCapacity="SOME")

    answers = same_as_moto(scenario, fast_path=False)
    assert all(status == 400 for status, _, _ in answers)


def test_a_page_cut_at_1_mb_and_number_range_keys() -> None:
    def scenario(ddb: Any) -> None:
        big = [{"h": {"S": "big"}, "r": {"S": f"{i:03d}"}, "pad": {"S": "é" * 45_000}} for i in range(30)]
        _put_all(ddb, big)
        start: dict[str, Any] | None = None
        while True:
            page = ddb.query(
                TableName=TABLE,
                KeyConditionExpression="h = :h",
                ExpressionAttributeValues={":h": {"S": "big"}},
                **({"ExclusiveStartKey": start} if start else {}),
            )
            start = page.get("LastEvaluatedKey")
            if not start:
                break
        _put_all(ddb, [{"h": {"S": "n"}, "r": {"N": str(i)}, "v": {"S": "x"}} for i in (10, 9, 100, -1)], NUMBERED)
        ddb.query(
            TableName=NUMBERED,
            KeyConditionExpression="h = :h AND r > :r",
            ExpressionAttributeValues={":h": {"S": "n"}, ":r": {"N": "0"}},
            Limit=2,
        )

    answers = same_as_moto(scenario)
    assert any(b'"LastEvaluatedKey"' in body for _, _, body in answers)


def test_the_fast_path_answers_staged_pages_and_leaves_binary_to_moto() -> None:
    moto_speedups.install()
    with mock_aws():
        ddb = boto3.client("dynamodb", region_name=REGION)
        _tables(ddb)
        _put_all(ddb, [staged("t", i) for i in range(5)])
        _put_all(ddb, VARIED[1:2])
        fast, slow = moto_answers.counters["fast"], moto_answers.counters["moto"]
        _query(ddb, "t", ConsistentRead=True, ReturnConsumedCapacity="TOTAL")
        assert (moto_answers.counters["fast"], moto_answers.counters["moto"]) == (fast + 1, slow)
        _query(ddb, "v")  # a binary attribute: moto's path
        assert (moto_answers.counters["fast"], moto_answers.counters["moto"]) == (fast + 1, slow + 1)
        ddb.describe_table(TableName=TABLE)  # not an item answer: moto's path
        assert (moto_answers.counters["fast"], moto_answers.counters["moto"]) == (fast + 1, slow + 2)


def test_enrich_response_leaves_xml_request_ids_to_moto() -> None:
    moto_speedups.install()
    headers: dict[str, Any] = {"status": 200}
    headers, body = BaseResponse._enrich_response(headers, "<R><RequestId>old</RequestId></R>")
    assert body == f"<R><RequestId>{headers['x-amzn-requestid']}</RequestId></R>"
    assert headers["status"] == "200"
    json_body = '{"Items": [{"s": {"S": "<RequestI"}}]}'
    headers, body = BaseResponse._enrich_response({"status": 400}, json_body)
    assert body is json_body
    assert headers["status"] == "400" and len(headers["x-amzn-requestid"]) == 52
    headers, body = BaseResponse._enrich_response({}, b"bytes <RequestId>x</RequestId>")
    assert body == b"bytes <RequestId>x</RequestId>" and "x-amzn-requestid" in headers


def test_install_and_uninstall_are_idempotent_and_give_moto_back() -> None:
    moto_speedups.uninstall()
    original_result = moto_responses.DynamoResult
    original_enrich = BaseResponse.__dict__["_enrich_response"]
    moto_answers.install()
    moto_answers.install()
    assert moto_responses.DynamoResult is moto_answers.FastDynamoResult
    assert moto_answers.installed()
    moto_answers.uninstall()
    moto_answers.uninstall()
    assert not moto_answers.installed()
    assert moto_responses.DynamoResult is original_result
    assert BaseResponse.__dict__["_enrich_response"] is original_enrich


_CHARACTERS = ["a", "Z", "0", " ", "é", "\u2603", "\U0001f600", '"', "\\", "\n", "\t", "\x00", "\x7f", "/", "<"]


def _string(rng: random.Random, empty: bool = True) -> str:
    return "".join(rng.choice(_CHARACTERS) for _ in range(rng.randint(0 if empty else 1, 6)))


def _number(rng: random.Random) -> str:
    return rng.choice(["0", "1", "-7", "3.25", "1e3", "-0.5", "12345678901234567890", str(rng.randint(-99, 99))])


def _value(rng: random.Random, depth: int = 0) -> dict[str, Any]:
    kind = rng.choice(["S", "S", "N", "BOOL", "NULL", "SS", "NS", "L", "M", "B"] if depth < 3 else ["S", "N", "BOOL"])
    if kind == "S":
        return {"S": _string(rng)}
    if kind == "N":
        return {"N": _number(rng)}
    if kind == "BOOL":
        return {"BOOL": rng.random() < 0.5}
    if kind == "NULL":
        return {"NULL": True}
    if kind == "SS":
        return {"SS": sorted({_string(rng) for _ in range(rng.randint(1, 4))})}
    if kind == "NS":
        return {"NS": sorted({str(rng.randint(-50, 50)) for _ in range(rng.randint(1, 4))})}
    if kind == "L":
        return {"L": [_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]}
    if kind == "M":
        return {"M": {_string(rng, empty=False): _value(rng, depth + 1) for _ in range(rng.randint(0, 4))}}
    return {"B": bytes(rng.randrange(256) for _ in range(rng.randint(0, 4)))}


@pytest.mark.parametrize("seed", range(4))
def test_random_items_in_every_item_answer(seed: int) -> None:
    def scenario(ddb: Any) -> None:
        rng = random.Random(seed)
        keys = []
        for i in range(25):
            item = {"h": {"S": "p"}, "r": {"S": f"{i:02d}{_string(rng)}"}}
            for _ in range(rng.randint(0, 8)):
                item[_string(rng, empty=False)] = _value(rng)
            ddb.put_item(TableName=TABLE, Item=item)
            keys.append(item["r"])
        for limit in (1, 4, 30):
            _query(ddb, "p", Limit=limit, ScanIndexForward=rng.random() < 0.5, ReturnConsumedCapacity="TOTAL")
        for r in rng.sample(keys, 5):
            ddb.get_item(TableName=TABLE, Key={"h": {"S": "p"}, "r": r})
            ddb.delete_item(TableName=TABLE, Key={"h": {"S": "p"}, "r": r}, ReturnValues="ALL_OLD")
        ddb.batch_get_item(RequestItems={TABLE: {"Keys": [{"h": {"S": "p"}, "r": r} for r in keys[:10]]}})
        ddb.scan(TableName=TABLE)

    same_as_moto(scenario)


def test_the_members_beside_the_items_are_serialized_once_per_distinct_value(monkeypatch: pytest.MonkeyPatch) -> None:
    """moto's serializer writes Count, ScannedCount and ConsumedCapacity once per distinct value; a value that is
    not plain JSON (a tuple here) is never remembered."""
    monkeypatch.setattr(moto_answers, "_memo", {})
    moto_speedups.install()
    with mock_aws():
        ddb = boto3.client("dynamodb", region_name=REGION)
        _tables(ddb)
        _put_all(ddb, [staged("t", i) for i in range(3)])
        for _ in range(3):
            _query(ddb, "t", ReturnConsumedCapacity="TOTAL")
            ddb.get_item(TableName=TABLE, Key={"h": {"S": "t"}, "r": {"S": "data/obj-0001"}})
        assert sorted(operation for operation, _ in moto_answers._memo) == ["GetItem", "PutItem", "Query"]
        assert not moto_answers._plain({"Count": (1,)}) and moto_answers._plain({"a": [1, 2.5, None, True, "x"]})


def test_a_query_page_walks_each_item_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A page of staged rows: each item's text is written once, at its put, and its length stands in for
    moto's size; items whose text outgrows 1 MB before their size does are sized exactly, and cut as moto does."""
    moto_speedups.install()
    calls = {"map_text": 0, "_item_size": 0}
    for module, name in ((moto_answers, "map_text"), (moto_speedups, "_item_size")):
        original = getattr(module, name)

        def counted(value: Any, original: Any = original, name: str = name) -> Any:
            calls[name] += 1
            return original(value)

        monkeypatch.setattr(module, name, counted)
    with mock_aws():
        ddb = boto3.client("dynamodb", region_name=REGION)
        _tables(ddb)
        _put_all(ddb, [staged("t", i) for i in range(40)])
        assert calls == {"map_text": 40, "_item_size": 0}  # written at the puts (lakelet/stack/moto_item_texts.py)
        _query(ddb, "t", Limit=30)
        assert calls == {"map_text": 40 + 1, "_item_size": 0}  # the page's LastEvaluatedKey only
        _put_all(ddb, [{"h": {"S": "big"}, "r": {"S": f"{i:03d}"}, "pad": {"S": "é" * 45_000}} for i in range(30)])
        page = ddb.query(
            TableName=TABLE, KeyConditionExpression="h = :h", ExpressionAttributeValues={":h": {"S": "big"}}
        )
        assert calls["_item_size"] > 0
        assert page["Count"] == 11 and page["LastEvaluatedKey"]["r"] == {"S": "010"}
