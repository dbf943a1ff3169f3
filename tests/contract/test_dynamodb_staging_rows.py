"""Staged rows the DynamoDB adapter did not write in its current layout: rows of tokens from before sharding and
the sketch (one partition, no sketch items) still read, list and commit; a row damaged by hand is a StorageError
(the API's 503, the gateway's ServiceUnavailable), never an unhandled error."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import boto3
import pytest
from moto import mock_aws

from chalicelib.adapters.dynamodb import DynamoStagingStore, TableNames, create_tables
from chalicelib.api.errors import status_for
from chalicelib.graveler import errors
from chalicelib.graveler.records import Entry, Key, StagedEntry, StagingToken

REGION = "us-east-1"
OLD = StagingToken("repo1-main:written-before-shards")


@pytest.fixture
def tables(fake_aws_env: None) -> Iterator[TableNames]:
    with mock_aws():
        names = TableNames.from_prefix(f"s{uuid.uuid4().hex[:12]}-")
        create_tables(names, REGION)
        yield names


def _put(names: TableNames, token: str, key: str, **attributes: dict[str, object]) -> None:
    item = {"staging_token": {"S": token}, "key": {"S": key}, **attributes}
    boto3.client("dynamodb", region_name=REGION).put_item(TableName=names.staging, Item=item)


def _old_row(names: TableNames, key: str) -> None:
    _put(
        names,
        OLD,
        key,
        tombstone={"BOOL": False},
        physical_address={"S": f"s3://b/data/{key}"},
        size={"N": "3"},
        etag={"S": "e"},
        mtime={"N": "1700000000"},
        content_type={"S": "text/plain"},
        user_metadata={"S": '{"a": "1"}'},
    )


def test_a_token_written_before_shards_reads_lists_and_samples_empty(tables: TableNames) -> None:
    for key in ("b", "a", "c/d"):
        _old_row(tables, key)
    _put(tables, OLD, "gone", tombstone={"BOOL": True})
    store = DynamoStagingStore(tables, REGION)
    expected = StagedEntry(Key("a"), Entry("s3://b/data/a", 3, "e", 1700000000, "text/plain", {"a": "1"}))
    assert store.get(OLD, Key("a")) == expected
    assert [s.key for s in store.iterate(OLD)] == ["a", "b", "c/d", "gone"]
    assert [s.key for s in store.iterate_shard(OLD, 0)] == ["a", "b", "c/d", "gone"]
    assert store.get(OLD, Key("gone")) == StagedEntry(Key("gone"), None)
    # No sketch items: a plan cuts at the base's ranges only, and the seal keeps one shard.
    sample = store.sample(OLD, 100)
    assert sample.keys == () and sample.estimated_rows == 0
    store.drop(OLD)
    assert list(store.iterate(OLD)) == []


@pytest.mark.parametrize(
    "damage",
    [
        {"size": {"S": "three"}},
        {"user_metadata": {"S": "{not json"}},
        {"tombstone": {"S": "no"}},
    ],
)
def test_a_damaged_row_is_a_storage_error(tables: TableNames, damage: dict[str, dict[str, object]]) -> None:
    _old_row(tables, "fine")
    _put(tables, OLD, "hurt", **damage)
    store = DynamoStagingStore(tables, REGION)
    assert store.get(OLD, Key("fine")) is not None
    for read in (
        lambda: store.get(OLD, Key("hurt")),
        lambda: list(store.iterate(OLD)),
        lambda: store.get_many(OLD, [Key("hurt")]),
    ):
        with pytest.raises(errors.StorageError, match="does not parse"):
            read()
    assert status_for(errors.StorageError("x")) == 503
