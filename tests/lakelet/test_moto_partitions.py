"""lakelet/stack/moto_partitions.py: staging partitions read from moto's memory, and the Query taking over where the
reader is not sure (the StagingStore contract suite runs the store with it too: tests/contract, "aws-local")."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from chalicelib.adapters.dynamodb import DynamoStagingStore, TableNames, create_tables
from chalicelib.adapters.dynamodb.rows import staged_item
from chalicelib.graveler import errors
from chalicelib.graveler.records import Entry, Key, StagedEntry, StagingToken
from lakelet.stack import moto_speedups
from lakelet.stack.moto_partitions import MotoPartitions

REGION = "us-east-1"
TOKEN = StagingToken("tok")


class Counted(MotoPartitions):
    def __init__(self) -> None:
        super().__init__(REGION, "testing")
        self.answers: list[int | None] = []
        self.tables: list[str] = []
        self.on_page = self.tables.append

    def read(self, *args: Any) -> Any:
        page = super().read(*args)
        self.answers.append(None if page is None else len(page[0]))
        return page


@pytest.fixture
def names(monkeypatch: pytest.MonkeyPatch) -> Iterator[TableNames]:
    for name, value in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}.items():
        monkeypatch.setenv(name, value)
    was_installed = moto_speedups.installed()
    moto_speedups.install()
    try:
        with mock_aws():
            names = TableNames.from_prefix("partitions-")
            create_tables(names, REGION)
            yield names
    finally:
        if not was_installed:
            moto_speedups.uninstall()


def entry(n: int) -> StagedEntry:
    return StagedEntry(
        Key(f"k/{n:03d}"), Entry(f"s3://b/{n}", n, f"etag{n}", 1_700_000_000 + n, "text/plain", {"n": "x"})
    )


def test_rows_come_from_memory_in_pages_from_a_key(names: TableNames) -> None:
    reader = Counted()
    store = DynamoStagingStore(names, REGION, page_size=10, first_page_size=4, partitions=reader)
    staged = [entry(n) for n in range(0, 60, 2)]
    store.set_many(TOKEN, staged)
    store.delete(TOKEN, Key("k/010"))
    expected = [s for s in staged if s.key != "k/010"]
    assert list(store.iterate(TOKEN)) == expected
    assert reader.answers == [4, 10, 10, 5]  # 29 rows, no Query
    assert reader.tables == [names.staging] * 4  # each page answered is told (the bench counts it as a Query)
    reader.answers.clear()
    assert [s.key for s in store.iterate(TOKEN, "k/041")] == [s.key for s in expected if s.key >= "k/041"]
    assert reader.answers == [4, 5]
    assert list(store.iterate(StagingToken("empty"))) == []


def test_the_query_takes_over_after_the_last_row_read(names: TableNames) -> None:
    """An item with a binary value (not something the reader writes) on the second page: the first page came from
    memory, the rest from a Query that starts after its last key."""
    reader = Counted()
    store = DynamoStagingStore(names, REGION, page_size=10, first_page_size=4, partitions=reader)
    staged = [entry(n) for n in range(30)]
    store.set_many(TOKEN, staged)
    ddb = boto3.client("dynamodb", region_name=REGION)
    item = ddb.get_item(TableName=names.staging, Key={"staging_token": {"S": "tok"}, "key": {"S": "k/006"}})["Item"]
    ddb.put_item(TableName=names.staging, Item={**item, "extra": {"B": b"\x00\x01"}})
    assert list(store.iterate(TOKEN)) == staged
    assert reader.answers == [4, None]


def test_no_reader_answer_without_the_table_or_the_speedups(names: TableNames) -> None:
    reader = MotoPartitions(REGION, "testing")
    assert reader.read("no-such-table", "tok", "", None, 10, staged_item) is None
    assert reader.read(names.staging, "tok", "", None, 10, staged_item) == ([], False)
    moto_speedups.uninstall()
    try:
        assert reader.read(names.staging, "tok", "", None, 10, staged_item) is None
    finally:
        moto_speedups.install()


def test_rows_are_decoded_at_their_put_and_answered_until_their_item_changes(names: TableNames) -> None:
    """The store tells the reader its decoder: each row is made once, at its put, and every read answers that row,
    until a put or an UpdateItem changes the item; another decoder gets rows of its own."""
    store = DynamoStagingStore(names, REGION, partitions=MotoPartitions(REGION, "testing"))
    staged = [entry(n) for n in range(5)]
    store.set_many(TOKEN, staged)
    first = list(store.iterate(TOKEN))
    assert first == staged
    assert all(a is b for a, b in zip(first, store.iterate(TOKEN), strict=True))  # the rows made at the puts
    store.set(TOKEN, entry(3))  # the same row put again: a new item, a new row
    again = list(store.iterate(TOKEN))
    assert again == staged and [a is b for a, b in zip(first, again, strict=True)] == [True, True, True, False, True]
    ddb = boto3.client("dynamodb", region_name=REGION)
    key = {"staging_token": {"S": "tok"}, "key": {"S": "k/001"}}
    ddb.update_item(
        TableName=names.staging, Key=key, UpdateExpression="SET etag = :e", ExpressionAttributeValues={":e": {"S": "x"}}
    )
    # An update retires what every put of the table wrote (moto_item_texts.py): the rows are read from the items.
    updated = list(store.iterate(TOKEN))
    assert updated[1].value is not None and updated[1].value.etag == "x"
    assert updated[:1] + updated[2:] == staged[:1] + staged[2:]
    assert not any(a is b for a, b in zip(again, updated, strict=True))
    keys = MotoPartitions(REGION, "testing").read(names.staging, "tok", "", None, 10, lambda item: item["key"]["S"])
    assert keys == ([f"k/{n:03d}" for n in range(5)], False)


def test_a_row_its_decoder_refuses_is_stored_and_refused_at_its_read(names: TableNames) -> None:
    store = DynamoStagingStore(names, REGION, partitions=MotoPartitions(REGION, "testing"))
    store.set(TOKEN, entry(1))
    ddb = boto3.client("dynamodb", region_name=REGION)
    item = ddb.get_item(TableName=names.staging, Key={"staging_token": {"S": "tok"}, "key": {"S": "k/001"}})["Item"]
    ddb.put_item(TableName=names.staging, Item={**item, "size": {"S": "not a number"}})  # the put succeeds
    with pytest.raises(errors.StorageError, match="size"):
        list(store.iterate(TOKEN))


def test_counts_and_samples_come_from_memory_as_the_queries_answer_them(names: TableNames) -> None:
    reader = Counted()
    store = DynamoStagingStore(names, REGION, partitions=reader)
    queried = DynamoStagingStore(names, REGION)
    store.set_many(TOKEN, [entry(n) for n in range(600)])
    store.delete(TOKEN, Key("k/010"))
    assert [store.count(TOKEN, bound) for bound in (10, 599, 5000)] == [10, 599, 599]
    assert [queried.count(TOKEN, bound) for bound in (10, 599, 5000)] == [10, 599, 599]
    sample = store.sample(TOKEN, 100)
    assert sample.keys and sample == queried.sample(TOKEN, 100)
    assert len(reader.tables) == 4 and reader.answers == [len(sample.keys)]  # 3 counts and a page, no Query
    assert store.count(StagingToken("empty"), 10) == 0
