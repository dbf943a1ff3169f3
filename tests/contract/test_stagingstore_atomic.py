"""StagingStore.set_if_all, on the in-memory twin and DynamoStagingStore (one TransactWriteItems on moto): all of
the changes or none, of concurrent callers at most one wins, the limits refused before anything is written, and the
sketch items written as set_if writes them."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import pytest

from chalicelib.graveler import errors
from chalicelib.graveler.ports import StagingStore
from chalicelib.graveler.records import Key, StagedEntry, StagingToken
from chalicelib.graveler.writes.preconditions import MAX_ATOMIC_BYTES, MAX_ATOMIC_CHANGES
from chalicelib.graveler.writes.staging_shards import shard_of, sketch_rank

from .conftest import Moto
from .test_stagingstore_contract import TOKEN, make_entry, staged, tombstone

# A token of 4 shards: the rows of one atomic write sit in several partitions.
SHARDED = StagingToken("repo1-main:token-9#s4")

Pairs = Sequence[tuple[StagedEntry, StagedEntry | None]]


def rows(store: StagingStore, token: StagingToken, keys: Sequence[str]) -> dict[str, StagedEntry | None]:
    return {key: store.get(token, Key(key)) for key in keys}


@pytest.mark.parametrize("token", [TOKEN, SHARDED])
def test_all_when_every_expectation_holds(staging_store: StagingStore, token: StagingToken, moto: Moto | None) -> None:
    keys = [f"t/{n}/pointer" for n in range(8)]
    assert len({shard_of(token, Key(k)) for k in keys}) == (4 if token == SHARDED else 1)
    staging_store.set(token, staged(keys[0], 1))
    staging_store.set(token, tombstone(keys[1]))
    expected: list[StagedEntry | None] = [staged(keys[0], 1), tombstone(keys[1]), *[None] * 6]
    changes = [staged(k, 2) for k in keys]
    assert staging_store.set_if_all(token, list(zip(changes, expected, strict=True))) is True
    assert rows(staging_store, token, keys) == {k: staged(k, 2) for k in keys}
    if moto is not None:  # the rows in one transaction (moto applies it through its own put_item, so not counted)
        assert moto.calls["transact_write_items"] == 1


@pytest.mark.parametrize("failing", [0, 3, 7])
@pytest.mark.parametrize("token", [TOKEN, SHARDED])
def test_none_when_one_expectation_fails(staging_store: StagingStore, token: StagingToken, failing: int) -> None:
    keys = [f"t/{n}/pointer" for n in range(8)]
    for key in keys:
        staging_store.set(token, staged(key, 1))
    before = rows(staging_store, token, keys)
    # Every pair expects the row as read, but one row changed since (another writer).
    staging_store.set(token, staged(keys[failing], 5))
    before[keys[failing]] = staged(keys[failing], 5)
    pairs = [(staged(k, 2), staged(k, 1)) for k in keys]
    assert staging_store.set_if_all(token, pairs) is False
    assert rows(staging_store, token, keys) == before
    # Expecting no row where there is one, or a row where there is none, fails all the same.
    assert staging_store.set_if_all(token, [(staged("fresh", 1), None), (staged(keys[0], 3), None)]) is False
    assert (
        staging_store.set_if_all(token, [(staged(keys[0], 3), staged(keys[0], 1)), (staged("x", 1), tombstone("x"))])
        is False
    )
    assert rows(staging_store, token, ["fresh", "x", keys[0]]) == {"fresh": None, "x": None, keys[0]: before[keys[0]]}


def test_a_tombstone_is_a_change_and_an_expectation(staging_store: StagingStore) -> None:
    staging_store.set(TOKEN, staged("a", 1))
    staging_store.set(TOKEN, tombstone("b"))
    assert staging_store.set_if_all(TOKEN, [(tombstone("a"), staged("a", 1)), (staged("b", 1), tombstone("b"))])
    assert rows(staging_store, TOKEN, ["a", "b"]) == {"a": tombstone("a"), "b": staged("b", 1)}


def test_concurrent_callers_at_most_one_wins(staging_store: StagingStore) -> None:
    keys = ["p/a", "p/b", "p/c"]
    for key in keys:
        staging_store.set(TOKEN, staged(key, 1))
    callers = 6
    barrier = threading.Barrier(callers)
    results: list[bool] = [False] * callers
    failures: list[BaseException] = []

    def write(n: int) -> None:
        # Every caller read the same rows; each writes its own addresses, so the survivor shows whose write won.
        pairs = [
            (StagedEntry(Key(k), make_entry(k, 2, physical_address=f"s3://bucket/ns/data/g1/{k}-{n}")), staged(k, 1))
            for k in keys
        ]
        barrier.wait()
        try:
            results[n] = staging_store.set_if_all(TOKEN, pairs)
        except BaseException as e:  # reported below, in the test's thread
            failures.append(e)

    threads = [threading.Thread(target=write, args=(n,)) for n in range(callers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures
    assert results.count(True) == 1
    winner = results.index(True)
    assert [staging_store.get(TOKEN, Key(k)).value.physical_address for k in keys] == [  # type: ignore[union-attr]
        f"s3://bucket/ns/data/g1/{k}-{winner}" for k in keys
    ]


def test_overlapping_callers_one_after_another(staging_store: StagingStore) -> None:
    """Two writers that read the same row of one key and different rows of others: the second is refused whole,
    its other keys untouched."""
    staging_store.set(TOKEN, staged("shared", 1))
    assert staging_store.set_if_all(TOKEN, [(staged("shared", 2), staged("shared", 1)), (staged("mine", 1), None)])
    assert not staging_store.set_if_all(
        TOKEN, [(staged("theirs", 1), None), (staged("shared", 3), staged("shared", 1))]
    )
    assert rows(staging_store, TOKEN, ["shared", "mine", "theirs"]) == {
        "shared": staged("shared", 2),
        "mine": staged("mine", 1),
        "theirs": None,
    }


def test_limits_are_refused_before_anything_is_written(staging_store: StagingStore) -> None:
    too_many = [(staged(f"k{n}", 1), None) for n in range(MAX_ATOMIC_CHANGES + 1)]
    with pytest.raises(errors.Invalid, match=str(MAX_ATOMIC_CHANGES)):
        staging_store.set_if_all(TOKEN, too_many)
    with pytest.raises(errors.Invalid, match="once"):
        staging_store.set_if_all(TOKEN, [(staged("k", 1), None), (staged("k", 2), None)])
    with pytest.raises(errors.Invalid):
        staging_store.set_if_all(TOKEN, [])
    # 100 rows of ~45 KB of user metadata each: within the count, over the 4 MB of one transaction.
    big = {f"m{n}": "x" * 9_000 for n in range(5)}
    heavy = [(StagedEntry(Key(f"h{n}"), make_entry(f"h{n}", user_metadata=big)), None) for n in range(100)]
    with pytest.raises(errors.Invalid, match=str(MAX_ATOMIC_BYTES)):
        staging_store.set_if_all(TOKEN, heavy)
    assert list(staging_store.iterate(TOKEN)) == []
    assert staging_store.set_if_all(TOKEN, too_many[:MAX_ATOMIC_CHANGES]) is True
    assert len(list(staging_store.iterate(TOKEN))) == MAX_ATOMIC_CHANGES


def test_sketch_items_as_set_if_writes_them(staging_store: StagingStore) -> None:
    """The keys a sample may name: every sketched key of a written change, as after set_if; a refused write may
    leave its sketch items (set_if's too), which name keys a sample already tolerates as deleted."""
    keys = [f"s/{n}" for n in range(200)]
    sketched = {Key(k) for k in keys if sketch_rank(Key(k)) is not None}
    assert sketched  # one key in 16
    for start in range(0, len(keys), MAX_ATOMIC_CHANGES):
        assert staging_store.set_if_all(TOKEN, [(staged(k, 1), None) for k in keys[start : start + 100]])
    assert set(staging_store.sample(TOKEN, 1000).keys) == sketched
    # Refused: no row changes; the sketch names at most what it named plus the refused keys.
    other = StagingToken("repo1-main:token-10")
    refused = [(staged(k, 1), staged(k, 0)) for k in keys[:100]]
    assert staging_store.set_if_all(other, refused) is False
    assert list(staging_store.iterate(other)) == []
    assert set(staging_store.sample(other, 1000).keys) <= {Key(k) for k in keys[:100]}


def test_dynamodb_transactions_carry_a_request_token(
    staging_store: StagingStore, moto: Moto | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each set_if_all is one TransactWriteItems with its own ClientRequestToken: the SDK's retry of a call whose
    reply was lost is then answered as the success it was, never as a failed condition on rows already written."""
    if moto is None:
        pytest.skip("DynamoDB only")
    from pynamodb.connection import Connection

    tokens: list[str | None] = []
    original = Connection.transact_write_items

    def recording(self: Connection, *args: object, **kwargs: object) -> object:
        tokens.append(kwargs.get("client_request_token"))  # type: ignore[arg-type]
        return original(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Connection, "transact_write_items", recording)
    assert staging_store.set_if_all(TOKEN, [(staged("a", 1), None), (staged("b", 1), None)])
    assert staging_store.set_if_all(TOKEN, [(staged("a", 2), staged("a", 1))])
    assert len(tokens) == 2 and len(set(tokens)) == 2 and all(t and len(t) == 32 for t in tokens)
