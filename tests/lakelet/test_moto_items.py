"""lakelet/stack/moto_items.py converts moto's DynamoDB answers exactly as moto's own ``dynamo_to_dict`` does,
and without handing moto the usual kinds of values (each hand-off costs moto an import statement)."""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws
from moto.dynamodb.models.dynamo_type import DynamoType, Item

from lakelet.stack import moto_items
from tests.lakelet.ddb_tables import create_keyed_table

REGION = "us-east-1"


@pytest.fixture
def installed() -> Iterator[None]:
    was = moto_items.installed()
    moto_items.install()
    try:
        yield
    finally:
        if not was:
            moto_items.uninstall()


def _moto(value: Any) -> Any:
    """moto's own answer, with the fast one out of the way."""
    was = moto_items.installed()
    moto_items.uninstall()
    try:
        import moto.dynamodb.models.utilities as utilities

        return utilities.dynamo_to_dict(value)
    finally:
        if was:
            moto_items.install()


def _item() -> Item:
    return Item(
        DynamoType({"S": "h"}),
        DynamoType({"S": "r"}),
        {
            "h": {"S": "h"},
            "r": {"S": "r"},
            "n": {"N": "12.5"},
            "m": {"M": {"a": {"S": "x"}, "l": {"L": [{"N": "1"}, {"BOOL": True}, {"NULL": True}]}}},
            "ss": {"SS": ["a", "b"]},
            "b": {"B": b"\x00\x01"},
            "bs": {"BS": [b"\x02", b"\x03"]},
        },
    )


VALUES: list[Any] = [
    None,
    "text",
    7,
    1.5,
    True,
    DynamoType({"S": "é"}),
    DynamoType({"N": "3"}),
    DynamoType({"M": {"inner": {"L": [{"S": "x"}, {"M": {"deep": {"BOOL": False}}}]}}}),
    DynamoType({"B": b"raw"}),
    DynamoType({"B": "cmF3"}),  # as it came from the wire: base64 text
    DynamoType({"BS": [b"a", "Yg=="]}),
    {"Items": [{"k": DynamoType({"S": "v"}), "b": DynamoType({"B": b"\xff"})}], "Count": 1},
    [DynamoType({"NS": ["1", "2"]}), {"x": [DynamoType({"NULL": True})]}],
    datetime.datetime(2026, 1, 2, 3, 4, 5),
]


@pytest.mark.parametrize("value", VALUES, ids=range(len(VALUES)))
def test_the_same_answer_as_moto(installed: None, value: Any) -> None:
    assert moto_items.fast_dynamo_to_dict(value) == _moto(value)


def test_an_items_attribute_map_and_to_json_objects_go_through_moto(installed: None) -> None:
    item = _item()
    for value in (item, item.attrs, {"Attributes": item.attrs}, [item]):
        assert moto_items.fast_dynamo_to_dict(value) == _moto(value)


def test_plain_values_never_reach_moto_binary_ones_do(installed: None) -> None:
    before = moto_items.counters["moto"]
    moto_items.fast_dynamo_to_dict(VALUES[7])
    moto_items.fast_dynamo_to_dict({"Items": [{"a": DynamoType({"S": "x"}), "n": DynamoType({"N": "1"})}] * 50})
    assert moto_items.counters["moto"] == before
    moto_items.fast_dynamo_to_dict([DynamoType({"B": b"x"}), DynamoType({"BS": [b"y"]})])
    assert moto_items.counters["moto"] == before + 2


def test_a_query_answers_the_same_items_through_moto_and_without(installed: None) -> None:
    with mock_aws():
        ddb = boto3.client("dynamodb", region_name=REGION)
        create_keyed_table(ddb, "items")
        for i in range(20):
            attributes: dict[str, Any] = {
                "h": {"S": "p"},
                "r": {"S": f"{i:03d}"},
                "m": {"M": {"size": {"N": str(i)}, "tags": {"L": [{"S": "a"}, {"BOOL": i % 2 == 0}]}}},
            }
            if i % 5 == 0:
                attributes["b"] = {"B": bytes([i])}
            ddb.put_item(TableName="items", Item=attributes)

        def query() -> Any:
            return ddb.query(
                TableName="items", KeyConditionExpression="h = :h", ExpressionAttributeValues={":h": {"S": "p"}}
            )["Items"]

        before = moto_items.counters["moto"]
        fast = query()
        assert moto_items.counters["moto"] - before == 4  # the four binary values only
        moto_items.uninstall()
        try:
            assert query() == fast
        finally:
            moto_items.install()


def test_a_query_page_serializes_its_items_without_moto_walking_each_value(
    installed: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """moto's own serializer sees no AttributeValue of items of the usual kinds, and the body is moto's byte for
    byte (a binary value sends its item back to moto's serializer)."""
    from moto.core.serialize import BaseJSONSerializer

    walked: list[str] = []
    for name in ("serialize_structure", "serialize_map"):
        original = moto_items._saved[name]

        def counted(self: Any, serialized: Any, value: Any, shape: Any, key: str, original: Any = original) -> None:
            walked.append(shape.name)
            original(self, serialized, value, shape, key)

        monkeypatch.setitem(moto_items._saved, name, counted)
    with mock_aws():
        ddb = boto3.client("dynamodb", region_name=REGION)
        bodies: list[bytes] = []
        ddb.meta.events.register("after-call.dynamodb", lambda http_response, **_: bodies.append(http_response.content))
        create_keyed_table(ddb, "page")
        for i in range(30):
            item: dict[str, Any] = {"h": {"S": "p"}, "r": {"S": f"{i:03d}"}, "m": {"M": {"n": {"N": str(i)}}}}
            if i == 7:
                item["b"] = {"B": b"\x07"}
            ddb.put_item(TableName="page", Item=item)
        walked.clear()
        bodies.clear()
        ddb.query(TableName="page", KeyConditionExpression="h = :h", ExpressionAttributeValues={":h": {"S": "p"}})
        assert walked.count("AttributeMap") == 1  # item 7 only
        assert walked.count("AttributeValue") == 1  # and, of its values, the binary one only
        fast = list(bodies)
        monkeypatch.setattr(BaseJSONSerializer, "_serialize_type_structure", moto_items._saved["serialize_structure"])
        monkeypatch.setattr(BaseJSONSerializer, "_serialize_type_map", moto_items._saved["serialize_map"])
        bodies.clear()
        ddb.query(TableName="page", KeyConditionExpression="h = :h", ExpressionAttributeValues={":h": {"S": "p"}})
        assert bodies == fast and len(fast) == 1
