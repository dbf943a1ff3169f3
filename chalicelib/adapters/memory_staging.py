"""The StagingStore twin: the reference behaviour the contract suite (tests/contract) holds DynamoStagingStore to.

Besides the rows it carries staging's own rules: the shards of a token (graveler/writes/staging_shards.py) and the key
sketch the commit plan samples.
"""

from __future__ import annotations

import bisect
import contextlib
import heapq
import threading
from collections.abc import Iterable, Iterator, Sequence

from chalicelib.graveler import errors
from chalicelib.graveler.records import (
    Absent,
    BranchKey,
    Key,
    StagedEntry,
    StagedExpectation,
    StagingSample,
    StagingToken,
)
from chalicelib.graveler.writes.preconditions import check_atomic_changes
from chalicelib.graveler.writes.staging_shards import combine, per_shard_sample, shard_count, shard_of, sketch_rank

from .memory_refs import MemoryRefStore

__all__ = ["MemoryStagingStore"]


class MemoryStagingStore:
    """Rows by (token, shard) and each shard's sketch, as DynamoStagingStore keeps them by partition key.

    ``refs``: the ref store whose branch records a guarded conditional write (``current_of``) checks, holding its
    lock across the check and the write as DynamoDB's transaction makes them one; without it such a write raises
    StorageError (a store built for tests that never guard)."""

    def __init__(self, refs: MemoryRefStore | None = None) -> None:
        self._refs = refs
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

    def set_if(
        self,
        token: StagingToken,
        staged: StagedEntry,
        expected: StagedExpectation,
        current_of: BranchKey | None = None,
    ) -> bool:
        with self._current(token, current_of) as current, self._lock:
            rows = self._shard(token, staged.key)  # sketched even when refused, as DynamoDB writes it first
            if not current or not _same_row(rows.get(staged.key), expected):
                return False
            rows[staged.key] = staged
            return True

    def set_if_all(
        self,
        token: StagingToken,
        changes: Sequence[tuple[StagedEntry, StagedExpectation]],
        current_of: BranchKey | None = None,
    ) -> bool:
        check_atomic_changes(changes)
        with self._current(token, current_of) as current, self._lock:
            # Every key sketched first, even when refused, as the DynamoDB adapter writes sketch items before its
            # transaction; then every expectation checked before any row changes.
            shards = [self._shard(token, staged.key) for staged, _ in changes]
            if not current or not all(
                _same_row(rows.get(staged.key), expected)
                for rows, (staged, expected) in zip(shards, changes, strict=True)
            ):
                return False
            for rows, (staged, _) in zip(shards, changes, strict=True):
                rows[staged.key] = staged
            return True

    @contextlib.contextmanager
    def _current(self, token: StagingToken, current_of: BranchKey | None) -> Iterator[bool]:
        """Whether the branch (if any) names the token as its staging token, the ref store's lock held meanwhile so
        that no seal swaps the branch before the write is done (its lock is taken before ours, never the other
        way round)."""
        if current_of is None:
            yield True
            return
        if self._refs is None:
            raise errors.StorageError("this staging store has no ref store to check the branch's token against")
        with self._refs.branch_held(current_of.repo_id, current_of.branch_id) as branch:
            yield branch is not None and branch.staging_token == token

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

    def count(self, token: StagingToken, up_to: int) -> int:
        with self._lock:
            rows = sum(len(self._rows.get((token, shard), {})) for shard in range(shard_count(token)))
        return min(rows, up_to)

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


def _same_row(current: StagedEntry | None, expected: StagedExpectation) -> bool:
    """What StagingStore.set_if compares (the entry's identity fields, as the DynamoDB adapter's condition does)."""
    if isinstance(expected, Absent):
        return current is None or current.value is None
    if current is None or expected is None:
        return current is None and expected is None
    a, b = current.value, expected.value
    if a is None or b is None:
        return a is None and b is None
    return (a.physical_address, a.etag, a.size, a.mtime) == (b.physical_address, b.etag, b.size, b.mtime)
