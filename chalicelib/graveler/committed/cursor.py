"""Cursors over a metarange for the walks of diff and merge: range by range, entering a range only when needed.

A ``RangeCursor`` stands either at the header of a range (nothing read yet: the walk may skip or reuse the whole
range by its ID) or on a row inside it (the range was read). A ``BaseLookup`` answers point lookups in keys that
only increase, reading at most the base ranges those keys fall in.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable

from ..records import RangeID, RangeInfo
from .columns import RangeColumns

LoadRange = Callable[[RangeID], RangeColumns]


class RangeCursor:
    """Walks the ranges of one metarange from ``from_key`` on."""

    def __init__(self, ranges: list[RangeInfo], load: LoadRange, from_key: str = "") -> None:
        self._ranges = ranges
        self._load = load
        self._from = from_key
        self.index = bisect_left([r.max_key for r in ranges], from_key) if from_key else 0
        self.rows: RangeColumns | None = None
        self.position = 0

    @property
    def done(self) -> bool:
        return self.index >= len(self._ranges)

    @property
    def range(self) -> RangeInfo:
        return self._ranges[self.index]

    @property
    def in_rows(self) -> bool:
        return self.rows is not None

    @property
    def key(self) -> str:
        """The smallest key still ahead: the current row's, or the range's first (from ``from_key`` on)."""
        if self.rows is not None:
            return self.rows.keys[self.position]
        first = self._ranges[self.index].min_key
        return max(first, self._from)

    @property
    def identity(self) -> bytes:
        assert self.rows is not None
        return self.rows.identities[self.position]

    def enter(self) -> None:
        """Reads the current range and stands on its first row at or after ``from_key``."""
        rows = self._load(self.range.id)
        self.rows = rows
        self.position = bisect_left(rows.keys, self._from) if self._from else 0
        self._from = ""
        if self.position >= len(rows.keys):
            self.next_range()

    def advance(self, rows: int = 1) -> None:
        assert self.rows is not None
        self.position += rows
        if self.position >= len(self.rows.keys):
            self.next_range()

    def next_range(self) -> None:
        """Leaves the current range, read or not."""
        self.index += 1
        self.rows = None
        self.position = 0


class BaseLookup:
    """Point lookups in one metarange for keys (and ranges) given in increasing order."""

    def __init__(self, ranges: list[RangeInfo], load: LoadRange) -> None:
        self._ranges = ranges
        self._load = load
        self._index = 0
        self._rows: RangeColumns | None = None
        self._rows_index = -1

    def _skip_below(self, key: str) -> None:
        while self._index < len(self._ranges) and self._ranges[self._index].max_key < key:
            self._index += 1

    def overlapping(self, info: RangeInfo) -> RangeInfo | None:
        """The first range overlapping [info.min_key, info.max_key], or None. Reads nothing."""
        self._skip_below(info.min_key)
        if self._index < len(self._ranges) and self._ranges[self._index].min_key <= info.max_key:
            return self._ranges[self._index]
        return None

    def find(self, key: str) -> tuple[RangeColumns, int] | None:
        """The rows holding ``key`` and its index in them, or None when the key does not exist."""
        self._skip_below(key)
        if self._index >= len(self._ranges) or self._ranges[self._index].min_key > key:
            return None
        if self._rows_index != self._index:
            self._rows = self._load(self._ranges[self._index].id)
            self._rows_index = self._index
        assert self._rows is not None
        found = self._rows.find(key)
        return None if found is None else (self._rows, found)

    def identity(self, key: str) -> bytes | None:
        found = self.find(key)
        return None if found is None else found[0].identities[found[1]]
