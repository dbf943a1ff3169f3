"""The LRU behind the manager: recency, count and weight bounds."""

from __future__ import annotations

from chalicelib.graveler.committed.cache import LRUCache


def test_evicts_least_recently_used():
    cache: LRUCache[str, int] = LRUCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # a is now the most recent
    cache.put("c", 3)
    assert (cache.get("a"), cache.get("b"), cache.get("c")) == (1, None, 3)


def test_weight_bound_keeps_the_newest_even_when_heavy():
    cache: LRUCache[str, list[int]] = LRUCache(10, max_weight=5, weigh=len)
    cache.put("a", [1, 2, 3])
    cache.put("b", [1, 2])
    assert len(cache) == 2 and cache.weight == 5
    cache.put("c", [1])
    assert cache.get("a") is None and cache.weight == 3
    cache.put("huge", list(range(50)))
    assert len(cache) == 1 and cache.get("huge") is not None and cache.weight == 50


def test_replacing_a_key_updates_its_weight():
    cache: LRUCache[str, list[int]] = LRUCache(10, max_weight=100, weigh=len)
    cache.put("a", [1, 2, 3])
    cache.put("a", [1])
    assert cache.weight == 1 and len(cache) == 1


def test_get_or_load_loads_once():
    cache: LRUCache[str, int] = LRUCache(4)
    calls: list[str] = []

    def load() -> int:
        calls.append("x")
        return 7

    assert cache.get_or_load("k", load) == 7
    assert cache.get_or_load("k", load) == 7
    assert calls == ["x"]


def test_zero_capacity_caches_nothing():
    cache: LRUCache[str, int] = LRUCache(0)
    cache.put("a", 1)
    assert cache.get("a") is None and len(cache) == 0
