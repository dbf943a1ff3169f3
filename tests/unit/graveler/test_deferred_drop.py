"""deferred_drop.drop_within: a token dropped in pieces within a deadline, shard by shard, its key sketch too."""

from __future__ import annotations

from chalicelib.adapters.memory import MemoryStagingStore
from chalicelib.graveler.records import Key, StagedEntry, StagingToken
from chalicelib.graveler.writes.deferred_drop import drop_within


def _staged(staging: MemoryStagingStore, token: StagingToken, rows: int) -> None:
    staging.set_many(token, [StagedEntry(Key(f"k/{n:05d}"), None) for n in range(rows)])


def test_a_sharded_token_is_dropped_whole_rows_and_sketch() -> None:
    staging = MemoryStagingStore()
    token = StagingToken("repo-main:abc#s4")
    _staged(staging, token, 2_000)
    assert staging.sample(token, 64).keys  # the sketch holds some of the keys
    assert drop_within(staging, token, None, lambda: 0.0, chunk=100, threads=3)
    assert list(staging.iterate(token)) == [] and not staging.sample(token, 64).keys


def test_a_drop_cut_by_its_deadline_goes_on_where_it_stopped() -> None:
    staging = MemoryStagingStore()
    token = StagingToken("repo-main:abc#s2")
    _staged(staging, token, 1_000)
    ticks = iter(range(10_000))
    assert not drop_within(staging, token, 0, lambda: next(ticks), chunk=100, threads=2)  # one round, then cut
    left = sum(1 for _ in staging.iterate(token))
    assert left == 800
    assert drop_within(staging, token, None, lambda: 0.0, chunk=100, threads=2)
    assert list(staging.iterate(token)) == [] and not staging.sample(token, 64).keys
