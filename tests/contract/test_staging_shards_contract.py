"""StagingStore contract for tokens of several shards (graveler/writes/staging_shards.py), on the twin and on DynamoDB.

Calls are counted on the aws variant (moto's DynamoDB operations): a point read stays one call, a listing of a
one-shard token one query, and a sample reads the same bounded number of items whatever the token holds.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable
from typing import Any

import boto3
import pytest
from moto.dynamodb.models import DynamoDBBackend

from chalicelib.graveler import errors
from chalicelib.graveler.ports import StagingStore
from chalicelib.graveler.records import Key, StagingToken
from chalicelib.graveler.writes.staging_shards import (
    SKETCH_ODDS,
    per_shard_sample,
    shard_count,
    shard_of,
    with_shards,
)

from .conftest import Moto
from .test_stagingstore_contract import AWKWARD_KEYS, StageAll, staged, tombstone

SHARDED = with_shards(StagingToken("repo1-main:sharded"), 4)
SMALL = StagingToken("repo1-main:small")


@pytest.fixture
def served(moto: Moto | None) -> Callable[[str], int | None]:
    """How many DynamoDB operations of a kind moto has served so far; None for the memory variant."""
    return lambda name: None if moto is None else moto.calls[name]


@pytest.fixture
def items_read(moto: Moto | None, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The number of items each DynamoDB query answered (stays empty for the memory variant)."""
    answered: list[int] = []
    if moto is not None:
        original = DynamoDBBackend.query

        def query(self: DynamoDBBackend, *args: Any, **kwargs: Any) -> Any:
            result = original(self, *args, **kwargs)
            answered.append(len(result[0]))
            return result

        monkeypatch.setattr(DynamoDBBackend, "query", query)
    return answered


def since(counter: Callable[[str], int | None], name: str, before: int | None) -> int | None:
    now = counter(name)
    return None if now is None or before is None else now - before


def test_a_sharded_token_reads_writes_and_lists_in_key_order(
    staging_store: StagingStore, served: Callable[[str], int | None]
) -> None:
    keys = [*AWKWARD_KEYS, *(f"part={n % 3}/f{n:03d}" for n in range(60))]
    assert len({shard_of(SHARDED, k) for k in keys}) == 4  # every shard holds some
    for n, key in enumerate(keys):
        staging_store.set(SHARDED, tombstone(key) if n % 7 == 0 else staged(key, n))
    before = served("get_item")
    assert staging_store.get(SHARDED, Key("part=2/f002")) == staged("part=2/f002", len(AWKWARD_KEYS) + 2)
    assert since(served, "get_item", before) in (None, 1)  # the shard is a function of the key: one call
    assert staging_store.get(SHARDED, Key("missing")) is None
    ordered = sorted(keys)
    assert [s.key for s in staging_store.iterate(SHARDED)] == ordered
    assert [s.key for s in staging_store.iterate(SHARDED, "part=1")] == [k for k in ordered if k >= "part=1"]
    assert [s.key for s in itertools.islice(staging_store.iterate(SHARDED, first_page=3), 3)] == ordered[:3]
    staging_store.delete(SHARDED, Key("a"))
    assert staging_store.get(SHARDED, Key("a")) is None and "a" not in [s.key for s in staging_store.iterate(SHARDED)]
    got = staging_store.get_many(SHARDED, [Key("a/b"), Key("é"), Key("missing")])
    assert sorted(got) == ["a/b", "é"]


def test_shards_hold_disjoint_keys_and_merge_to_the_listing(staging_store: StagingStore, stage_all: StageAll) -> None:
    keys = [f"dir/{n:04d}" for n in range(300)]
    stage_all(staging_store, SHARDED, (staged(k, n) for n, k in enumerate(keys)))
    per_shard = [[s.key for s in staging_store.iterate_shard(SHARDED, shard)] for shard in range(4)]
    for shard, found in enumerate(per_shard):
        assert found == sorted(found) and found  # key order within a shard
        assert all(shard_of(SHARDED, k) == shard for k in found)
    assert sorted(k for found in per_shard for k in found) == keys
    assert [s.key for s in staging_store.iterate_shard(SHARDED, 2, "dir/0150")] == [
        k for k in per_shard[2] if k >= "dir/0150"
    ]
    # A token of one shard: its only shard is the whole token.
    stage_all(staging_store, SMALL, (staged(k) for k in keys[:10]))
    assert [s.key for s in staging_store.iterate_shard(SMALL, 0)] == keys[:10]


def test_drop_and_drop_shard(staging_store: StagingStore, stage_all: StageAll) -> None:
    keys = [f"k{n:03d}" for n in range(200)]
    stage_all(staging_store, SHARDED, (staged(k) for k in keys))
    staging_store.set(SMALL, staged("kept"))
    staging_store.drop_shard(SHARDED, 1)
    left = [s.key for s in staging_store.iterate(SHARDED)]
    assert left == [k for k in keys if shard_of(SHARDED, k) != 1]
    assert all(shard_of(SHARDED, k) != 1 for k in staging_store.sample(SHARDED, 400).keys)
    staging_store.drop(SHARDED)
    assert list(staging_store.iterate(SHARDED)) == []
    assert staging_store.sample(SHARDED, 400).keys == ()  # the sketch went with the rows
    assert [s.key for s in staging_store.iterate(SMALL)] == ["kept"]
    staging_store.drop(SHARDED)  # idempotent


def test_delete_many_forgets_rows_and_their_sketch(staging_store: StagingStore, stage_all: StageAll) -> None:
    keys = [f"k{n:03d}" for n in range(400)]
    stage_all(staging_store, SHARDED, (staged(k) for k in keys))
    assert staging_store.sample(SHARDED, 1000).keys  # ~25 of the 400 keys are sketched
    staging_store.delete_many(SHARDED, [Key(k) for k in keys])
    assert list(staging_store.iterate(SHARDED)) == []
    assert staging_store.sample(SHARDED, 1000).keys == ()


@pytest.mark.parametrize("token", [SMALL, SHARDED])
def test_a_sample_is_bounded_whatever_the_token_holds(
    staging_store: StagingStore,
    stage_all: StageAll,
    items_read: list[int],
    served: Callable[[str], int | None],
    token: StagingToken,
) -> None:
    limit = 16
    counts = []
    estimates = []
    for rows in (600, 6000):  # N, then 10N (the first N again among them)
        stage_all(staging_store, token, (staged(f"obj/{n:05d}") for n in range(rows)))
        before, read_before = served("query"), len(items_read)
        sample = staging_store.sample(token, limit)
        assert since(served, "query", before) in (None, shard_count(token))  # one query per shard
        counts.append(sum(items_read[read_before:]))
        estimates.append(sample.estimated_rows)
        assert list(sample.keys) == sorted(set(sample.keys))
        assert set(sample.keys) <= {f"obj/{n:05d}" for n in range(rows)}
        assert len(sample.keys) == per_shard_sample(token, limit) * shard_count(token)
    # The same number of items read for N and 10N rows (the aws variant counts them; the twin reads none).
    assert counts[0] == counts[1] and counts[0] in (0, per_shard_sample(token, limit) * shard_count(token))
    # The estimate follows the size (a bottom-k sketch of 16 keys: within a factor of 2 here).
    assert 300 <= estimates[0] <= 1200 and 3000 <= estimates[1] <= 12_000, estimates


def test_a_small_token_samples_its_whole_sketch(staging_store: StagingStore, stage_all: StageAll) -> None:
    keys = [f"x/{n:04d}" for n in range(320)]
    stage_all(staging_store, SMALL, (staged(k) for k in keys))
    sample = staging_store.sample(SMALL, 1024)
    assert 0 < len(sample.keys) < 60  # one key in 16 is sketched: ~20
    assert sample.estimated_rows == len(sample.keys) * SKETCH_ODDS
    assert staging_store.sample(StagingToken("never-used"), 10).keys == ()


def test_a_listing_of_a_one_shard_token_is_one_query(
    staging_store: StagingStore, stage_all: StageAll, served: Callable[[str], int | None]
) -> None:
    stage_all(staging_store, SMALL, (staged(f"k{n:02d}") for n in range(50)))
    before = served("query")
    assert len(list(staging_store.iterate(SMALL))) == 50
    assert since(served, "query", before) in (None, 1)
    before = served("query")
    assert len(list(itertools.islice(staging_store.iterate(SHARDED), 1))) == 0
    assert since(served, "query", before) in (None, 4)  # one per shard, sent at once


def test_single_writes_to_a_sharded_token_cost_one_call_and_a_sketch_write_for_one_key_in_16(
    staging_store: StagingStore, served: Callable[[str], int | None]
) -> None:
    keys = [f"w/{n:04d}" for n in range(160)]
    before = served("put_item")
    for key in keys:
        staging_store.set(SHARDED, staged(key))
    sketched = len(staging_store.sample(SHARDED, 1000).keys)
    assert 0 < sketched < 40
    assert since(served, "put_item", before) in (None, len(keys) + sketched)


def test_a_shard_outside_the_token_is_refused(staging_store: StagingStore) -> None:
    with pytest.raises(errors.Invalid):
        list(staging_store.iterate_shard(SHARDED, 4))
    with pytest.raises(errors.Invalid):
        staging_store.drop_shard(SMALL, 1)


def test_ten_shards_spread_a_branch_over_ten_partition_keys(
    staging_store: StagingStore, stage_all: StageAll, moto: Moto | None, table_names: Any
) -> None:
    """The goal on paper: ten partitions of ~1,000 writes/s each take 10,000 staged writes/s on one branch."""
    token = with_shards(StagingToken("repo1-main:ten"), 10)
    stage_all(staging_store, token, (staged(f"load/{n:05d}") for n in range(2000)))
    per_shard = [sum(1 for _ in staging_store.iterate_shard(token, shard)) for shard in range(10)]
    assert sum(per_shard) == 2000 and min(per_shard) > 150 and max(per_shard) < 250, per_shard
    if moto is None:
        return
    # On DynamoDB: the rows sit under ten partition keys, and the sketch under at most ten others.
    client = boto3.client("dynamodb", region_name="us-east-1")
    pages = client.get_paginator("scan").paginate(TableName=table_names.staging, ProjectionExpression="staging_token")
    keys = Counter(item["staging_token"]["S"] for page in pages for item in page["Items"])
    rows = {k: v for k, v in keys.items() if "#k" not in k.removeprefix(token)}
    assert sorted(rows) == sorted(f"{token}#{shard}" for shard in range(10))
    assert sorted(rows.values()) == sorted(per_shard)
    assert sum(v for k, v in keys.items() if k not in rows) == len(staging_store.sample(token, 10_000).keys)
