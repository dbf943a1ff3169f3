"""The UsageStore port in memory (tests and engine-only use)."""

from __future__ import annotations

import threading
from collections import Counter

from chalicelib.usage.ports import UsageRecord

__all__ = ["MemoryUsageStore"]


class MemoryUsageStore:
    """The installation id and the monthly counters in dicts, behind one lock."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._installation_id: str | None = None
        self._counts: Counter[tuple[str, int, int]] = Counter()

    def create_installation_id(self, installation_id: str) -> str:
        with self._lock:
            if self._installation_id is None:
                self._installation_id = installation_id
            return self._installation_id

    def get_installation_id(self) -> str | None:
        with self._lock:
            return self._installation_id

    def add(self, installation_id: str, year: int, month: int, count: int) -> None:
        with self._lock:
            self._counts[(installation_id, year, month)] += count

    def records(self, installation_id: str) -> list[UsageRecord]:
        with self._lock:
            found = sorted((y, m, n) for (i, y, m), n in self._counts.items() if i == installation_id)
        return [UsageRecord(y, m, n) for y, m, n in found]
