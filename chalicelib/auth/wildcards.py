"""The wildcard match of policies and their conditions, as lakeFS's: ``*`` matches any run of characters and ``?``
one character, in time linear in the value (a regex built from the glob backtracked). Its own module: policies.py
and conditions.py both match with it, and neither imports the other for it."""

from __future__ import annotations

import functools
from dataclasses import dataclass

__all__ = ["match_steps", "matches"]


@dataclass(frozen=True, slots=True)
class _Segment:
    """A run of the pattern between two ``*``: its length, and its literal pieces at their offsets (a ``?``
    is the gap between pieces)."""

    length: int
    pieces: tuple[tuple[int, str], ...]
    literal: bool  # no ``?``: str.find can look for it directly

    @classmethod
    def parse(cls, text: str) -> _Segment:
        pieces: list[tuple[int, str]] = []
        offset = 0
        for chunk in text.split("?"):
            if chunk:
                pieces.append((offset, chunk))
            offset += len(chunk) + 1
        return cls(len(text), tuple(pieces), "?" not in text)

    def at(self, value: str, start: int) -> bool:
        """Whether the segment matches ``value`` at ``start`` (the caller checked it fits)."""
        return all(value.startswith(piece, start + offset) for offset, piece in self.pieces)


@dataclass(frozen=True, slots=True)
class _Glob:
    """A wildcard pattern split on ``*``: a head that must match the start, a tail that must match the end,
    and middle segments found left to right in between."""

    head: _Segment
    middle: tuple[_Segment, ...]
    tail: _Segment | None  # None: the pattern has no ``*`` at all

    def match(self, value: str) -> tuple[bool, int]:
        """(matched, steps): steps counts the positions tried, so tests can see the work is linear."""
        n = len(value)
        if self.tail is None:
            return n == self.head.length and self.head.at(value, 0), 1
        end = n - self.tail.length
        if end < self.head.length or not self.head.at(value, 0) or not self.tail.at(value, end):
            return False, 1
        position, steps = self.head.length, 1
        for segment in self.middle:
            # Taking the leftmost place for each segment is never worse than a later one: everything after it
            # stays available to the segments that follow. So no choice is ever revisited.
            found, tried = _find(segment, value, position, end)
            steps += tried
            if found < 0:
                return False, steps
            position = found + segment.length
        return True, steps


def _find(segment: _Segment, value: str, start: int, end: int) -> tuple[int, int]:
    """(leftmost index >= start where ``segment`` fits wholly before ``end``, or -1; positions tried)."""
    if segment.literal:
        return value.find(segment.pieces[0][1], start, end), 1
    last = end - segment.length
    for index in range(start, last + 1):
        if segment.at(value, index):
            return index, index - start + 1
    return -1, max(last - start + 1, 1)


@functools.lru_cache(maxsize=4096)
def _glob(pattern: str) -> _Glob:
    parts = pattern.split("*")
    if len(parts) == 1:
        return _Glob(_Segment.parse(pattern), (), None)
    middle = tuple(_Segment.parse(p) for p in parts[1:-1] if p)
    return _Glob(_Segment.parse(parts[0]), middle, _Segment.parse(parts[-1]))


def match_steps(pattern: str, value: str) -> tuple[bool, int]:
    """:func:`matches` with the number of positions it tried: at most about ``len(value)`` plus the number
    of segments, whatever the pattern (a regex built from the glob backtracked: 2.4 s for 190 slashes)."""
    return _glob(pattern).match(value)


def matches(pattern: str, value: str) -> bool:
    """Whether ``value`` matches the wildcard ``pattern`` (``*`` any run, ``?`` one character), in time linear
    in ``len(value)`` for a given pattern."""
    return _glob(pattern).match(value)[0]
