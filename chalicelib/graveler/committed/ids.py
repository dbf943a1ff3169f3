"""Content IDs of ranges and metaranges: sha256 over a canonical serialization of their logical rows.

The hash covers every field of every row, never the Parquet bytes (those may change with the pyarrow version),
so identical content always gets the identical ID and is stored, and reused, as one object.

Serialization, column by column: a header naming the kind, version and row count; then for each column in a
fixed order its name, then little-endian int64 values (integer columns), or the little-endian int64 lengths of
all values (in bytes for binary columns, in code points for text columns) followed by their concatenation
(raw bytes, or the UTF-8 of the joined text).
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Sequence

from ..records import MetaRangeID, RangeID, RangeInfo
from .arrow import pa, pc
from .columns import RangeColumns, int64_view
from .fnv import value_offsets


def _header(hasher: hashlib._Hash, kind: bytes, rows: int) -> None:
    hasher.update(kind + b"\x00" + struct.pack("<q", rows))


def _name(hasher: hashlib._Hash, name: str) -> None:
    raw = name.encode()
    hasher.update(struct.pack("<q", len(raw)) + raw)


def _ints(hasher: hashlib._Hash, name: str, values: Sequence[int]) -> None:
    _name(hasher, name)
    hasher.update(struct.pack(f"<{len(values)}q", *values))


def _blobs(hasher: hashlib._Hash, name: str, values: Sequence[bytes]) -> None:
    _name(hasher, name)
    hasher.update(struct.pack(f"<{len(values)}q", *map(len, values)))
    hasher.update(b"".join(values))


def _texts(hasher: hashlib._Hash, name: str, values: Sequence[str]) -> None:
    # Lengths in code points plus the UTF-8 of the concatenation split back into exactly one list of strings,
    # and one encode per column is far cheaper than one per value.
    _name(hasher, name)
    hasher.update(struct.pack(f"<{len(values)}q", *map(len, values)))
    hasher.update("".join(values).encode())


def _chunks(values: pa.ChunkedArray) -> list[pa.Array]:
    return [chunk for chunk in values.chunks if len(chunk)]


def _int_column(hasher: hashlib._Hash, name: str, values: pa.ChunkedArray) -> None:
    _name(hasher, name)
    for chunk in _chunks(values):
        hasher.update(int64_view(chunk))


def _data(values: pa.Array) -> memoryview:
    """The concatenated bytes of a string or binary array's values."""
    offsets = value_offsets(values)
    data = values.buffers()[2]
    return memoryview(data)[offsets[0].as_py() : offsets[-1].as_py()]


def _var_column(hasher: hashlib._Hash, name: str, values: pa.ChunkedArray, text: bool) -> None:
    # The bytes of _texts and _blobs: every length (code points for text, bytes for binary), then every value.
    _name(hasher, name)
    chunks = _chunks(values)
    for chunk in chunks:
        lengths = pc.utf8_length(chunk) if text else pc.binary_length(chunk)
        hasher.update(int64_view(lengths.cast(pa.int64())))
    for chunk in chunks:
        hasher.update(_data(chunk))


def range_id(columns: RangeColumns) -> RangeID:
    """The id of the range's logical rows (the stored boundary hashes are derived from the keys, so they are not
    part of it): computed from the Arrow buffers, the exact bytes of the row-by-row serialization."""
    hasher = hashlib.sha256()
    table = columns.table
    _header(hasher, b"lakelet-range:v1", len(columns))
    _var_column(hasher, "key", table.column(0), True)
    _var_column(hasher, "physical_address", table.column(1), True)
    _int_column(hasher, "size", table.column(2))
    _var_column(hasher, "etag", table.column(3), True)
    _int_column(hasher, "mtime", table.column(4))
    _var_column(hasher, "content_type", table.column(5), True)
    _var_column(hasher, "user_metadata", table.column(6), True)
    _var_column(hasher, "identity", table.column(7), False)
    return RangeID(hasher.hexdigest())


def range_id_of_lists(
    keys: Sequence[str],
    addresses: Sequence[str],
    sizes: Sequence[int],
    etags: Sequence[str],
    mtimes: Sequence[int],
    content_types: Sequence[str],
    metadata: Sequence[str],
    identities: Sequence[bytes],
) -> RangeID:
    """The reference serialization, row values as Python lists: what ``range_id`` must always agree with."""
    hasher = hashlib.sha256()
    _header(hasher, b"lakelet-range:v1", len(keys))
    _texts(hasher, "key", keys)
    _texts(hasher, "physical_address", addresses)
    _ints(hasher, "size", sizes)
    _texts(hasher, "etag", etags)
    _ints(hasher, "mtime", mtimes)
    _texts(hasher, "content_type", content_types)
    _texts(hasher, "user_metadata", metadata)
    _blobs(hasher, "identity", identities)
    return RangeID(hasher.hexdigest())


def metarange_id(ranges: Sequence[RangeInfo]) -> MetaRangeID:
    hasher = hashlib.sha256()
    _header(hasher, b"lakelet-metarange:v1", len(ranges))
    _texts(hasher, "range_id", [r.id for r in ranges])
    _texts(hasher, "min_key", [r.min_key for r in ranges])
    _texts(hasher, "max_key", [r.max_key for r in ranges])
    _ints(hasher, "count", [r.count for r in ranges])
    _ints(hasher, "estimated_size", [r.estimated_size for r in ranges])
    return MetaRangeID(hasher.hexdigest())
