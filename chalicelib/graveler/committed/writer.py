"""The range writer: cuts a sorted stream of rows into ranges at content-defined boundaries and stores them.

A range closes after a row when its estimated size reaches ``max_range_bytes``, or when fnv1a-64 of the row's
key is a multiple of ``raggedness`` and its estimated size reaches ``min_range_bytes``. A boundary depends only
on the key just written and the size of the range so far, never on the position in the whole listing. So after
an insertion or a deletion the cuts fall back onto the same keys a little later, and every range after that is
exactly the one already stored: same id, reused by reference.

Rows are appended without looking at them and checked for boundaries in batches (``_cut``): hashing many keys
at once is several times faster (see fnv.py). The ranges produced are the same as checking row by row.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Collection
from itertools import accumulate

from ..identity import entry_identity
from ..records import Entry, Key, RangeID, RangeInfo
from .columns import RangeColumns, metadata_json, row_estimate
from .fnv import fnv1a_64, fnv1a_64_many
from .params import RangeParams
from .storage import CommittedStorage

# Rows appended before boundaries are checked: enough to hash keys in bulk, few enough that rows past a
# boundary (checked again from the new range's start) cost little.
_BATCH = 1024
# Keys hashed at a time while looking for the next boundary; hashes past the first hit are wasted.
_HASH_CHUNK = 256


def closes_range(key: str, size: int, params: RangeParams) -> bool:
    """Whether a range whose last key is ``key`` and whose estimated size is ``size`` ends there."""
    if size >= params.max_range_bytes:
        return True
    # Checking the size first skips hashing for every row of a range still below the minimum.
    return size >= params.min_range_bytes and fnv1a_64(key.encode()) % params.raggedness == 0


class RangeWriter:
    """Accumulates rows in key order and stores a range at each boundary; ``finish`` returns the RangeInfos.

    Rows come from new entries (``add_entry``), from stored ranges (``add_rows``, copied column-wise) or as a
    whole stored range by reference (``add_range``, allowed only between ranges). Keys must strictly increase
    across all three; a violation raises ValueError since it would corrupt the metarange.
    """

    def __init__(
        self,
        storage: CommittedStorage,
        namespace: str,
        params: RangeParams,
        known_ranges: Collection[RangeID] = (),
    ) -> None:
        self._storage = storage
        self._namespace = namespace
        self._params = params
        self._known = known_ranges
        self._ranges: list[RangeInfo] = []
        self._current = RangeColumns()
        # Rows [0, _checked) of the current range hold no boundary; _size is their estimated size.
        self._checked = 0
        self._size = 0
        self._last_key: str | None = None

    @property
    def pending(self) -> bool:
        """True while an unfinished range holds rows: a stored range cannot be added by reference now."""
        self._cut()
        return bool(self._current.keys)

    def _check_order(self, key: str) -> None:
        if self._last_key is not None and key <= self._last_key:
            raise ValueError(f"keys out of order: {key!r} after {self._last_key!r}")

    def add_entry(self, key: str, entry: Entry, identity: bytes | None = None) -> None:
        """Appends one row; ``identity`` may pass an already computed entry_identity(entry)."""
        self._check_order(key)
        self._last_key = key
        cur = self._current
        cur.keys.append(key)
        cur.addresses.append(entry.physical_address)
        cur.sizes.append(entry.size)
        cur.etags.append(entry.etag)
        cur.mtimes.append(entry.mtime)
        cur.content_types.append(entry.content_type)
        cur.metadata.append(metadata_json(entry.user_metadata))
        cur.identities.append(entry_identity(entry) if identity is None else identity)
        if len(cur.keys) - self._checked >= _BATCH:
            self._cut()

    def add_rows(self, source: RangeColumns, start: int = 0, end: int | None = None) -> None:
        """Appends rows [start, end) of a stored range, as is."""
        stop = len(source.keys) if end is None else end
        if start >= stop:
            return
        self._check_order(source.keys[start])
        self._last_key = source.keys[stop - 1]
        while start < stop:
            take = min(stop, start + max(1, _BATCH - (len(self._current.keys) - self._checked)))
            self._current.extend_from(source, start, take)
            start = take
            if len(self._current.keys) - self._checked >= _BATCH:
                self._cut()

    def add_range(self, info: RangeInfo) -> None:
        """Reuses a stored range by reference: nothing is read or written."""
        if self.pending:
            raise ValueError("cannot add a range by reference while a range is unfinished")
        self._check_order(info.min_key)
        self._last_key = info.max_key
        self._ranges.append(info)

    def finish(self) -> list[RangeInfo]:
        """Stores the last unfinished range, if any, and returns every range in key order."""
        if self.pending:
            self._close(len(self._current.keys), self._size)
        return self._ranges

    def _cut(self) -> None:
        """Closes a range at every boundary among the rows not yet checked."""
        params = self._params
        while self._checked < len(self._current.keys):
            cur = self._current
            first = self._checked
            sizes = list(
                accumulate(
                    map(
                        row_estimate,
                        cur.keys[first:],
                        cur.addresses[first:],
                        cur.etags[first:],
                        cur.content_types[first:],
                        cur.metadata[first:],
                    ),
                    initial=self._size,
                )
            )[1:]
            # Every estimate is positive, so ``sizes`` increases and the size thresholds are found by bisection.
            reaches_max = bisect_left(sizes, params.max_range_bytes)
            boundary = self._first_hash_hit(first, bisect_left(sizes, params.min_range_bytes), reaches_max)
            if boundary is None and reaches_max < len(sizes):
                boundary = reaches_max
            if boundary is None:
                self._checked = len(cur.keys)
                self._size = sizes[-1]
                return
            self._close(first + boundary + 1, sizes[boundary])

    def _first_hash_hit(self, first: int, low: int, high: int) -> int | None:
        """The first offset in [low, high) from row ``first`` whose key hashes onto a boundary."""
        keys = self._current.keys
        raggedness = self._params.raggedness
        for chunk in range(low, high, _HASH_CHUNK):
            chunk_end = min(high, chunk + _HASH_CHUNK)
            hashes = fnv1a_64_many([key.encode() for key in keys[first + chunk : first + chunk_end]])
            for offset, value in enumerate(hashes):
                if value % raggedness == 0:
                    return chunk + offset
        return None

    def _close(self, rows: int, size: int) -> None:
        """Stores rows [0, rows) of the current range (estimated ``size``) and keeps the rest as the next one."""
        closed, rest = self._current.split(rows)
        rid = self._storage.write_range(self._namespace, closed, self._known)
        self._ranges.append(
            RangeInfo(
                id=rid,
                min_key=Key(closed.keys[0]),
                max_key=Key(closed.keys[-1]),
                count=len(closed.keys),
                estimated_size=size,
            )
        )
        self._current = rest
        self._checked = 0
        self._size = 0
