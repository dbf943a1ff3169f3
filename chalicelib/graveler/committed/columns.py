"""The decoded, column-wise form of ranges and metaranges that every other module of committed/ works on.

A range stays what Parquet decoded: one Arrow array per column. Copying rows into a new range is an Arrow slice,
sizes and boundary checks are vectorised, and a cached range holds no Python object per row, so the garbage
collector has nothing to walk there. Python values are built only where a walk needs them: the key and identity
lists of a range that a commit or merge enters (built once, kept with the range), and the entries of the rows a
listing returns, a chunk at a time.
"""

from __future__ import annotations

import json
import sys
from bisect import bisect_left
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cache

from ..records import Entry, EntryRecord, Key, RangeInfo
from .arrow import pa, pc
from .fnv import fnv1a_64_arrow, value_offsets

# Fixed per-row overhead in the size estimate: size, mtime, identity and Parquet framing, roughly.
ROW_OVERHEAD = 40

EMPTY_METADATA_JSON = "{}"


@cache
def row_schema() -> pa.Schema:
    """The columns of a decoded range (a function, so that importing this module does not import pyarrow)."""
    return pa.schema(
        [
            pa.field("key", pa.string(), nullable=False),
            pa.field("physical_address", pa.string(), nullable=False),
            pa.field("size", pa.int64(), nullable=False),
            pa.field("etag", pa.string(), nullable=False),
            pa.field("mtime", pa.int64(), nullable=False),
            pa.field("content_type", pa.string(), nullable=False),
            pa.field("user_metadata", pa.string(), nullable=False),
            pa.field("identity", pa.binary(), nullable=False),
        ]
    )


_KEY, _ADDRESS, _SIZE, _ETAG, _MTIME, _CONTENT_TYPE, _METADATA, _IDENTITY = range(8)
# The text columns of the size estimate.
_ESTIMATED = (_KEY, _ADDRESS, _ETAG, _CONTENT_TYPE, _METADATA)
# Rows turned into Python values at a time while iterating: a listing page, give or take.
_ITER_CHUNK = 1024

# A listing's rows as columns: keys, physical addresses, sizes, etags, mtimes, content types, metadata JSON.
ListingColumns = tuple[list[str], list[str], list[int], list[str], list[int], list[str], list[str]]


def metadata_json(user_metadata: Mapping[str, str]) -> str:
    """The canonical JSON of user metadata (sorted keys, no spaces), so equal maps give equal bytes."""
    if not user_metadata:
        return EMPTY_METADATA_JSON
    return json.dumps(user_metadata, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def row_estimate(key: str, address: str, etag: str, content_type: str, metadata: str) -> int:
    """A cheap stand-in for a row's stored size; only used to decide where ranges close."""
    return len(key) + len(address) + len(etag) + len(content_type) + len(metadata) + ROW_OVERHEAD


def _chunks(values: pa.Array | pa.ChunkedArray) -> list[pa.Array]:
    return values.chunks if isinstance(values, pa.ChunkedArray) else [values]


def _running_chars(values: pa.ChunkedArray) -> pa.Array:
    """For each row of a text column, the code points of its values up to and including that row (int64)."""
    column = values.chunk(0) if values.num_chunks == 1 else values.combine_chunks()
    offsets = value_offsets(column)
    first, end = offsets[0].as_py(), offsets[-1].as_py()
    data = column.buffers()[2]
    # In an ASCII column (nearly every one) a code point is a byte, so the offsets already are the running
    # counts: no pass over the values, which utf8_length plus a cumulative sum would make.
    if data is None or memoryview(data)[first:end].tobytes().isascii():
        return pc.subtract(offsets.slice(1).cast(pa.int64()), first)
    return pc.cumulative_sum(pc.utf8_length(column).cast(pa.int64()))


def int64_view(values: pa.Array) -> memoryview:
    """The values of an int64 array without nulls as a sequence of Python ints, without copying."""
    if sys.byteorder != "little":
        return memoryview(values.to_pylist())  # pragma: no cover
    buffer = values.buffers()[1]
    return memoryview(buffer).cast("q")[values.offset : values.offset + len(values)]


# A row's derived key (str) and identity (bytes): object headers, characters of a short key, two list slots.
_DERIVED_BYTES_PER_ROW = 140


class RangeColumns:
    """The rows of one range, sorted by key, as one Arrow array per column (``row_schema()``). Immutable.

    ``hashes`` (fnv1a-64 of each key, uint64) is stored with the range; when a range of the first format lacks
    it, it is computed on first use. Everything derived (Python key and identity lists, running size estimates,
    boundary positions) is computed once and kept with the range.
    """

    __slots__ = ("_hashes", "_hits", "_identities", "_keys", "_running", "table")

    def __init__(
        self, arrays: Sequence[pa.Array | pa.ChunkedArray] | pa.Table, hashes: pa.Array | pa.ChunkedArray | None = None
    ) -> None:
        # A table, so that slices and concatenations of ranges share buffers instead of copying them.
        self.table: pa.Table = (
            arrays if isinstance(arrays, pa.Table) else pa.Table.from_arrays(list(arrays), schema=row_schema())
        )
        self._hashes = hashes
        self._keys: list[str] | None = None
        self._identities: list[bytes] | None = None
        self._running: pa.Array | None = None
        self._hits: dict[int, list[int]] = {}

    @property
    def arrays(self) -> tuple[pa.ChunkedArray, ...]:
        return tuple(self.table.columns)

    @classmethod
    def from_lists(
        cls,
        keys: Sequence[str],
        addresses: Sequence[str],
        sizes: Sequence[int],
        etags: Sequence[str],
        mtimes: Sequence[int],
        content_types: Sequence[str],
        metadata: Sequence[str],
        identities: Sequence[bytes],
    ) -> RangeColumns:
        values = (keys, addresses, sizes, etags, mtimes, content_types, metadata, identities)
        return cls([pa.array(v, f.type) for v, f in zip(values, row_schema(), strict=True)])

    @classmethod
    def empty(cls) -> RangeColumns:
        return cls([pa.array([], f.type) for f in row_schema()])

    def memory_estimate(self) -> int:
        """Bytes this range holds once its derived lists are built: its Arrow buffers, plus the Python key and
        identity lists that reads build (a str and a bytes object with their characters, two list slots).
        Measured: 218,197 cached rows of a soak held 45 MiB of Arrow buffers and ~30 MB of such lists."""
        buffers: int = self.table.nbytes
        return buffers + _DERIVED_BYTES_PER_ROW * len(self)

    def __len__(self) -> int:
        # pyarrow has no type information (pyproject.toml), so its results are typed where they leave it.
        rows: int = self.table.num_rows
        return rows

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RangeColumns):
            return NotImplemented
        equal: bool = self.table.equals(other.table)
        return equal

    __hash__ = None  # type: ignore[assignment]

    def slice(self, start: int, stop: int) -> RangeColumns:
        """Rows [start, stop), sharing this range's buffers."""
        part = RangeColumns(self.table.slice(start, stop - start), self.hashes.slice(start, stop - start))
        if self._keys is not None:
            part._keys = self._keys[start:stop]
        return part

    @property
    def keys(self) -> list[str]:
        if self._keys is None:
            self._keys = self.table.column(_KEY).to_pylist()
        return self._keys

    @property
    def identities(self) -> list[bytes]:
        if self._identities is None:
            self._identities = self.table.column(_IDENTITY).to_pylist()
        return self._identities

    @property
    def hashes(self) -> pa.Array:
        if self._hashes is None:
            self._hashes = fnv1a_64_arrow(self.table.column(_KEY).combine_chunks())
        return self._hashes

    def key_at(self, index: int) -> str:
        return self._keys[index] if self._keys is not None else self.table.column(_KEY)[index].as_py()

    def running_sizes(self) -> memoryview:
        """For each row, the estimated size of rows [0, row]: increasing, since every estimate is positive."""
        if self._running is None:
            rows = len(self)
            if rows == 0:
                self._running = pa.array([], pa.int64())
            else:
                total = pc.cumulative_sum(pa.repeat(pa.scalar(ROW_OVERHEAD, pa.int64()), rows))
                for column in _ESTIMATED:
                    total = pc.add(total, _running_chars(self.table.column(column)))
                self._running = total
        return int64_view(self._running)

    def hash_hits(self, raggedness: int) -> list[int]:
        """The rows whose key hash is a multiple of ``raggedness``: the only rows where a range may close
        below its maximum size."""
        hits = self._hits.get(raggedness)
        if hits is None:
            divisor = pa.scalar(raggedness, pa.uint64())
            hashes = self.hashes
            if isinstance(hashes, pa.ChunkedArray):
                hashes = hashes.combine_chunks()
            hits = pc.indices_nonzero(pc.equal(pc.modulo(hashes, divisor), 0)).to_pylist()
            self._hits[raggedness] = hits
        return hits

    def entry_at(self, index: int) -> Entry:
        a = self.table.columns
        raw = a[_METADATA][index].as_py()
        return Entry(
            physical_address=a[_ADDRESS][index].as_py(),
            size=a[_SIZE][index].as_py(),
            etag=a[_ETAG][index].as_py(),
            mtime=a[_MTIME][index].as_py(),
            content_type=a[_CONTENT_TYPE][index].as_py(),
            # A fresh dict per call: cached columns must never share a mutable map with a caller.
            user_metadata={} if raw == EMPTY_METADATA_JSON else json.loads(raw),
        )

    def record_at(self, index: int) -> EntryRecord:
        return EntryRecord(key=Key(self.key_at(index)), entry=self.entry_at(index))

    def listing_columns(self, start: int, stop: int) -> ListingColumns:
        """Rows [start, stop) as one Python list per listed field (key, address, size, etag, mtime, content type,
        metadata JSON): a listing page decoded column by column in Arrow, with no Python object per row."""
        part = self.table.slice(start, stop - start)
        return (
            part.column(_KEY).to_pylist() if self._keys is None else self._keys[start:stop],
            part.column(_ADDRESS).to_pylist(),
            part.column(_SIZE).to_pylist(),
            part.column(_ETAG).to_pylist(),
            part.column(_MTIME).to_pylist(),
            part.column(_CONTENT_TYPE).to_pylist(),
            part.column(_METADATA).to_pylist(),
        )

    def keys_between(self, start: int, stop: int) -> list[str]:
        """The keys of rows [start, stop), from the kept key list when a walk built one."""
        if self._keys is not None:
            return self._keys[start:stop]
        keys: list[str] = self.table.column(_KEY).slice(start, stop - start).to_pylist()
        return keys

    def records(self, start: int = 0) -> Iterator[EntryRecord]:
        """Rows from ``start`` on as records, converted to Python a chunk at a time."""
        for first in range(start, len(self), _ITER_CHUNK):
            count = min(_ITER_CHUNK, len(self) - first)
            part = self.table.slice(first, count)
            a = [part.column(column).to_pylist() for column in range(_IDENTITY)]
            loads = json.loads
            yield from [
                EntryRecord(k, Entry(ad, sz, et, mt, ct, {} if md == EMPTY_METADATA_JSON else loads(md)))
                for k, ad, sz, et, mt, ct, md in zip(*a, strict=True)
            ]

    def find(self, key: str) -> int | None:
        """The row index of ``key``, or None."""
        index = self.lower_bound(key)
        if index < len(self) and self.key_at(index) == key:
            return index
        return None

    def lower_bound(self, key: str, low: int = 0) -> int:
        """The first row from ``low`` on whose key is >= ``key``: a binary search on the Arrow column (builds no
        key list)."""
        if self._keys is not None:
            return bisect_left(self._keys, key, low)
        keys = self.table.column(_KEY)
        high = len(keys)
        while low < high:
            middle = (low + high) // 2
            if keys[middle].as_py() < key:
                low = middle + 1
            else:
                high = middle
        return low


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
