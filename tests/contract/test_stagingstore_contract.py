"""StagingStore contract: the in-memory twin and DynamoStagingStore (on moto) behave the same, the latter also with its
partitions read from moto's memory as the embedded stack reads them ("aws-local")."""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Callable, Iterable

import pytest

from chalicelib.adapters.dynamodb import staging as dynamo_staging
from chalicelib.graveler.ports import StagingStore
from chalicelib.graveler.records import Entry, Key, StagedEntry, StagingToken
from chalicelib.graveler.writes.staging_shards import with_shards

from .conftest import STAGING_VARIANTS

TOKEN = StagingToken("repo1-main:token-1")
OTHER = StagingToken("repo1-dev:token-2")

# Python's str order is the UTF-8 byte order DynamoDB sorts range keys by; these keys exercise it.
AWKWARD_KEYS = [
    "a",
    "a/",
    "a/b",
    "a/b/c.parquet",
    "a-b",
    "a.b",
    "a b",
    "ab",
    "A",
    "Z/z",
    "~tilde",
    "a\x7f",
    "é",
    "e\u0301",  # e + combining accent: a different key from "é", never normalized
    "ß",
    "中文/路径",
    "\uffff",
    "😀/emoji",
    "0",
    "9/9",
]


@pytest.fixture(params=STAGING_VARIANTS)
def variant(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def make_entry(key: str, n: int = 0, **overrides: object) -> Entry:
    fields: dict[str, object] = {
        "physical_address": f"s3://bucket/ns/data/g1/{hashlib.sha1(key.encode()).hexdigest()}",
        "size": len(key.encode()) + n,
        "etag": hashlib.md5(key.encode()).hexdigest(),
        "mtime": 1_700_000_000 + n,
        "content_type": "text/plain",
        "user_metadata": {"origin": key, "n": str(n)},
    }
    fields.update(overrides)
    return Entry(**fields)  # type: ignore[arg-type]


def staged(key: str, n: int = 0) -> StagedEntry:
    return StagedEntry(key=Key(key), value=make_entry(key, n))


def tombstone(key: str) -> StagedEntry:
    return StagedEntry(key=Key(key), value=None)


StageAll = Callable[[StagingStore, StagingToken, Iterable[StagedEntry]], None]
StagingFactory = Callable[..., StagingStore]
Queries = Callable[[], int | None]


def pages_fetched(queries: Queries, before: int | None) -> int | None:
    """Queries served since ``before`` (None for the memory variant, which has no pages)."""
    now = queries()
    return None if now is None or before is None else now - before


def test_set_and_get(staging_store: StagingStore) -> None:
    entry = StagedEntry(
        key=Key("dir/file.csv"),
        value=make_entry("dir/file.csv", 3, user_metadata={"owner": "ñandú ✓", "empty": "", "x-y": "1"}),
    )
    staging_store.set(TOKEN, entry)
    assert staging_store.get(TOKEN, Key("dir/file.csv")) == entry


def test_entry_with_defaults_round_trips(staging_store: StagingStore) -> None:
    entry = StagedEntry(key=Key("empty"), value=Entry(physical_address="s3://b/k", size=0, etag="", mtime=0))
    staging_store.set(TOKEN, entry)
    got = staging_store.get(TOKEN, Key("empty"))
    assert got == entry
    assert got is not None and got.value is not None
    assert got.value.content_type == "application/octet-stream" and got.value.user_metadata == {}


def test_get_of_nothing_staged(staging_store: StagingStore) -> None:
    assert staging_store.get(TOKEN, Key("missing")) is None
    staging_store.set(OTHER, staged("only-in-other"))
    assert staging_store.get(TOKEN, Key("only-in-other")) is None


def test_set_replaces_the_earlier_change(staging_store: StagingStore) -> None:
    staging_store.set(TOKEN, staged("k", 1))
    staging_store.set(TOKEN, staged("k", 2))
    assert staging_store.get(TOKEN, Key("k")) == staged("k", 2)
    assert list(staging_store.iterate(TOKEN)) == [staged("k", 2)]


def test_tombstone_round_trip(staging_store: StagingStore) -> None:
    staging_store.set(TOKEN, tombstone("gone"))
    got = staging_store.get(TOKEN, Key("gone"))
    assert got == tombstone("gone")
    assert got is not None and got.value is None
    assert list(staging_store.iterate(TOKEN)) == [tombstone("gone")]


def test_tombstone_and_value_replace_each_other(staging_store: StagingStore) -> None:
    staging_store.set(TOKEN, staged("k", 1))
    staging_store.set(TOKEN, tombstone("k"))
    assert staging_store.get(TOKEN, Key("k")) == tombstone("k")
    staging_store.set(TOKEN, staged("k", 2))
    assert staging_store.get(TOKEN, Key("k")) == staged("k", 2)


def test_delete_forgets_the_change(staging_store: StagingStore) -> None:
    staging_store.set(TOKEN, staged("a"))
    staging_store.set(TOKEN, tombstone("b"))
    staging_store.set(OTHER, staged("a", 9))
    staging_store.delete(TOKEN, Key("a"))
    staging_store.delete(TOKEN, Key("b"))
    assert staging_store.get(TOKEN, Key("a")) is None
    assert staging_store.get(TOKEN, Key("b")) is None
    assert list(staging_store.iterate(TOKEN)) == []
    assert staging_store.get(OTHER, Key("a")) == staged("a", 9)
    staging_store.delete(TOKEN, Key("a"))  # idempotent
    staging_store.delete(TOKEN, Key("never-staged"))


def test_iterate_in_key_order(staging_store: StagingStore) -> None:
    for n, key in enumerate(AWKWARD_KEYS):
        staging_store.set(TOKEN, tombstone(key) if n % 5 == 0 else staged(key, n))
    staging_store.set(OTHER, staged("a/other-token"))
    got = list(staging_store.iterate(TOKEN))
    assert [s.key for s in got] == sorted(AWKWARD_KEYS)
    assert [s.key for s in got] == sorted(AWKWARD_KEYS, key=lambda k: k.encode("utf-8"))
    by_key = {s.key: s for s in got}
    for n, key in enumerate(AWKWARD_KEYS):
        assert by_key[Key(key)] == (tombstone(key) if n % 5 == 0 else staged(key, n))


def test_iterate_from_key(staging_store: StagingStore) -> None:
    for key in AWKWARD_KEYS:
        staging_store.set(TOKEN, staged(key))
    ordered = sorted(AWKWARD_KEYS)
    assert [s.key for s in staging_store.iterate(TOKEN, "")] == ordered
    assert [s.key for s in staging_store.iterate(TOKEN, "a/b")] == [k for k in ordered if k >= "a/b"]
    assert [s.key for s in staging_store.iterate(TOKEN, "a/bb")] == [k for k in ordered if k >= "a/bb"]
    assert [s.key for s in staging_store.iterate(TOKEN, "é")] == [k for k in ordered if k >= "é"]
    assert list(staging_store.iterate(TOKEN, "\U0010ffff")) == []
    assert list(staging_store.iterate(StagingToken("no-such-token"))) == []


def test_iterate_pages_through_the_token(make_staging_store: StagingFactory, dynamo_queries: Queries) -> None:
    keys = [f"dir/{n:03d}" for n in range(50)]
    store = make_staging_store(page_size=7)
    for n, key in enumerate(keys):
        store.set(TOKEN, staged(key, n))
    before = dynamo_queries()
    assert list(store.iterate(TOKEN)) == [staged(key, n) for n, key in enumerate(keys)]
    assert pages_fetched(dynamo_queries, before) in (None, 8)  # ceil(50 / 7) pages on DynamoDB
    before = dynamo_queries()
    assert [s.key for s in store.iterate(TOKEN, "dir/045")] == keys[45:]
    assert pages_fetched(dynamo_queries, before) in (None, 1)
    # A small first page, then full ones: 3 + 10 + 10 + 10 + 10 + 7.
    before = dynamo_queries()
    assert [s.key for s in make_staging_store(first_page_size=3, page_size=10).iterate(TOKEN)] == keys
    assert pages_fetched(dynamo_queries, before) in (None, 6)


def test_large_token_pages_lazily_and_drops(
    staging_store: StagingStore,
    make_staging_store: StagingFactory,
    stage_all: StageAll,
    dynamo_queries: Queries,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # More than one full page (1000). Kept small: moto serves a query at ~900 items/s.
    keys = [f"part={n % 7}/file-{n:05d}.parquet" for n in range(1150)]
    stage_all(staging_store, TOKEN, (tombstone(k) if n % 10 == 0 else staged(k, n) for n, k in enumerate(keys)))
    ordered = sorted(keys)

    # Stopping early fetches only the first (small) page, not the 1,150 items.
    before = dynamo_queries()
    first = list(itertools.islice(staging_store.iterate(TOKEN), 5))
    assert [s.key for s in first] == ordered[:5]
    assert pages_fetched(dynamo_queries, before) in (None, 1)

    before = dynamo_queries()
    everything = list(staging_store.iterate(TOKEN))
    assert [s.key for s in everything] == ordered
    assert sum(s.value is None for s in everything) == 115
    assert everything[-1] == staged(ordered[-1], keys.index(ordered[-1]))
    assert pages_fetched(dynamo_queries, before) in (None, 3)  # 100, then 1000, then the last 50

    before = dynamo_queries()
    small_pages = make_staging_store(page_size=100)
    middle = list(itertools.islice(small_pages.iterate(TOKEN, ordered[500]), 150))
    assert [s.key for s in middle] == ordered[500:650]
    assert pages_fetched(dynamo_queries, before) in (None, 2)

    staging_store.set(OTHER, staged("kept", 1))
    # Many small chunks on few threads: DynamoDB's drop waits for some before it reads more keys.
    monkeypatch.setattr(dynamo_staging, "DROP_CHUNK", 7)
    monkeypatch.setattr(dynamo_staging, "DROP_WORKERS", 3)
    staging_store.drop(TOKEN)
    assert list(staging_store.iterate(TOKEN)) == []
    assert staging_store.get(TOKEN, Key(keys[1])) is None
    assert [s.key for s in staging_store.iterate(OTHER)] == ["kept"]


def test_drop(staging_store: StagingStore) -> None:
    for n in range(40):
        staging_store.set(TOKEN, tombstone(f"k{n:02d}") if n % 3 else staged(f"k{n:02d}", n))
    staging_store.set(OTHER, staged("k00", 7))
    staging_store.drop(TOKEN)
    assert list(staging_store.iterate(TOKEN)) == []
    assert staging_store.get(TOKEN, Key("k00")) is None
    assert list(staging_store.iterate(OTHER)) == [staged("k00", 7)]
    staging_store.drop(TOKEN)  # idempotent
    staging_store.drop(StagingToken("never-used"))
    # A dropped token can be written again.
    staging_store.set(TOKEN, staged("again"))
    assert list(staging_store.iterate(TOKEN)) == [staged("again")]


def test_set_many_collapses_repeated_keys(staging_store: StagingStore, stage_all: StageAll) -> None:
    # stage_all batches on DynamoDB: a batch may not name a key twice, so the last change must win.
    stage_all(staging_store, TOKEN, [staged("k", 1), staged("j", 1), tombstone("k"), staged("j", 2)])
    assert list(staging_store.iterate(TOKEN)) == [staged("j", 2), tombstone("k")]


@pytest.mark.parametrize("count", [0, 1, 25, 26, 60])
def test_set_many_round_trips(staging_store: StagingStore, stage_all: StageAll, count: int) -> None:
    entries = [staged(f"k{n:03d}", n) for n in range(count)]
    stage_all(staging_store, TOKEN, reversed(entries))
    assert list(staging_store.iterate(TOKEN)) == entries


def test_delete_many_forgets_exactly_the_keys_given(staging_store: StagingStore) -> None:
    # Enough keys for more than one batch of 25, a tombstone among them, a repeat and one never staged.
    for n in range(30):
        staging_store.set(TOKEN, tombstone(f"k{n:02d}") if n == 3 else staged(f"k{n:02d}", n))
    staging_store.set(OTHER, staged("k00", 7))
    doomed = [Key(f"k{n:02d}") for n in range(28)]
    staging_store.delete_many(TOKEN, [*doomed, Key("k00"), Key("never-staged")])
    assert list(staging_store.iterate(TOKEN)) == [staged("k28", 28), staged("k29", 29)]
    assert list(staging_store.iterate(OTHER)) == [staged("k00", 7)]
    staging_store.delete_many(TOKEN, doomed)  # idempotent
    staging_store.delete_many(TOKEN, [])
    assert [s.key for s in staging_store.iterate(TOKEN)] == ["k28", "k29"]


def test_set_answers_the_change_it_replaced(staging_store: StagingStore) -> None:
    """What a refused write puts back (graveler/writes/staging.py), read in the same write."""
    assert staging_store.set(TOKEN, staged("k", 1)) is None
    assert staging_store.set(TOKEN, tombstone("k")) == staged("k", 1)
    assert staging_store.set(TOKEN, staged("k", 2)) == tombstone("k")
    assert staging_store.set(OTHER, staged("k", 3)) is None  # per token
    assert staging_store.get(TOKEN, Key("k")) == staged("k", 2)


def test_get_many_reads_what_is_staged(staging_store: StagingStore) -> None:
    staging_store.set_many(TOKEN, [staged(f"k{n:03d}", n) for n in range(0, 150, 2)] + [tombstone("t")])
    staging_store.set(OTHER, staged("k001", 9))
    wanted = [Key(f"k{n:03d}") for n in range(150)] + [Key("t"), Key("k000")]
    found = staging_store.get_many(TOKEN, wanted)
    assert found == {Key(f"k{n:03d}"): staged(f"k{n:03d}", n) for n in range(0, 150, 2)} | {Key("t"): tombstone("t")}
    assert staging_store.get_many(TOKEN, []) == {}


def test_set_if_expecting_no_row(staging_store: StagingStore) -> None:
    assert staging_store.set_if(TOKEN, staged("k", 1), None) is True
    assert staging_store.get(TOKEN, Key("k")) == staged("k", 1)
    # A row is there now: a second writer that also read "nothing staged" is refused and changes nothing.
    assert staging_store.set_if(TOKEN, staged("k", 2), None) is False
    assert staging_store.get(TOKEN, Key("k")) == staged("k", 1)
    assert staging_store.set_if(TOKEN, staged("t", 1), None) is True  # other keys are their own rows
    staging_store.set(TOKEN, tombstone("gone"))
    assert staging_store.set_if(TOKEN, staged("gone", 1), None) is False  # a tombstone is a row


def test_set_if_expecting_the_row_as_read(staging_store: StagingStore) -> None:
    staging_store.set(TOKEN, staged("k", 1))
    read = staging_store.get(TOKEN, Key("k"))
    assert staging_store.set_if(TOKEN, staged("k", 2), read) is True
    assert staging_store.get(TOKEN, Key("k")) == staged("k", 2)
    # The row changed since ``read``: the same expectation now fails, whichever field names the change.
    assert staging_store.set_if(TOKEN, staged("k", 3), read) is False
    assert staging_store.get(TOKEN, Key("k")) == staged("k", 2)
    moved = StagedEntry(Key("k"), make_entry("k", 2, physical_address="s3://bucket/ns/data/g1/other"))
    assert staging_store.set_if(TOKEN, staged("k", 4), moved) is False
    assert staging_store.set_if(TOKEN, staged("k", 4), tombstone("k")) is False
    assert staging_store.get(TOKEN, Key("k")) == staged("k", 2)
    # Expecting a row where there is none fails too; in another token the key is unstaged.
    assert staging_store.set_if(OTHER, staged("k", 5), staged("k", 2)) is False
    assert staging_store.get(OTHER, Key("k")) is None


def test_set_if_expecting_a_tombstone(staging_store: StagingStore) -> None:
    staging_store.set(TOKEN, tombstone("k"))
    assert staging_store.set_if(TOKEN, staged("k", 1), staged("k", 1)) is False
    assert staging_store.set_if(TOKEN, staged("k", 1), tombstone("k")) is True
    assert staging_store.get(TOKEN, Key("k")) == staged("k", 1)


def test_set_if_of_two_writers_expecting_the_same_row_one_wins(staging_store: StagingStore) -> None:
    staging_store.set(TOKEN, staged("k", 1))
    read = staging_store.get(TOKEN, Key("k"))
    first = StagedEntry(Key("k"), make_entry("k", 2, physical_address="s3://bucket/ns/data/g1/first"))
    second = StagedEntry(Key("k"), make_entry("k", 2, physical_address="s3://bucket/ns/data/g1/second"))
    assert [staging_store.set_if(TOKEN, first, read), staging_store.set_if(TOKEN, second, read)] == [True, False]
    assert staging_store.get(TOKEN, Key("k")) == first


def test_count_is_exact_below_its_bound(
    make_staging_store: StagingFactory, stage_all: StageAll, dynamo_queries: Queries
) -> None:
    store = make_staging_store(page_size=7)
    assert store.count(TOKEN, 10) == 0
    store.set(OTHER, staged("elsewhere"))
    stage_all(store, TOKEN, (tombstone(f"k{n:02d}") if n % 4 == 0 else staged(f"k{n:02d}", n) for n in range(30)))
    before = dynamo_queries()
    assert store.count(TOKEN, 1000) == 30  # tombstones count: each is a change
    # One COUNT query per up to 1 MB of items, not one per page of rows read out.
    assert pages_fetched(dynamo_queries, before) in (None, 1)
    assert store.count(TOKEN, 31) == 30
    assert store.count(TOKEN, 30) == 30
    assert store.count(TOKEN, 12) == 12
    assert store.count(TOKEN, 1) == 1
    store.delete(TOKEN, Key("k01"))
    assert store.count(TOKEN, 1000) == 29
    store.drop(TOKEN)
    assert store.count(TOKEN, 1000) == 0
    assert store.count(OTHER, 1000) == 1


def test_count_adds_up_every_shard(staging_store: StagingStore, stage_all: StageAll) -> None:
    sharded = with_shards(StagingToken("repo1-main:counted"), 4)
    keys = [f"part={n % 5}/{n:04d}" for n in range(120)]
    stage_all(staging_store, sharded, (staged(k, n) for n, k in enumerate(keys)))
    assert staging_store.count(sharded, 10_000) == 120
    assert staging_store.count(sharded, 50) == 50
    assert staging_store.count(sharded, 120) == 120
