"""Which reads ask whether GC collected an object's data, and what they pay: nothing before any sweep, nothing
for data younger than every sweep's cutoff, one HEAD of the data otherwise; the sweep records are listed once
per namespace per TTL (counted calls and a hand-moved clock)."""

from __future__ import annotations

from collections.abc import Iterator

from chalicelib.adapters.memory import MemoryBlockStore
from chalicelib.graveler.reads.collected import CollectedCheck, sweeps_prefix
from chalicelib.graveler.writes.addressing import new_data_address, partition_of

NS = "s3://bucket/repo"
HOUR = 3600
NOW = 1_800_000_000.0


class CountingBlocks(MemoryBlockStore):
    def __init__(self) -> None:
        super().__init__()
        self.lists = 0
        self.heads = 0

    def list_blobs(self, prefix: str) -> Iterator[tuple[str, int]]:
        self.lists += 1
        return super().list_blobs(prefix)

    def exists(self, address: str) -> bool:
        self.heads += 1
        return super().exists(address)


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def record_sweep(blocks: MemoryBlockStore, cutoff: float, run_id: str = "r1") -> None:
    """What emr/gc_job.py writes before a sweep (tests/gc checks that the two agree)."""
    blocks.put(f"{sweeps_prefix(NS)}partition={partition_of(cutoff + HOUR)}/run_id={run_id}.json", b"{}")


def test_reads_pay_nothing_before_any_sweep_and_nothing_for_young_data() -> None:
    blocks, clock = CountingBlocks(), Clock()
    check = CollectedCheck(blocks, clock, ttl_seconds=5)
    old = new_data_address(NS, NOW - 10 * 24 * HOUR)
    young = new_data_address(NS, NOW - 2 * HOUR)
    blocks.put(young, b"y")  # the old one's data is gone

    assert check.is_collected(NS, old) is False  # never swept: nothing can have been collected
    assert (blocks.lists, blocks.heads) == (1, 0)

    record_sweep(blocks, NOW - 24 * HOUR)
    clock.now += 5.1
    assert check.is_collected(NS, young) is False
    assert (blocks.lists, blocks.heads) == (2, 0)  # younger than the cutoff: no HEAD
    assert check.is_collected(NS, old) is True
    assert blocks.heads == 1
    blocks.put(old, b"back")
    assert check.is_collected(NS, old) is False
    # Outside data/ (imported objects, other namespaces) GC never deletes anything.
    assert check.is_collected(NS, "s3://elsewhere/file") is False
    assert check.is_collected(NS, f"{NS}/data-not/x") is False
    assert check.is_collected(NS, f"{NS}/data/not-a-partition/x") is True
    assert blocks.lists == 2


def test_the_newest_cutoff_wins_and_the_records_are_cached_for_the_ttl() -> None:
    blocks, clock = CountingBlocks(), Clock()
    check = CollectedCheck(blocks, clock, ttl_seconds=5)
    record_sweep(blocks, NOW - 30 * 24 * HOUR, "older")
    three_days = new_data_address(NS, NOW - 3 * 24 * HOUR)
    assert check.may_be_collected(NS, three_days) is False
    record_sweep(blocks, NOW - 24 * HOUR, "newer")
    clock.now += 4.9
    assert check.may_be_collected(NS, three_days) is False  # still the cached records
    assert blocks.lists == 1
    clock.now += 0.2
    assert check.may_be_collected(NS, three_days) is True
    assert blocks.lists == 2
    # Data written within the clock margin (an hour) before the cutoff counts as possibly collected.
    assert check.may_be_collected(NS, new_data_address(NS, NOW - 24 * HOUR + HOUR - 1)) is True
    assert check.may_be_collected(NS, new_data_address(NS, NOW - 24 * HOUR + 2 * HOUR)) is False
