"""The container's caches (the TTL ones on cachetools: the one module that imports it, a test holds graveler to
that), so that every cache of the engine has the same locking and the same two shapes.

- :class:`LRUCache`: content that never changes once written (ranges and metaranges, commit records, action
  files), bounded by a number of entries and, optionally, by a total weight; the least recently used go first,
  and the newest entry always stays, however heavy.
- :class:`TTLCache`: rows that rarely change (branch protection rules, GC sweep horizons, access keys and users,
  repositories), fresh for ``ttl_seconds`` by an injected clock; staleness is the point, so every user states how
  stale it may be, and a write in the same container replaces or drops the entry at once. When full, the stale
  entries go first, then everything (a burst of distinct keys must not pin the memory of a warm container).

cachetools' caches are not thread-safe, and a container serves several threads (the local stack, the workflow
tasks' thread pools): every access holds the cache's lock. Loads run outside it, so a slow read never blocks
other threads; two threads missing one key may both load it, which is harmless for what these caches hold.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable

import cachetools

__all__ = ["DEFAULT_MAX_ENTRIES", "LRUCache", "TTLCache"]

DEFAULT_MAX_ENTRIES = 1024
# Tells a miss from a remembered None.
_MISSING = object()


class LRUCache[K, V]:
    """At most ``capacity`` values and, when ``weigh`` is given, at most ``max_weight`` in total, the least recently
    used out first (the newest always stays). A capacity of 0 keeps nothing."""

    def __init__(self, capacity: int, max_weight: int | None = None, weigh: Callable[[V], int] | None = None) -> None:
        self._capacity = max(0, capacity)
        self._max_weight = max_weight
        self._weigh = weigh
        self._lock = threading.Lock()
        # Values with their weight, least recently used first. An OrderedDict rather than cachetools' LRUCache:
        # a hit is one lookup and one move_to_end in C, where cachetools' takes four Python calls (a log of 100
        # commits makes 100 hits).
        self._items: OrderedDict[K, tuple[V, int]] = OrderedDict()
        self._weight = 0

    def get(self, key: K) -> V | None:
        with self._lock:
            item = self._items.get(key)
            if item is None:
                return None
            self._items.move_to_end(key)
        return item[0]

    def put(self, key: K, value: V) -> None:
        if self._capacity == 0:
            return
        weight = self._weigh(value) if self._weigh is not None else 0
        with self._lock:
            previous = self._items.pop(key, None)
            if previous is not None:
                self._weight -= previous[1]
            if len(self._items) >= self._capacity:
                self._weight -= self._items.popitem(last=False)[1][1]
            self._items[key] = (value, weight)
            self._weight += weight
            while len(self._items) > 1 and self._max_weight is not None and self._weight > self._max_weight:
                self._weight -= self._items.popitem(last=False)[1][1]

    def get_or_load(self, key: K, load: Callable[[], V]) -> V:
        """The value for ``key``, else ``load()``'s, remembered (a None it returns is not)."""
        with self._lock:
            item = self._items.get(key)
            if item is not None:
                self._items.move_to_end(key)
        if item is not None:
            return item[0]
        value = load()
        self.put(key, value)
        return value

    def drop(self, key: K) -> None:
        with self._lock:
            item = self._items.pop(key, None)
            if item is not None:
                self._weight -= item[1]

    def drop_where(self, stale: Callable[[K], bool]) -> None:
        """Forgets every entry whose key ``stale`` picks."""
        with self._lock:
            for key in [k for k in self._items if stale(k)]:
                self._weight -= self._items.pop(key)[1]

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._weight = 0

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)

    @property
    def weight(self) -> int:
        with self._lock:
            return self._weight


class TTLCache[K, V]:
    """Values fresh for ``ttl_seconds`` by ``clock``, at most ``max_entries`` of them."""

    def __init__(
        self,
        ttl_seconds: float,
        clock: Callable[[], float] = time.monotonic,
        max_entries: int = DEFAULT_MAX_ENTRIES,
    ) -> None:
        self._max_entries = max(1, max_entries)
        self._lock = threading.Lock()
        self._entries: cachetools.TTLCache[K, V] = cachetools.TTLCache(self._max_entries, ttl_seconds, timer=clock)

    @property
    def ttl_seconds(self) -> float:
        return float(self._entries.ttl)

    @ttl_seconds.setter
    def ttl_seconds(self, seconds: float) -> None:
        """A new freshness for what is remembered from now on (the counting tests keep entries for a whole run);
        entries already remembered keep their own."""
        with self._lock:
            fresh: cachetools.TTLCache[K, V] = cachetools.TTLCache(
                self._max_entries, seconds, timer=self._entries.timer
            )
            self._entries = fresh

    def lookup(self, key: K, load: Callable[[], V]) -> V:
        """The value remembered for ``key`` while fresh, else ``load()``'s, remembered (an error it raises is not;
        a None it returns is)."""
        with self._lock:
            hit = self._entries.get(key, _MISSING)
        if hit is not _MISSING:
            return hit  # type: ignore[return-value]
        value = load()
        self.put(key, value)
        return value

    def fresh(self, key: K) -> V | None:
        """The value remembered for ``key`` while fresh, else None."""
        with self._lock:
            return self._entries.get(key)

    def put(self, key: K, value: V) -> None:
        """Remembers ``value`` for ttl_seconds. When full, stale entries go first, then everything."""
        with self._lock:
            if key not in self._entries and len(self._entries) >= self._max_entries:
                self._entries.expire()
                if len(self._entries) >= self._max_entries:
                    self._entries.clear()
            self._entries[key] = value

    def drop(self, key: K) -> None:
        with self._lock:
            self._entries.pop(key, None)

    def drop_where(self, stale: Callable[[V], bool]) -> None:
        """Forgets every entry whose value ``stale`` picks."""
        with self._lock:
            for key in [k for k, v in self._entries.items() if stale(v)]:
                del self._entries[key]
