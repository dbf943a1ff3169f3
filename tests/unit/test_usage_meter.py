"""The usage meter (chalicelib/usage/meter.py): requests are counted in memory and reach the store in one add a
month at most once a flush interval, so no request pays a store call of its own; a failed flush keeps its counts."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime

import pytest

from chalicelib.adapters.memory_usage import MemoryUsageStore
from chalicelib.graveler import errors
from chalicelib.usage import UsageMeter, UsageRecord

NOV = datetime(2026, 11, 28, 12, tzinfo=UTC).timestamp()
DEC = datetime(2026, 12, 1, 0, 0, 5, tzinfo=UTC).timestamp()


class CountingStore(MemoryUsageStore):
    def __init__(self) -> None:
        super().__init__()
        self.calls: Counter[str] = Counter()
        self.failing = False

    def add(self, installation_id: str, year: int, month: int, count: int) -> None:
        self.calls["add"] += 1
        if self.failing:
            raise errors.StorageError("DynamoDB: throttled")
        super().add(installation_id, year, month, count)

    def get_installation_id(self) -> str | None:
        self.calls["get_installation_id"] += 1
        return super().get_installation_id()


@pytest.fixture
def clock() -> list[float]:
    return [NOV]


def test_requests_cost_no_store_call_until_the_interval_passes(clock: list[float]) -> None:
    store = CountingStore()
    meter = UsageMeter(store, flush_seconds=60, clock=lambda: clock[0])
    for _ in range(1000):
        meter.count()
        meter.flush_if_due()
        clock[0] += 0.05  # 1,000 requests in 50 s
    assert store.calls == {} and meter.pending() == 1000
    clock[0] = NOV + 61
    meter.count()
    meter.flush_if_due()
    # One add for the month (and, once per container, the installation id's read).
    assert store.calls == {"add": 1, "get_installation_id": 1}
    assert meter.pending() == 0
    meter.count()
    meter.flush_if_due()  # the interval starts again
    assert store.calls["add"] == 1
    report = meter.report()  # flushes what is pending, as lakeFS does on the call
    assert report.reports == (UsageRecord(2026, 11, 1002),)
    assert store.calls["add"] == 2 and store.calls["get_installation_id"] == 1


def test_months_are_counted_apart_and_a_failed_flush_keeps_its_counts(clock: list[float]) -> None:
    store = CountingStore()
    meter = UsageMeter(store, flush_seconds=60, clock=lambda: clock[0])
    meter.count(3)
    clock[0] = DEC
    meter.count(2)
    store.failing = True
    meter.flush_if_due()  # never raises: the request it ends is not failed by it
    assert meter.pending() == 5
    with pytest.raises(errors.StorageError):
        meter.report()
    store.failing = False
    report = meter.report()
    assert report.reports == (UsageRecord(2026, 11, 3), UsageRecord(2026, 12, 2))
    assert report.installation_id == store.get_installation_id()


def test_the_installation_id_is_kept_once_stored(clock: list[float]) -> None:
    store = CountingStore()
    first = UsageMeter(store, clock=lambda: clock[0]).installation_id()
    assert UsageMeter(store, clock=lambda: clock[0]).installation_id() == first
    assert len(first) == 36  # a UUID, as lakeFS's
