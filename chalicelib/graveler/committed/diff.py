"""Diff of two metaranges, range by range then key by key.

Where both walks stand at the head of ranges with the same ID, both ranges are skipped without being read: the
cost follows the size of the difference, not of the listings. Keys whose entries have the same identity are
not a difference (the same content re-uploaded elsewhere is unchanged).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from ..records import DiffType, Entry, Key
from .columns import RangeColumns
from .cursor import RangeCursor


@dataclass(frozen=True, slots=True)
class DiffRow:
    """One key that differs: its row on the left and on the right (None where the key is absent)."""

    key: Key
    left: RangeColumns | None
    left_index: int
    right: RangeColumns | None
    right_index: int

    @property
    def type(self) -> DiffType:
        if self.left is None:
            return DiffType.ADDED
        if self.right is None:
            return DiffType.REMOVED
        return DiffType.CHANGED

    @property
    def left_identity(self) -> bytes | None:
        return None if self.left is None else self.left.identities[self.left_index]

    @property
    def right_identity(self) -> bytes | None:
        return None if self.right is None else self.right.identities[self.right_index]

    def left_entry(self) -> Entry | None:
        return None if self.left is None else self.left.entry_at(self.left_index)

    def right_entry(self) -> Entry | None:
        return None if self.right is None else self.right.entry_at(self.right_index)


def diff_cursors(left: RangeCursor, right: RangeCursor) -> Iterator[DiffRow]:
    """The keys that differ between the two walks, in key order."""
    while True:
        if left.done:
            yield from _rest(right, added=True)
            return
        if right.done:
            yield from _rest(left, added=False)
            return
        if not left.in_rows and not right.in_rows and left.range.id == right.range.id:
            left.next_range()
            right.next_range()
            continue
        left_key, right_key = left.key, right.key
        if left_key < right_key:
            if not left.in_rows:
                left.enter()
                continue
            assert left.rows is not None
            yield DiffRow(Key(left_key), left.rows, left.position, None, 0)
            left.advance()
        elif right_key < left_key:
            if not right.in_rows:
                right.enter()
                continue
            assert right.rows is not None
            yield DiffRow(Key(right_key), None, 0, right.rows, right.position)
            right.advance()
        else:
            if not left.in_rows or not right.in_rows:
                if not left.in_rows:
                    left.enter()
                if not right.in_rows:
                    right.enter()
                continue
            assert left.rows is not None and right.rows is not None
            if left.identity != right.identity:
                yield DiffRow(Key(left_key), left.rows, left.position, right.rows, right.position)
            left.advance()
            right.advance()


def _rest(cursor: RangeCursor, added: bool) -> Iterator[DiffRow]:
    while not cursor.done:
        if not cursor.in_rows:
            cursor.enter()
            continue
        rows = cursor.rows
        assert rows is not None
        key = Key(rows.keys[cursor.position])
        yield DiffRow(key, None, 0, rows, cursor.position) if added else DiffRow(key, rows, cursor.position, None, 0)
        cursor.advance()
