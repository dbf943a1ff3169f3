"""The UsageStore contract (chalicelib/usage/ports.py), on the memory twin and on DynamoDB under moto: one
installation id whoever stores it first, monthly counters that add atomically, each installation's own months."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

from chalicelib.adapters.dynamodb import TableNames
from chalicelib.adapters.dynamodb.usage import DynamoUsageStore
from chalicelib.adapters.memory_usage import MemoryUsageStore
from chalicelib.usage import UsageRecord, UsageStore

from .conftest import REGION


@pytest.fixture
def make_store(table_names: TableNames | None) -> Callable[[], UsageStore]:
    """Stores over one test's data: two of them stand for two Lambda containers."""
    memory = MemoryUsageStore()
    return lambda: memory if table_names is None else DynamoUsageStore(table_names, REGION)


def _concurrently(calls: list[Callable[[], object]]) -> list[object]:
    results: list[object] = [None] * len(calls)
    start = threading.Barrier(len(calls))

    def run(i: int) -> None:
        start.wait()
        results[i] = calls[i]()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def test_one_installation_id_whoever_stores_it(make_store: Callable[[], UsageStore]) -> None:
    first, second = make_store(), make_store()
    assert first.get_installation_id() is None
    winners = _concurrently([lambda n=n: first.create_installation_id(f"id-{n}") for n in range(6)])
    assert len(set(winners)) == 1
    assert second.get_installation_id() == winners[0]
    assert second.create_installation_id("another") == winners[0]


def test_counters_add_atomically_by_month(make_store: Callable[[], UsageStore]) -> None:
    stores = [make_store(), make_store()]
    _concurrently([lambda n=n: stores[n % 2].add("inst", 2026, 11, n + 1) for n in range(8)])
    stores[0].add("inst", 2026, 12, 5)
    stores[1].add("inst", 2027, 1, 2)
    stores[1].add("other", 2026, 11, 1000)
    # 1 + 2 + ... + 8 = 36: no add lost to another.
    assert stores[0].records("inst") == [UsageRecord(2026, 11, 36), UsageRecord(2026, 12, 5), UsageRecord(2027, 1, 2)]
    assert stores[1].records("other") == [UsageRecord(2026, 11, 1000)]
    assert stores[1].records("nobody") == []
