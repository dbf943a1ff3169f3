"""Three-way merge of metaranges, range by range where it can and key by key where it must.

Range rules (none of them reads a range):
- the source and the destination stand on ranges with the same ID: that range is the result;
- they stand on ranges with the same bounds and one of them is the base's range there: the other one wins;
- one side's range lies before anything the other side has left: if the base has nothing there, that side added
  the whole range (reused by reference); if the base's range there is that very range, the other side deleted
  all of it (dropped); otherwise the range is read and merged key by key.
Keys follow the table in ``mergetable``; a conflicting key goes to ``resolve``, which picks a side or leaves the
conflict. Once a conflict is left unresolved nothing more is written, but the walk goes on to list every conflict.

None of the range rules can hide a conflict: each applies only where one side equals the base or the other side
has no key at all. The result goes through the same ``RangeWriter`` as commits, so it is cut on the same
content-defined boundaries and ranges reused by reference stay reused.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..records import Key, RangeInfo
from .columns import RangeColumns
from .cursor import BaseLookup, LoadRange, RangeCursor
from .mergetable import Action, Decision, KeyConflict, action, decide
from .params import RangeParams
from .writer import RangeWriter, closes_range

__all__ = ["KeyConflict", "Resolver", "merge_ranges"]

# (key, what the source did, what the destination did) -> the side that wins, or None to leave the conflict.
Resolver = Callable[[str, Action, Action], Decision | None]


@dataclass(slots=True)
class MergeWalk:
    """What the walk produced: the result's ranges (None after an unresolved conflict) and the conflicts."""

    ranges: list[RangeInfo] | None
    conflicts: list[KeyConflict] = field(default_factory=list)
    resolved: int = 0


class _Sink:
    """The writer side of the merge: ranges by reference where the writer allows it, rows otherwise.

    A range that did not end on a boundary (the last range of its listing) is held back: if anything follows
    it, it is streamed so that the cuts stay the ones a fresh write would make; if nothing follows, it is reused.
    """

    def __init__(self, writer: RangeWriter, load: LoadRange, params: RangeParams) -> None:
        self._writer = writer
        self._load = load
        self._params = params
        self._held: RangeInfo | None = None
        self.enabled = True

    def _release(self) -> None:
        if self._held is not None:
            self._writer.add_rows(self._load(self._held.id))
            self._held = None

    def add_range(self, info: RangeInfo) -> None:
        if not self.enabled:
            return
        self._release()
        if self._writer.pending:
            self._writer.add_rows(self._load(info.id))
        elif closes_range(info.max_key, info.estimated_size, self._params):
            self._writer.add_range(info)
        else:
            self._held = info

    def add_rows(self, rows: RangeColumns, start: int, end: int) -> None:
        if not self.enabled:
            return
        self._release()
        self._writer.add_rows(rows, start, end)

    def finish(self) -> list[RangeInfo]:
        if self._held is not None:
            self._writer.add_range(self._held)
            self._held = None
        return self._writer.finish()


class _Merger:
    def __init__(
        self, base: BaseLookup, source: RangeCursor, dest: RangeCursor, sink: _Sink, resolve: Resolver
    ) -> None:
        self.base = base
        self.source = source
        self.dest = dest
        self.sink = sink
        self.resolve = resolve
        self.conflicts: list[KeyConflict] = []
        self.resolved = 0

    def run(self) -> None:
        source, dest = self.source, self.dest
        while not source.done and not dest.done:
            if not source.in_rows and not dest.in_rows:
                self._both_headers()
            elif not source.in_rows:
                self._header_against_key(source, dest, source_side=True)
            elif not dest.in_rows:
                self._header_against_key(dest, source, source_side=False)
            else:
                self._both_rows()
        for cursor, is_source in ((source, True), (dest, False)):
            while not cursor.done:
                if cursor.in_rows:
                    self._row_alone(cursor, is_source)
                else:
                    self._range_alone(cursor)

    def _both_headers(self) -> None:
        source, dest = self.source, self.dest
        s, d = source.range, dest.range
        if s.id == d.id:
            self.sink.add_range(s)
            source.next_range()
            dest.next_range()
        elif s.min_key == d.min_key and s.max_key == d.max_key:
            base = self.base.overlapping(s)
            if base is not None and base.id in (s.id, d.id):
                self.sink.add_range(d if base.id == s.id else s)
                source.next_range()
                dest.next_range()
            else:
                source.enter()
                dest.enter()
        elif s.max_key < d.min_key:
            self._range_alone(source)
        elif d.max_key < s.min_key:
            self._range_alone(dest)
        else:
            # Overlapping ranges: read the one that starts first (both when they start together).
            if s.min_key <= d.min_key:
                source.enter()
            if d.min_key <= s.min_key:
                dest.enter()

    def _header_against_key(self, header: RangeCursor, rows: RangeCursor, source_side: bool) -> None:
        info, key = header.range, rows.key
        if info.min_key > key:
            self._row_alone(rows, not source_side)
        elif info.max_key < key:
            self._range_alone(header)
        else:
            header.enter()

    def _range_alone(self, cursor: RangeCursor) -> None:
        """The cursor's range has no key of the other side: decided by the base alone when possible."""
        info = cursor.range
        base = self.base.overlapping(info)
        if base is None:
            self.sink.add_range(info)  # added by this side only
            cursor.next_range()
        elif base.id == info.id:
            cursor.next_range()  # unchanged here, and the other side deleted all of it
        else:
            cursor.enter()

    def _both_rows(self) -> None:
        source, dest = self.source, self.dest
        s_rows, d_rows = source.rows, dest.rows
        assert s_rows is not None and d_rows is not None
        s_key, d_key = s_rows.keys[source.position], d_rows.keys[dest.position]
        if s_key < d_key:
            self._row_alone(source, True)
            return
        if d_key < s_key:
            self._row_alone(dest, False)
            return
        # A run of keys the same on both sides needs no base lookup: copy it from the source in one go.
        start, d_pos = source.position, dest.position
        end = start
        s_keys, d_keys, s_ids, d_ids = s_rows.keys, d_rows.keys, s_rows.identities, d_rows.identities
        s_len, d_len = len(s_keys), len(d_keys)
        while end < s_len and d_pos < d_len and s_keys[end] == d_keys[d_pos] and s_ids[end] == d_ids[d_pos]:
            end += 1
            d_pos += 1
        if end > start:
            self.sink.add_rows(s_rows, start, end)
            source.advance(end - start)
            dest.advance(end - start)
            return
        base = self.base.identity(s_key)
        self._decide(s_key, base, s_rows, source.position, d_rows, dest.position)
        source.advance()
        dest.advance()

    def _row_alone(self, cursor: RangeCursor, is_source: bool) -> None:
        rows = cursor.rows
        assert rows is not None
        key = rows.keys[cursor.position]
        base = self.base.identity(key)
        if is_source:
            self._decide(key, base, rows, cursor.position, None, 0)
        else:
            self._decide(key, base, None, 0, rows, cursor.position)
        cursor.advance()

    def _decide(
        self,
        key: str,
        base: bytes | None,
        s_rows: RangeColumns | None,
        s_index: int,
        d_rows: RangeColumns | None,
        d_index: int,
    ) -> None:
        source = None if s_rows is None else s_rows.identities[s_index]
        dest = None if d_rows is None else d_rows.identities[d_index]
        decision = decide(base, source, dest)
        resolution: Decision | None = None
        if decision is Decision.CONFLICT:
            s_action, d_action = action(base, source), action(base, dest)
            resolution = self.resolve(key, s_action, d_action)
            self.conflicts.append(
                KeyConflict(
                    Key(key),
                    s_action,
                    d_action,
                    None if s_rows is None else s_rows.entry_at(s_index),
                    None if d_rows is None else d_rows.entry_at(d_index),
                    resolution,
                )
            )
            if resolution is None:
                self.sink.enabled = False
                return
            self.resolved += 1
            decision = resolution
        if decision is Decision.TAKE_SOURCE:
            if s_rows is not None:
                self.sink.add_rows(s_rows, s_index, s_index + 1)
        elif d_rows is not None:
            self.sink.add_rows(d_rows, d_index, d_index + 1)


def merge_ranges(
    base: list[RangeInfo],
    source: list[RangeInfo],
    dest: list[RangeInfo],
    load: LoadRange,
    writer: RangeWriter,
    params: RangeParams,
    resolve: Resolver,
) -> MergeWalk:
    """Feeds the merge of ``source`` into ``dest`` (since ``base``) to ``writer``.

    Returns the written ranges, or None for them when a conflict stayed unresolved (then nothing should be
    stored as a result), and every conflict met, resolved or not.
    """
    sink = _Sink(writer, load, params)
    merger = _Merger(BaseLookup(base, load), RangeCursor(source, load), RangeCursor(dest, load), sink, resolve)
    merger.run()
    unresolved = any(c.resolution is None for c in merger.conflicts)
    return MergeWalk(None if unresolved else sink.finish(), merger.conflicts, merger.resolved)
