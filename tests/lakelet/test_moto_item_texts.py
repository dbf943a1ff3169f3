"""lakelet/stack/moto_item_texts.py: an item's JSON text is written at its put and used by Query pages only while
moto has not changed the item in place since.

The random comparison with moto's own query (test_moto_speedups.py) runs with the texts too; here: that the texts
are used (no text written at the read), and every way a stored item changes under a remembered text."""

from __future__ import annotations

import io
import pickle
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from lakelet.persistence import snapshot
from lakelet.stack import moto_answers, moto_item_texts, moto_speedups
from tests.lakelet.ddb_tables import create_keyed_table

REGION = "us-east-1"
TABLE = "texts"
QUERY = {"TableName": TABLE, "KeyConditionExpression": "h = :h", "ExpressionAttributeValues": {":h": {"S": "p"}}}


@pytest.fixture
def ddb() -> Iterator[Any]:
    was_installed = moto_speedups.installed()
    moto_speedups.install()
    try:
        with mock_aws():
            client = boto3.client("dynamodb", region_name=REGION)
            create_keyed_table(client, TABLE)
            client.query(**QUERY)  # the partition's key cache exists from here (the put hook keeps it)
            yield client
    finally:
        if not was_installed:
            moto_speedups.uninstall()


@pytest.fixture
def texts_written(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many item texts were written since the test began (at puts and at reads)."""
    count = [0]
    original = moto_answers.item_text

    def counted(attributes: Any) -> str | None:
        count[0] += 1
        return original(attributes)

    monkeypatch.setattr(moto_answers, "item_text", counted)
    return count


def values(ddb: Any) -> dict[str, str]:
    return {row["r"]["S"]: row["v"]["S"] for row in ddb.query(**QUERY)["Items"]}


def put(ddb: Any, r: str, v: str) -> None:
    ddb.put_item(TableName=TABLE, Item={"h": {"S": "p"}, "r": {"S": r}, "v": {"S": v}})


def test_pages_use_the_text_written_at_the_put(ddb: Any, texts_written: list[int]) -> None:
    for i in range(20):
        put(ddb, f"k{i:02d}", f"value {i}")
    assert texts_written[0] == 20
    for _ in range(3):
        assert values(ddb) == {f"k{i:02d}": f"value {i}" for i in range(20)}
    assert texts_written[0] == 20  # three pages of 20 items wrote none


def test_an_item_changed_in_place_is_written_again(ddb: Any, texts_written: list[int]) -> None:
    put(ddb, "a", "old")
    put(ddb, "b", "kept")
    assert values(ddb) == {"a": "old", "b": "kept"}
    ddb.update_item(
        TableName=TABLE,
        Key={"h": {"S": "p"}, "r": {"S": "a"}},
        UpdateExpression="SET v = :v",
        ExpressionAttributeValues={":v": {"S": "new"}},
    )
    before = texts_written[0]
    assert values(ddb) == {"a": "new", "b": "kept"}
    # Every text of the table is written again once (at the read), not only the updated item's.
    assert texts_written[0] - before == 2


def test_a_transactions_update_and_a_failed_update_end_the_texts(ddb: Any) -> None:
    put(ddb, "a", "one")
    put(ddb, "b", "two")
    ddb.transact_write_items(
        TransactItems=[
            {
                "Update": {
                    "TableName": TABLE,
                    "Key": {"h": {"S": "p"}, "r": {"S": "a"}},
                    "UpdateExpression": "SET v = :v",
                    "ExpressionAttributeValues": {":v": {"S": "three"}},
                }
            }
        ]
    )
    assert values(ddb) == {"a": "three", "b": "two"}
    with pytest.raises(ddb.exceptions.ConditionalCheckFailedException):
        ddb.update_item(
            TableName=TABLE,
            Key={"h": {"S": "p"}, "r": {"S": "b"}},
            UpdateExpression="SET v = :v",
            ConditionExpression="v = :never",
            ExpressionAttributeValues={":v": {"S": "four"}, ":never": {"S": "never"}},
        )
    assert values(ddb) == {"a": "three", "b": "two"}


def test_an_overwrite_and_a_delete_are_seen(ddb: Any) -> None:
    put(ddb, "a", "one")
    put(ddb, "b", "two")
    assert values(ddb) == {"a": "one", "b": "two"}
    put(ddb, "a", "again")
    ddb.delete_item(TableName=TABLE, Key={"h": {"S": "p"}, "r": {"S": "b"}})
    assert values(ddb) == {"a": "again"}


def test_texts_of_an_earlier_install_are_not_used(ddb: Any) -> None:
    put(ddb, "a", "before")
    moto_speedups.uninstall()
    ddb.update_item(  # unwatched: moto_item_texts is not installed now
        TableName=TABLE,
        Key={"h": {"S": "p"}, "r": {"S": "a"}},
        UpdateExpression="SET v = :v",
        ExpressionAttributeValues={":v": {"S": "after"}},
    )
    moto_speedups.install()
    assert values(ddb) == {"a": "after"}


def test_a_snapshot_keeps_no_text() -> None:
    from moto.dynamodb.models.dynamo_type import DynamoType, Item

    item = Item(DynamoType({"S": "p"}), DynamoType({"S": "a"}), {"h": {"S": "p"}, "r": {"S": "a"}, "v": {"S": "x"}})
    item.__dict__["_lakelet_text"] = moto_item_texts.KnownText(0, item.attrs, '{"marker": "text"}')
    out = io.BytesIO()
    snapshot._Pickler(out, protocol=pickle.HIGHEST_PROTOCOL).dump(item)
    assert b"marker" not in out.getvalue()
    loaded = pickle.loads(out.getvalue())
    assert loaded.attrs == item.attrs and loaded.__dict__.get("_lakelet_text") is None
