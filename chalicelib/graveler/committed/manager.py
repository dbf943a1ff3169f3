"""CommittedManager: the committed side of graveler, behind one small API the service calls."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from ..ports import BlockStore
from ..records import EMPTY_METARANGE, Entry, EntryRecord, Key, MetaRangeID, RangeID, RangeInfo, StagedEntry
from .apply import ApplyResult, apply_changes
from .columns import RangeColumns
from .params import CURRENT_RANGE_FORMAT, RANGE_FORMAT_2, RangeParams, params_for_format
from .storage import CommittedStorage
from .writer import RangeWriter

# What a container keeps of decoded ranges (as RangeColumns.memory_estimate counts them).
# The cache helps while one operation reads a range twice and while readers hit a branch's newest ranges; older
# ranges are cold (every commit makes new ones), so more memory buys little.
DEFAULT_RANGE_CACHE_BYTES = 128 * 2**20


class CommittedManager:
    """Reads, writes and applies changes to metaranges stored as Parquet under ``<namespace>/_lakefs/``.

    Decoded ranges and metaranges are cached (LRU by address, ``cache_size`` of each, and ranges taking at most
    ``cache_bytes`` of memory in all, as RangeColumns.memory_estimate counts it): they never change once written.
    Safe to share between threads. A metarange or range that a caller names but storage lacks raises
    StorageError; keys out of order in the input raise ValueError.

    ``params`` are the current range format's (what new repositories are cut with); ``for_format`` gives a view
    that writes with another format's, sharing the storage and its caches.
    """

    def __init__(
        self,
        blocks: BlockStore,
        params: RangeParams = RANGE_FORMAT_2,
        cache_size: int = 256,
        *,
        cache_bytes: int = DEFAULT_RANGE_CACHE_BYTES,
    ) -> None:
        self._current = params
        self._params = params
        self._storage = CommittedStorage(blocks, cache_size, cache_bytes)

    @property
    def params(self) -> RangeParams:
        """What this view's writes cut with."""
        return self._params

    def for_format(self, range_format: int) -> CommittedManager:
        """A view writing with ``range_format``'s params (this manager itself for the current format). Raises
        StorageError for an unknown format."""
        params = params_for_format(range_format, self._current)
        if params == self._params:
            return self
        view = object.__new__(CommittedManager)
        view._current = self._current
        view._params = params
        view._storage = self._storage
        return view

    @property
    def current_format(self) -> int:
        """The range format new repositories record."""
        return CURRENT_RANGE_FORMAT

    @property
    def storage(self) -> CommittedStorage:
        """The storage and caches it reads through: compare.py and the commit and merge steps share them."""
        return self._storage

    def get(self, namespace: str, metarange_id: MetaRangeID, key: Key) -> Entry | None:
        """The committed entry of ``key``, or None. Reads at most one range."""
        if metarange_id == EMPTY_METARANGE:
            return None
        meta = self._storage.metarange(namespace, metarange_id)
        index = meta.first_at_or_after(key)
        if index == len(meta.ranges) or meta.ranges[index].min_key > key:
            return None
        rows = self._storage.range(namespace, meta.ranges[index].id)
        found = rows.find(key)
        return None if found is None else rows.entry_at(found)

    def iterate(self, namespace: str, metarange_id: MetaRangeID, from_key: str = "") -> Iterator[EntryRecord]:
        """Records with key >= ``from_key`` in key order. Ranges are read lazily, one at a time, and ranges
        entirely below ``from_key`` are never read."""
        for rows, first in self.blocks(namespace, metarange_id, from_key):
            yield from rows.records(first)

    def blocks(
        self, namespace: str, metarange_id: MetaRangeID, from_key: str = ""
    ) -> Iterator[tuple[RangeColumns, int]]:
        """Each range holding keys >= ``from_key``, with the index of its first such row: what a listing copies
        rows from column by column. Ranges are read lazily, one at a time."""
        if metarange_id == EMPTY_METARANGE:
            return
        meta = self._storage.metarange(namespace, metarange_id)
        start = from_key
        for info in meta.ranges[meta.first_at_or_after(from_key) :]:
            rows = self._storage.range(namespace, info.id)
            yield rows, rows.lower_bound(start) if start else 0
            start = ""

    def write_metarange(self, namespace: str, records: Iterable[EntryRecord]) -> MetaRangeID:
        """Stores the records (sorted by key, unique) as ranges and a metarange; EMPTY_METARANGE for none."""
        writer = RangeWriter(self._storage, namespace, self._params)
        for record in records:
            writer.add_entry(record.key, record.entry)
        return self._storage.write_metarange(namespace, writer.finish())

    def apply(self, namespace: str, base: MetaRangeID, changes: Iterable[StagedEntry]) -> ApplyResult:
        """The base metarange with the changes (sorted by key, unique; value None deletes) applied.

        Untouched ranges are reused by reference; only ranges holding a change (and, when a boundary moved,
        their successors until the cuts line up again) are read and rewritten.
        """
        base_ranges = self._storage.metarange(namespace, base).ranges
        known = {info.id for info in base_ranges}
        writer = RangeWriter(self._storage, namespace, self._params, known_ranges=known)
        ranges, added, changed, removed = apply_changes(
            base_ranges,
            changes,
            writer,
            lambda rid: self._storage.range(namespace, rid),
            self._params,
        )
        if [r.id for r in ranges] == [r.id for r in base_ranges]:
            metarange_id = base  # nothing was rewritten: the base metarange is already stored
        else:
            metarange_id = self._storage.write_metarange(namespace, ranges)
        return ApplyResult(metarange_id=metarange_id, added=added, changed=changed, removed=removed)

    def ranges(self, namespace: str, metarange_id: MetaRangeID) -> list[RangeInfo]:
        """The metarange's ranges in key order (empty for EMPTY_METARANGE)."""
        return list(self._storage.metarange(namespace, metarange_id).ranges)

    def range_records(self, namespace: str, range_id: RangeID) -> list[EntryRecord]:
        """Every record of one stored range, in key order."""
        rows = self._storage.range(namespace, range_id)
        return list(rows.records())
