"""What a container remembers, for a while, of rows that rarely change: a thread-safe map whose entries live
``ttl_seconds`` by an injected clock, bounded in size (branch protection rules, GC sweep horizons, access keys
and users). Staleness is the point, so every user states how stale it may be; a write in the same container
replaces or drops the entry at once.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

__all__ = ["TTLCache"]

DEFAULT_MAX_ENTRIES = 1024


class TTLCache[K, V]:
    def __init__(
        self,
        ttl_seconds: float,
        clock: Callable[[], float] = time.monotonic,
        max_entries: int = DEFAULT_MAX_ENTRIES,
    ) -> None:
        self.ttl_seconds = ttl_seconds
        self._clock = clock
        self._max_entries = max_entries
        self._lock = threading.Lock()
        self._entries: dict[K, tuple[float, V]] = {}

    def lookup(self, key: K, load: Callable[[], V]) -> V:
        """The value remembered for ``key`` while fresh, else ``load()``'s, remembered (an error it raises is not;
        a None it returns is)."""
        now = self._clock()
        with self._lock:
            hit = self._entries.get(key)
        if hit is not None and hit[0] > now:
            return hit[1]
        value = load()
        self.put(key, value)
        return value

    def fresh(self, key: K) -> V | None:
        """The value remembered for ``key`` while fresh, else None."""
        with self._lock:
            hit = self._entries.get(key)
        return hit[1] if hit is not None and hit[0] > self._clock() else None

    def put(self, key: K, value: V) -> None:
        """Remembers ``value`` for ttl_seconds. When full, stale entries go first, then everything."""
        now = self._clock()
        with self._lock:
            if key not in self._entries and len(self._entries) >= self._max_entries:
                self._entries = {k: e for k, e in self._entries.items() if e[0] > now}
                if len(self._entries) >= self._max_entries:
                    self._entries.clear()
            self._entries[key] = (now + self.ttl_seconds, value)

    def drop(self, key: K) -> None:
        with self._lock:
            self._entries.pop(key, None)

    def drop_where(self, stale: Callable[[V], bool]) -> None:
        """Forgets every entry whose value ``stale`` picks."""
        with self._lock:
            self._entries = {k: e for k, e in self._entries.items() if not stale(e[1])}
