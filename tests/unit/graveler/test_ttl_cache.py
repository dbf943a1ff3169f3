"""TTLCache: what protection rules, GC horizons, keys and users are remembered through."""

from __future__ import annotations

import pytest

from chalicelib.graveler.storage.caches import TTLCache


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_value_is_loaded_once_while_fresh_then_again() -> None:
    clock, loads = Clock(), []
    cache: TTLCache[str, str | None] = TTLCache(5, clock)

    def load() -> str | None:
        loads.append(1)
        return None  # "not there" is remembered too

    assert cache.lookup("k", load) is None and cache.lookup("k", load) is None
    assert len(loads) == 1
    clock.now += 5
    cache.lookup("k", load)
    assert len(loads) == 2


def test_errors_are_not_remembered_and_writes_replace_or_drop() -> None:
    cache: TTLCache[str, int] = TTLCache(5, Clock())

    def missing() -> int:
        raise KeyError("k")

    with pytest.raises(KeyError):
        cache.lookup("k", missing)
    assert cache.fresh("k") is None
    cache.put("k", 1)
    assert cache.lookup("k", missing) == 1
    cache.put("k", 2)
    assert cache.fresh("k") == 2
    cache.drop("k")
    assert cache.fresh("k") is None
    cache.put("a", 1)
    cache.put("b", 2)
    cache.drop_where(lambda v: v == 1)
    assert (cache.fresh("a"), cache.fresh("b")) == (None, 2)


def test_a_full_cache_drops_stale_entries_first_then_everything() -> None:
    clock = Clock()
    cache: TTLCache[int, int] = TTLCache(5, clock, max_entries=3)
    cache.put(1, 1)
    clock.now += 10
    cache.put(2, 2)
    cache.put(3, 3)
    cache.put(4, 4)  # full: the stale 1 goes
    assert [cache.fresh(k) for k in (1, 2, 3, 4)] == [None, 2, 3, 4]
    cache.put(5, 5)  # full of fresh ones: all go
    assert [cache.fresh(k) for k in (2, 3, 4, 5)] == [None, None, None, 5]
