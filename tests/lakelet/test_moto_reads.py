"""lakelet/stack/moto_reads.py: a GetItem of a partition moto does not hold yet no longer inserts an empty one, so a
put into that partition meanwhile keeps its item (an acknowledged upload went missing that way under load).

The interleaving is forced: the reading thread is held inside the dict's second call of ``DynamoType.__hash__``
on the partition's key (the insertion of moto's defaultdict, after its lookup found nothing) while the put runs.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto.dynamodb.exceptions import MockValidationException
from moto.dynamodb.models import dynamodb_backends
from moto.dynamodb.models.dynamo_type import DynamoType
from moto.dynamodb.models.table import Table

from lakelet.stack import moto_reads
from tests.lakelet.ddb_tables import create_hash_table, create_keyed_table, patched_moto

REGION = "us-east-1"
ACCOUNT = "123456789012"


@pytest.fixture
def client() -> Iterator[Any]:
    with patched_moto():
        ddb = boto3.client("dynamodb", region_name=REGION)
        create_keyed_table(ddb, "keyed")
        create_hash_table(ddb, "hashed")
        ddb.put_item(TableName="keyed", Item={"h": {"S": "other"}, "r": {"S": "x"}})
        yield ddb


def _table(name: str) -> Table:
    return dynamodb_backends[ACCOUNT][REGION].tables[name]


def _key(value: str) -> DynamoType:
    return DynamoType({"S": value})


def _read_during_put(client: Any, monkeypatch: pytest.MonkeyPatch) -> tuple[int, bool]:
    """A GetItem of (new, a) in a thread, held at its second hash of the key "new" (if it gets there) while
    (new, b) is put. How many times the reader hashed "new", and whether (new, b) is there afterwards."""
    table = _table("keyed")
    holding, written = threading.Event(), threading.Event()
    hashes = [0]
    original = DynamoType.__hash__

    def counted(self: DynamoType) -> int:
        if threading.current_thread() is reader and self.value == "new":
            hashes[0] += 1
            if hashes[0] == 2:  # the defaultdict's insertion: let the put run now
                holding.set()
                written.wait(10)
        return original(self)

    monkeypatch.setattr(DynamoType, "__hash__", counted)
    answers: list[Any] = []
    reader = threading.Thread(target=lambda: answers.append(table.get_item(_key("new"), _key("a"))))
    reader.start()
    holding.wait(2)  # never set with the fix: the reader answers without inserting
    client.put_item(TableName="keyed", Item={"h": {"S": "new"}, "r": {"S": "b"}})
    written.set()
    reader.join(10)
    monkeypatch.setattr(DynamoType, "__hash__", original)
    assert answers == [None]
    found = client.get_item(TableName="keyed", Key={"h": {"S": "new"}, "r": {"S": "b"}})
    return hashes[0], "Item" in found


def test_a_read_of_a_missing_partition_during_a_put_into_it_keeps_the_put(
    client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    hashes, kept = _read_during_put(client, monkeypatch)
    assert kept
    assert hashes == 1  # looked up once, never inserted


def test_moto_s_own_get_item_loses_that_put(client: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The failure the patch prevents, with moto's own GetItem: the reader's empty partition replaces the put's."""
    moto_reads.uninstall()
    try:
        hashes, kept = _read_during_put(client, monkeypatch)
    finally:
        moto_reads.install()
    assert hashes == 2
    assert not kept


def test_reads_answer_as_moto_s_own_and_grow_nothing(client: Any) -> None:
    table = _table("keyed")
    client.put_item(TableName="keyed", Item={"h": {"S": "p"}, "r": {"S": "k"}, "v": {"N": "1"}})
    partitions = set(table.items)
    assert table.get_item(_key("missing"), _key("k")) is None
    assert set(table.items) == partitions  # no empty partition left behind
    assert table.get_item(_key("p"), _key("absent")) is None
    found = table.get_item(_key("p"), _key("k"))
    assert found is not None and found.attrs["v"] == DynamoType({"N": "1"})
    with pytest.raises(MockValidationException):
        table.get_item(_key("p"))  # the range key is required, as moto says
    assert client.get_item(TableName="keyed", Key={"h": {"S": "nowhere"}, "r": {"S": "k"}}).get("Item") is None
    # A table without a range key is moto's own path.
    client.put_item(TableName="hashed", Item={"p": {"S": "one"}})
    assert _table("hashed").get_item(_key("one")) is not None
    assert _table("hashed").get_item(_key("two")) is None


def test_install_and_uninstall_are_idempotent(client: Any) -> None:
    patched = Table.get_item
    moto_reads.install()
    assert Table.get_item is patched
    moto_reads.uninstall()
    moto_reads.uninstall()
    assert Table.get_item is not patched
    moto_reads.install()
    assert Table.get_item is patched
