"""Apply: a base metarange plus sorted staged changes -> a new metarange, reusing untouched ranges by reference.

The walk goes over the base ranges and the changes together. A range with no change key inside
[min_key, max_key] is taken by reference (no read, no write) whenever the writer is between ranges. If the
writer still holds an unfinished range (its last boundary key was deleted, or new keys were added just before),
the untouched range streams through the writer until a boundary closes, and reuse by reference resumes.

Because the writer cuts on content-defined boundaries and reused ranges start and end where a fresh write would
cut too, the result is the same metarange, with the same id, as writing the final listing from scratch with the
same RangeParams (given a base that was itself written with them).
"""

from __future__ import annotations

import sys
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from ..identity import entry_identity
from ..records import MetaRangeID, RangeID, RangeInfo, StagedEntry
from .arrow import pa
from .columns import RangeColumns
from .fnv import value_offsets
from .params import RangeParams
from .writer import RangeWriter, closes_range

__all__ = ["apply_changes"]

# Lookups in one range after which its keys and identities are converted to lists: one per this many rows.
_LIST_AFTER = 64


@dataclass(frozen=True, slots=True)
class ApplyResult:
    """The new metarange and what changed relative to the base. The caller decides what "no changes" means."""

    metarange_id: MetaRangeID
    added: int
    changed: int
    removed: int

    @property
    def changes(self) -> int:
        return self.added + self.changed + self.removed


@dataclass(slots=True)
class _Counts:
    added: int = 0
    changed: int = 0
    removed: int = 0


class _Changes:
    """A one-ahead cursor over the staged changes that insists on strictly increasing keys."""

    def __init__(self, changes: Iterable[StagedEntry]) -> None:
        self._it: Iterator[StagedEntry] = iter(changes)
        self.head: StagedEntry | None = None
        self.advance()

    def advance(self) -> None:
        previous = self.head
        self.head = next(self._it, None)
        if previous is not None and self.head is not None and self.head.key <= previous.key:
            raise ValueError(f"changes out of order: {self.head.key!r} after {previous.key!r}")


def apply_changes(
    base: list[RangeInfo],
    changes: Iterable[StagedEntry],
    writer: RangeWriter,
    load_range: Callable[[RangeID], RangeColumns],
    params: RangeParams,
) -> tuple[list[RangeInfo], int, int, int]:
    """Feeds the merged listing into ``writer``; returns its ranges and the added, changed, removed counts."""
    cursor = _Changes(changes)
    counts = _Counts()
    for index, info in enumerate(base):
        _add_new_keys_below(cursor, info.min_key, writer, counts)
        head = cursor.head
        if head is None or head.key > info.max_key:
            next_min = base[index + 1].min_key if index + 1 < len(base) else None
            # New keys right after a range that was not closed by a boundary (the last range of a listing)
            # belong in it, as a fresh write would put them there: stream it rather than reuse it.
            grows = head is not None and (next_min is None or head.key < next_min)
            if writer.pending or (grows and not closes_range(info.max_key, info.estimated_size, params)):
                writer.add_rows(load_range(info.id))
            else:
                writer.add_range(info)
            continue
        _merge_range(load_range(info.id), info, cursor, writer, counts)
    _add_new_keys_below(cursor, None, writer, counts)
    return writer.finish(), counts.added, counts.changed, counts.removed


def _add_new_keys_below(cursor: _Changes, bound: str | None, writer: RangeWriter, counts: _Counts) -> None:
    """Changes with key < bound (all when bound is None) fall between base ranges: none of them exists."""
    while (head := cursor.head) is not None and (bound is None or head.key < bound):
        if head.value is not None:  # a tombstone of a key that exists nowhere changes nothing
            writer.add_entry(head.key, head.value)
            counts.added += 1
        cursor.advance()


class _Rows:
    """The keys and identities of a range that changes fall into, looked up one change at a time.

    A spread commit enters every range for a handful of changes. Converting a whole range's keys and identities
    to Python objects would then cost more than all its lookups together (and leave thousands of objects for
    the garbage collector), so the first lookups binary-search the Arrow buffers directly: UTF-8 bytes sort as
    their code points do, so comparing encoded keys gives Python's string order. Once a range has taken enough
    changes that the lists are cheaper, they are built (and kept with the range).
    """

    __slots__ = ("_id_data", "_id_offsets", "_key_data", "_key_offsets", "_lookups", "count", "rows")

    def __init__(self, rows: RangeColumns) -> None:
        self.rows = rows
        self.count = len(rows)
        self._lookups = 0
        self._key_offsets, self._key_data = _var_view(rows.table.column("key"))
        self._id_offsets, self._id_data = _var_view(rows.table.column("identity"))

    def _as_lists(self) -> bool:
        # A binary search costs about log2(rows) probes, a list conversion about one probe per row.
        self._lookups += 1
        return self._lookups * _LIST_AFTER > self.count

    def search(self, key: str, low: int) -> tuple[int, bool]:
        """The first row at or after ``low`` whose key is >= ``key``, and whether that row is ``key``."""
        if self._as_lists():
            keys = self.rows.keys
            found = bisect_left(keys, key, low)
            return found, found < self.count and keys[found] == key
        raw, offsets, data = key.encode(), self._key_offsets, self._key_data
        high = self.count
        while low < high:
            middle = (low + high) // 2
            if data[offsets[middle] : offsets[middle + 1]].tobytes() < raw:
                low = middle + 1
            else:
                high = middle
        return low, low < self.count and data[offsets[low] : offsets[low + 1]].tobytes() == raw

    def identity(self, index: int) -> bytes:
        if self._lookups * _LIST_AFTER > self.count:
            return self.rows.identities[index]
        return self._id_data[self._id_offsets[index] : self._id_offsets[index + 1]].tobytes()


def _var_view(values: pa.ChunkedArray) -> tuple[Sequence[int], memoryview]:
    """The offsets and the data of a string or binary column, indexable without building Python values."""
    array = values.chunk(0) if values.num_chunks == 1 else values.combine_chunks()
    data = array.buffers()[2]
    view = memoryview(b"" if data is None else data)
    if sys.byteorder != "little":
        return value_offsets(array).to_pylist(), view  # pragma: no cover
    offsets = memoryview(array.buffers()[1]).cast("i")[array.offset : array.offset + len(array) + 1]
    return offsets, view


def _merge_range(rows: RangeColumns, info: RangeInfo, cursor: _Changes, writer: RangeWriter, counts: _Counts) -> None:
    lookup = _Rows(rows)
    position = 0
    while (head := cursor.head) is not None and head.key <= info.max_key:
        found, exists = lookup.search(head.key, position)
        writer.add_rows(rows, position, found)
        position = found
        if head.value is None:
            if exists:
                counts.removed += 1
                position += 1
        elif not exists:
            writer.add_entry(head.key, head.value)
            counts.added += 1
        else:
            identity = entry_identity(head.value)
            if identity == lookup.identity(position):
                # Same content (maybe re-uploaded elsewhere): keep the committed entry untouched.
                writer.add_rows(rows, position, position + 1)
            else:
                writer.add_entry(head.key, head.value, identity)
                counts.changed += 1
            position += 1
        cursor.advance()
    writer.add_rows(rows, position, lookup.count)
