"""The StagingStore twin: the reference behaviour the contract suite (tests/contract) holds DynamoStagingStore to.

Besides the rows it carries staging's own rules: the shards of a token (graveler/staging_shards.py) and the key
sketch the commit plan samples.
"""

from __future__ import annotations

import bisect
import heapq
import threading
from collections.abc import Iterable, Iterator, Sequence

from chalicelib.graveler import errors
from chalicelib.graveler.preconditions import check_atomic_changes
from chalicelib.graveler.records import Key, StagedEntry, StagingSample, StagingToken
from chalicelib.graveler.staging_shards import combine, per_shard_sample, shard_count, shard_of, sketch_rank

__all__ = ["MemoryStagingStore"]


class MemoryStagingStore:
    """Rows by (token, shard) and each shard's sketch, as DynamoStagingStore keeps them by partition key."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._rows: dict[tuple[str, int], dict[str, StagedEntry]] = {}
        self._sketch: dict[tuple[str, int], dict[str, int]] = {}

    def _shard(self, token: StagingToken, key: str) -> dict[str, StagedEntry]:
        """Called with the lock held: the rows of the key's shard, with the key sketched if it is sketched."""
        where = (token, shard_of(token, key))
        rank = sketch_rank(key)
        if rank is not None:
            self._sketch.setdefault(where, {})[key] = rank
        return self._rows.setdefault(where, {})

    def get(self, token: StagingToken, key: Key) -> StagedEntry | None:
        return self._rows.get((token, shard_of(token, key)), {}).get(key)

    def set(self, token: StagingToken, staged: StagedEntry) -> StagedEntry | None:
        with self._lock:
            rows = self._shard(token, staged.key)
            replaced = rows.get(staged.key)
            rows[staged.key] = staged
            return replaced

    def set_if(self, token: StagingToken, staged: StagedEntry, expected: StagedEntry | None) -> bool:
        with self._lock:
            rows = self._shard(token, staged.key)  # sketched even when refused, as DynamoDB writes it first
            current = rows.get(staged.key)
            if not _same_row(current, expected):
                return False
            rows[staged.key] = staged
            return True

    def set_if_all(self, token: StagingToken, changes: Sequence[tuple[StagedEntry, StagedEntry | None]]) -> bool:
        check_atomic_changes(changes)
        with self._lock:
            # Every key sketched first, even when refused, as the DynamoDB adapter writes sketch items before its
            # transaction; then every expectation checked before any row changes.
            shards = [self._shard(token, staged.key) for staged, _ in changes]
            if not all(
                _same_row(rows.get(staged.key), expected)
                for rows, (staged, expected) in zip(shards, changes, strict=True)
            ):
                return False
            for rows, (staged, _) in zip(shards, changes, strict=True):
                rows[staged.key] = staged
            return True

    def get_many(self, token: StagingToken, keys: Iterable[Key]) -> dict[Key, StagedEntry]:
        with self._lock:
            found = {key: self._rows.get((token, shard_of(token, key)), {}).get(key) for key in keys}
            return {key: staged for key, staged in found.items() if staged is not None}

    def set_many(self, token: StagingToken, entries: Iterable[StagedEntry]) -> None:
        with self._lock:
            for staged in entries:
                self._shard(token, staged.key)[staged.key] = staged

    def delete(self, token: StagingToken, key: Key) -> None:
        # The sketch keeps the key, as DynamoDB's single delete leaves its sketch entry (a sample may name it).
        with self._lock:
            self._rows.get((token, shard_of(token, key)), {}).pop(key, None)

    def iterate(self, token: StagingToken, from_key: str = "", first_page: int | None = None) -> Iterator[StagedEntry]:
        shards = [self.iterate_shard(token, shard, from_key) for shard in range(shard_count(token))]
        yield from heapq.merge(*shards, key=lambda staged: staged.key)

    def iterate_shard(
        self, token: StagingToken, shard: int, from_key: str = "", first_page: int | None = None
    ) -> Iterator[StagedEntry]:
        _check(token, shard)
        with self._lock:
            entries = dict(self._rows.get((token, shard), {}))
        keys = sorted(entries)
        for key in keys[bisect.bisect_left(keys, from_key) :]:
            yield entries[key]

    def drop(self, token: StagingToken) -> None:
        for shard in range(shard_count(token)):
            self.drop_shard(token, shard)

    def drop_shard(self, token: StagingToken, shard: int) -> None:
        _check(token, shard)
        with self._lock:
            self._rows.pop((token, shard), None)
            self._sketch.pop((token, shard), None)

    def delete_many(self, token: StagingToken, keys: Iterable[Key]) -> None:
        with self._lock:
            for key in keys:
                where = (token, shard_of(token, key))
                self._rows.get(where, {}).pop(key, None)
                self._sketch.get(where, {}).pop(key, None)

    def sample(self, token: StagingToken, limit: int) -> StagingSample:
        per_shard = per_shard_sample(token, limit)
        with self._lock:
            sketches = [dict(self._sketch.get((token, shard), {})) for shard in range(shard_count(token))]
        firsts = [sorted((rank, Key(key)) for key, rank in sketch.items())[:per_shard] for sketch in sketches]
        return combine(firsts, per_shard)


def _check(token: StagingToken, shard: int) -> None:
    if not 0 <= shard < shard_count(token):
        raise errors.Invalid(f"staging token {token} has no shard {shard}")


def _same_row(current: StagedEntry | None, expected: StagedEntry | None) -> bool:
    """What StagingStore.set_if compares (the entry's identity fields, as the DynamoDB adapter's condition does)."""
    if current is None or expected is None:
        return current is None and expected is None
    a, b = current.value, expected.value
    if a is None or b is None:
        return a is None and b is None
    return (a.physical_address, a.etag, a.size, a.mtime) == (b.physical_address, b.etag, b.size, b.mtime)
