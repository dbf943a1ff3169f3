"""Counting requests without a write per request: each container keeps its counts in memory, by month, and adds
them to the store (one atomic add a month with requests) when a request ends at least ``flush_seconds`` after the
last flush, and when the report is asked for (lakeFS flushes on the call too, and every
``usage_report.flush_interval`` otherwise).

What a container counted and has not flushed yet is lost if Lambda retires it before its next request after the
interval: at most ``flush_seconds`` of one container's requests (docs/api.md). A flush that fails keeps the counts
for the next one and never fails the request it ends.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime

from chalicelib.graveler import errors

from .ports import InstallationReport, UsageStore

__all__ = ["DEFAULT_FLUSH_SECONDS", "UsageMeter"]

log = logging.getLogger(__name__)

DEFAULT_FLUSH_SECONDS = 60.0


class UsageMeter:
    """Counts requests in memory and flushes them to the store now and then."""

    def __init__(
        self, store: UsageStore, flush_seconds: float = DEFAULT_FLUSH_SECONDS, clock: Callable[[], float] = time.time
    ) -> None:
        self._store = store
        self._flush_seconds = flush_seconds
        self._clock = clock
        self._lock = threading.Lock()
        self._pending: Counter[tuple[int, int]] = Counter()
        self._last_flush = clock()
        self._installation_id: str | None = None

    def count(self, requests: int = 1) -> None:
        """Counts served requests in this month (UTC). Memory only."""
        when = datetime.fromtimestamp(self._clock(), tz=UTC)
        with self._lock:
            self._pending[(when.year, when.month)] += requests

    def pending(self) -> int:
        """How many counted requests this container has not flushed yet."""
        with self._lock:
            return sum(self._pending.values())

    def flush_if_due(self) -> None:
        """Flushes when the last flush is at least the interval old; never raises (a failed flush is retried by a
        later one)."""
        with self._lock:
            due = self._pending and self._clock() - self._last_flush >= self._flush_seconds
        if due:
            try:
                self.flush()
            except errors.GravelerError as e:
                log.warning("usage counters not flushed (kept for the next flush): %s", e)

    def flush(self) -> None:
        """Adds the counts kept here to the store. Raises StorageError (the counts not added stay kept)."""
        with self._lock:
            taken, self._pending = self._pending, Counter()
            self._last_flush = self._clock()
        if not taken:
            return
        installation_id = self.installation_id()
        try:
            while taken:
                (year, month), n = next(iter(taken.items()))
                self._store.add(installation_id, year, month, n)
                del taken[(year, month)]
        finally:
            if taken:
                with self._lock:
                    self._pending.update(taken)

    def installation_id(self) -> str:
        """The installation's id: the stored one, or a new one stored now (an installation set up before ids were
        kept gets its id on first use). Raises StorageError."""
        if self._installation_id is None:
            stored = self._store.get_installation_id()
            self._installation_id = stored or self._store.create_installation_id(str(uuid.uuid4()))
        return self._installation_id

    def report(self) -> InstallationReport:
        """This container's counts flushed, then every month of the installation. Raises StorageError."""
        self.flush()
        installation_id = self.installation_id()
        return InstallationReport(installation_id, tuple(self._store.records(installation_id)))
