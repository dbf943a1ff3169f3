"""The decoded, column-wise form of ranges and metaranges that every other module of committed/ works on.

Ranges are kept as parallel lists rather than one object per record: streaming an untouched range through the
writer then copies list slices and never builds an Entry, parses metadata JSON or rehashes an identity.
"""

from __future__ import annotations

import json
from bisect import bisect_left
from collections.abc import Mapping
from dataclasses import dataclass, field

from ..records import Entry, EntryRecord, Key, RangeInfo

# Fixed per-row overhead in the size estimate: size, mtime, identity and Parquet framing, roughly.
ROW_OVERHEAD = 40

EMPTY_METADATA_JSON = "{}"


def metadata_json(user_metadata: Mapping[str, str]) -> str:
    """The canonical JSON of user metadata (sorted keys, no spaces), so equal maps give equal bytes."""
    if not user_metadata:
        return EMPTY_METADATA_JSON
    return json.dumps(user_metadata, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def row_estimate(key: str, address: str, etag: str, content_type: str, metadata: str) -> int:
    """A cheap stand-in for a row's stored size; only used to decide where ranges close."""
    return len(key) + len(address) + len(etag) + len(content_type) + len(metadata) + ROW_OVERHEAD


@dataclass(frozen=True, slots=True)
class RangeColumns:
    """The rows of one range, sorted by key, as parallel columns. Treated as immutable once built."""

    keys: list[str] = field(default_factory=list)
    addresses: list[str] = field(default_factory=list)
    sizes: list[int] = field(default_factory=list)
    etags: list[str] = field(default_factory=list)
    mtimes: list[int] = field(default_factory=list)
    content_types: list[str] = field(default_factory=list)
    metadata: list[str] = field(default_factory=list)  # canonical JSON, see metadata_json
    identities: list[bytes] = field(default_factory=list)  # identity.entry_identity of each row

    def __len__(self) -> int:
        return len(self.keys)

    def entry_at(self, index: int) -> Entry:
        raw = self.metadata[index]
        return Entry(
            physical_address=self.addresses[index],
            size=self.sizes[index],
            etag=self.etags[index],
            mtime=self.mtimes[index],
            content_type=self.content_types[index],
            # A fresh dict per call: cached columns must never share a mutable map with a caller.
            user_metadata={} if raw == EMPTY_METADATA_JSON else json.loads(raw),
        )

    def record_at(self, index: int) -> EntryRecord:
        return EntryRecord(key=Key(self.keys[index]), entry=self.entry_at(index))

    def find(self, key: str) -> int | None:
        """The row index of ``key``, or None."""
        index = bisect_left(self.keys, key)
        if index < len(self.keys) and self.keys[index] == key:
            return index
        return None

    def extend_from(self, source: RangeColumns, start: int, stop: int) -> None:
        """Appends rows [start, stop) of ``source``; only for a range still being built."""
        self.keys.extend(source.keys[start:stop])
        self.addresses.extend(source.addresses[start:stop])
        self.sizes.extend(source.sizes[start:stop])
        self.etags.extend(source.etags[start:stop])
        self.mtimes.extend(source.mtimes[start:stop])
        self.content_types.extend(source.content_types[start:stop])
        self.metadata.extend(source.metadata[start:stop])
        self.identities.extend(source.identities[start:stop])

    def split(self, rows: int) -> tuple[RangeColumns, RangeColumns]:
        """Rows [0, rows) and the rest, as two new RangeColumns."""
        return (
            RangeColumns(
                self.keys[:rows], self.addresses[:rows], self.sizes[:rows], self.etags[:rows],
                self.mtimes[:rows], self.content_types[:rows], self.metadata[:rows], self.identities[:rows],
            ),
            RangeColumns(
                self.keys[rows:], self.addresses[rows:], self.sizes[rows:], self.etags[rows:],
                self.mtimes[rows:], self.content_types[rows:], self.metadata[rows:], self.identities[rows:],
            ),
        )


@dataclass(frozen=True, slots=True)
class MetaRange:
    """The decoded metarange: its ranges in key order, plus their max keys for binary search."""

    ranges: list[RangeInfo]
    max_keys: list[str]

    @classmethod
    def of(cls, ranges: list[RangeInfo]) -> MetaRange:
        return cls(ranges=ranges, max_keys=[r.max_key for r in ranges])

    def first_at_or_after(self, key: str) -> int:
        """Index of the first range whose max_key >= key (len(ranges) when none): the only one that may hold
        ``key``, and the first one an iteration from ``key`` needs."""
        return bisect_left(self.max_keys, key)
