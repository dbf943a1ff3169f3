"""LRUCache (graveler/storage/caches.py), behind ranges, commits and action files: recency, count and weight
bounds, locking."""

from __future__ import annotations

import threading

from chalicelib.graveler.storage.caches import LRUCache


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


def test_dropping_by_key_keeps_the_weight_right():
    cache: LRUCache[tuple[str, int], list[int]] = LRUCache(10, max_weight=100, weigh=len)
    for n in range(4):
        cache.put(("a" if n % 2 else "b", n), [0] * n)
    cache.drop_where(lambda key: key[0] == "a")
    assert len(cache) == 2 and cache.weight == 0 + 2
    assert cache.get(("b", 2)) == [0, 0] and cache.get(("a", 1)) is None


def test_threads_sharing_one_cache_keep_its_bounds_and_weight():
    # cachetools' caches are not thread-safe by themselves: the lock keeps count, weight and contents consistent.
    cache: LRUCache[int, bytes] = LRUCache(50, max_weight=1_000, weigh=len)
    barrier = threading.Barrier(8)

    def work(seed: int) -> None:
        barrier.wait()
        for n in range(2_000):
            key = (seed * 7919 + n * 31) % 300
            cache.get_or_load(key, lambda key=key: bytes(key % 40))
            if n % 97 == 0:
                cache.drop_where(lambda k, seed=seed: k % 8 == seed)

    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    kept = [(key, cache.get(key)) for key in range(300)]
    values = [value for _, value in kept if value is not None]
    assert len(values) == len(cache) <= 50
    assert cache.weight == sum(len(value) for value in values) <= 1_000
    assert all(value == bytes(key % 40) for key, value in kept if value is not None)


def test_a_hit_makes_no_python_call_of_its_own() -> None:
    """A log of 100 commits makes 100 hits on the commit cache: a hit is the cache's own method and C (a dict
    lookup and a move to the end), no further Python call (cachetools' LRUCache made four)."""
    import sys

    cache: LRUCache[str, int] = LRUCache(4)
    cache.put("a", 1)
    calls: list[str] = []

    def profile(frame: object, event: str, arg: object) -> None:
        if event == "call":
            calls.append(frame.f_code.co_qualname)  # type: ignore[attr-defined]

    sys.setprofile(profile)
    try:
        found = cache.get("a")
    finally:
        sys.setprofile(None)
    assert found == 1
    assert calls == ["LRUCache.get"]
