"""The StagingStore twin: the reference behaviour the contract suite (tests/contract) holds DynamoStagingStore to.

Kept apart from the other twins (adapters/memory.py) because it carries the staging rules of its own: the shards
of a token (graveler/staging_shards.py) and the key sketch the commit plan samples.
"""

from __future__ import annotations

import bisect
import threading
from collections.abc import Iterable, Iterator

from chalicelib.graveler.records import Key, StagedEntry, StagingToken

__all__ = ["MemoryStagingStore"]


class MemoryStagingStore:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tokens: dict[str, dict[str, StagedEntry]] = {}

    def get(self, token: StagingToken, key: Key) -> StagedEntry | None:
        return self._tokens.get(token, {}).get(key)

    def set(self, token: StagingToken, staged: StagedEntry) -> StagedEntry | None:
        with self._lock:
            rows = self._tokens.setdefault(token, {})
            replaced = rows.get(staged.key)
            rows[staged.key] = staged
            return replaced

    def set_if(self, token: StagingToken, staged: StagedEntry, expected: StagedEntry | None) -> bool:
        with self._lock:
            rows = self._tokens.setdefault(token, {})
            current = rows.get(staged.key)
            if not _same_row(current, expected):
                return False
            rows[staged.key] = staged
            return True

    def get_many(self, token: StagingToken, keys: Iterable[Key]) -> dict[Key, StagedEntry]:
        with self._lock:
            rows = self._tokens.get(token, {})
            return {key: rows[key] for key in keys if key in rows}

    def set_many(self, token: StagingToken, entries: Iterable[StagedEntry]) -> None:
        with self._lock:
            staged_now = self._tokens.setdefault(token, {})
            for staged in entries:
                staged_now[staged.key] = staged

    def delete(self, token: StagingToken, key: Key) -> None:
        with self._lock:
            self._tokens.get(token, {}).pop(key, None)

    def iterate(self, token: StagingToken, from_key: str = "", first_page: int | None = None) -> Iterator[StagedEntry]:
        with self._lock:
            entries = dict(self._tokens.get(token, {}))
        keys = sorted(entries)
        for key in keys[bisect.bisect_left(keys, from_key) :]:
            yield entries[key]

    def drop(self, token: StagingToken) -> None:
        with self._lock:
            self._tokens.pop(token, None)

    def delete_many(self, token: StagingToken, keys: Iterable[Key]) -> None:
        with self._lock:
            staged = self._tokens.get(token, {})
            for key in keys:
                staged.pop(key, None)


def _same_row(current: StagedEntry | None, expected: StagedEntry | None) -> bool:
    """What StagingStore.set_if compares (the entry's identity fields, as the DynamoDB adapter's condition does)."""
    if current is None or expected is None:
        return current is None and expected is None
    a, b = current.value, expected.value
    if a is None or b is None:
        return a is None and b is None
    return (a.physical_address, a.etag, a.size, a.mtime) == (b.physical_address, b.etag, b.size, b.mtime)
