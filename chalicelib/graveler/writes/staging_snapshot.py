"""One read of a just-sealed staging token, shared by the pre-commit hooks and the commit that follows them.

A one-change commit read its sealed token twice: the pre-commit hooks looked for action files staged under
``_lakefs_actions/``, then the commit read every change to build its ranges. With :func:`shared_read` the commit
reads the token once, right after its seal, and both see those rows, so the hooks judge exactly the changes the
commit takes (one staging query fewer, on AWS as locally).

Reading it once is safe because a token no longer takes writes that need it once sealed: a conditional write names
the current token in the write itself (StagingStore.set_if's ``current_of``), and a plain one reads the branch
again after writing and, finding the token sealed, writes the change again to the new token (staging.stage). So a
change that lands in the sealed token after this read is also staged on the branch, for the next commit.

:class:`SnapshotStaging` wraps the engine's StagingStore: ``iterate`` of a token this thread's request holds a
snapshot of answers from it; every other call, and every other token, goes to the store.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from itertools import islice

from ..ports import StagingStore
from ..records import BranchKey, Key, StagedEntry, StagedExpectation, StagingSample, StagingToken

__all__ = ["SHARED_ROWS", "SnapshotStaging", "shared_read"]

# The most rows one shared read keeps in memory: beyond that the commit reads the token as before.
SHARED_ROWS = 1000

_Snapshots = Mapping[StagingToken, tuple[StagedEntry, ...]]
_snapshots: ContextVar[_Snapshots | None] = ContextVar("staging_snapshots", default=None)


@contextmanager
def shared_read(staging: StagingStore, token: StagingToken, limit: int = SHARED_ROWS) -> Iterator[bool]:
    """Reads ``token`` once (call it right after the seal) and, inside the block, answers this request's reads of
    it from that read. Yields False, sharing nothing, when the token holds more than ``limit`` rows."""
    rows = tuple(islice(staging.iterate(token), limit + 1))
    if len(rows) > limit:
        yield False
        return
    mark = _snapshots.set({**(_snapshots.get() or {}), token: rows})
    try:
        yield True
    finally:
        _snapshots.reset(mark)


class SnapshotStaging:
    """A StagingStore that serves ``iterate`` of a token from this request's shared read (see the module)."""

    def __init__(self, inner: StagingStore) -> None:
        self.inner = inner

    def iterate(self, token: StagingToken, from_key: str = "", first_page: int | None = None) -> Iterator[StagedEntry]:
        rows = (_snapshots.get() or {}).get(token)
        if rows is None:
            return self.inner.iterate(token, from_key, first_page)
        return (row for row in rows if row.key >= from_key)

    def get(self, token: StagingToken, key: Key) -> StagedEntry | None:
        return self.inner.get(token, key)

    def set(self, token: StagingToken, staged: StagedEntry) -> StagedEntry | None:
        return self.inner.set(token, staged)

    def set_if(
        self,
        token: StagingToken,
        staged: StagedEntry,
        expected: StagedExpectation,
        current_of: BranchKey | None = None,
    ) -> bool:
        return self.inner.set_if(token, staged, expected, current_of)

    def set_if_all(
        self,
        token: StagingToken,
        changes: Sequence[tuple[StagedEntry, StagedExpectation]],
        current_of: BranchKey | None = None,
    ) -> bool:
        return self.inner.set_if_all(token, changes, current_of)

    def get_many(self, token: StagingToken, keys: Iterable[Key]) -> dict[Key, StagedEntry]:
        return self.inner.get_many(token, keys)

    def set_many(self, token: StagingToken, entries: Iterable[StagedEntry]) -> None:
        self.inner.set_many(token, entries)

    def delete(self, token: StagingToken, key: Key) -> None:
        self.inner.delete(token, key)

    def count(self, token: StagingToken, up_to: int) -> int:
        return self.inner.count(token, up_to)

    def drop(self, token: StagingToken) -> None:
        self.inner.drop(token)

    def iterate_shard(
        self, token: StagingToken, shard: int, from_key: str = "", first_page: int | None = None
    ) -> Iterator[StagedEntry]:
        return self.inner.iterate_shard(token, shard, from_key, first_page)

    def drop_shard(self, token: StagingToken, shard: int) -> None:
        self.inner.drop_shard(token, shard)

    def sample(self, token: StagingToken, limit: int) -> StagingSample:
        return self.inner.sample(token, limit)

    def delete_many(self, token: StagingToken, keys: Iterable[Key]) -> None:
        self.inner.delete_many(token, keys)
