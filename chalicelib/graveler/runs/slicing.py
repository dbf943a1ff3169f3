"""Cutting a commit or a merge into slices of the key space, and putting the slices' ranges back together.

A slice is an interval [lo, hi) of keys. Its bounds must be keys that no input range straddles (lies across
without starting at): then every input range belongs to exactly one slice, and a slice's output is exactly that
part of a single pass's output, except at a seam, which ``concatenate`` re-cuts.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable

from ..committed.params import RangeParams
from ..committed.storage import CommittedStorage
from ..committed.writer import RangeWriter, closes_range
from ..records import MetaRangeID, RangeID, RangeInfo

__all__ = [
    "DEFAULT_MAX_SLICES",
    "SAMPLES",
    "concatenate",
    "join_slices",
    "slice_bounds",
    "spread_bounds",
]

Bounds = list[tuple[str, str | None]]

# How many slices a commit, merge or import is cut into at most when its caller names no number: each slice is one
# Lambda of the workflow's Map state.
DEFAULT_MAX_SLICES = 16

# How many staged keys a plan samples from each sealed token's sketch (graveler/writes/staging_shards.py): enough for
# evenly sized slices, and a bounded read whatever the token holds.
SAMPLES = 1024


def slice_bounds(ranges: list[RangeInfo], max_slices: int) -> Bounds:
    """Up to ``max_slices`` key intervals [lo, hi) covering all keys, each starting at a range's min key (the
    first at ""), with the ranges spread evenly."""
    return spread_bounds([r.min_key for r in ranges[1:]], [], max_slices)


def spread_bounds(candidates: list[str], listings: list[list[RangeInfo]], max_slices: int) -> Bounds:
    """Up to ``max_slices`` key intervals [lo, hi) covering all keys, bounded at sorted ``candidates`` that no
    range of ``listings`` straddles, spread evenly over the candidates."""
    if max_slices < 1:
        raise ValueError("max_slices must be >= 1")
    starts = [[r.min_key for r in listing] for listing in listings]

    def clear(key: str) -> bool:
        for listing, mins in zip(listings, starts, strict=True):
            i = bisect.bisect_right(mins, key) - 1  # the last range starting at or before key
            if i >= 0 and mins[i] != key and listing[i].max_key >= key:
                return False
        return True

    usable = [k for k in candidates if k and clear(k)]
    count = min(max_slices - 1, len(usable))
    picks = sorted({usable[len(usable) * (i + 1) // (count + 1)] for i in range(count)})
    los = ["", *picks]
    return [(lo, los[i + 1] if i + 1 < len(los) else None) for i, lo in enumerate(los)]


def concatenate(
    storage: CommittedStorage, namespace: str, params: RangeParams, parts: list[list[RangeInfo]]
) -> list[RangeInfo]:
    """The slices' ranges as one listing, re-cutting across a seam where a slice's writer was cut short."""
    out: list[RangeInfo] = []
    writer: RangeWriter | None = None
    known: set[RangeID] = set()
    for part in parts:
        known.update(r.id for r in part)
    for number, part in enumerate(parts, start=1):
        for index, info in enumerate(part):
            if writer is not None:
                writer.add_rows(storage.range(namespace, info.id))
                if not writer.pending:
                    out.extend(writer.finish())
                    writer = None
                continue
            # The last slice's last range ends where the data ends, as a single pass's does: nothing to re-cut.
            last = index == len(part) - 1 and number < len(parts)
            if last and not closes_range(info.max_key, info.estimated_size, params):
                # A single pass would still hold these rows when the next slice begins.
                writer = RangeWriter(storage, namespace, params, known_ranges=known)
                writer.add_rows(storage.range(namespace, info.id))
                continue
            out.append(info)
    if writer is not None:
        out.extend(writer.finish())
    return out


def join_slices(
    storage: CommittedStorage, namespace: str, params: RangeParams, metaranges: Iterable[str]
) -> MetaRangeID:
    """One metarange of the slices' metaranges, in slice order (a workflow's built slices)."""
    parts = [storage.metarange(namespace, MetaRangeID(m)).ranges for m in metaranges]
    return storage.write_metarange(namespace, concatenate(storage, namespace, params, parts))
