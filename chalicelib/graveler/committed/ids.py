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
from .columns import RangeColumns


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


def range_id(columns: RangeColumns) -> RangeID:
    hasher = hashlib.sha256()
    _header(hasher, b"lakelet-range:v1", len(columns.keys))
    _texts(hasher, "key", columns.keys)
    _texts(hasher, "physical_address", columns.addresses)
    _ints(hasher, "size", columns.sizes)
    _texts(hasher, "etag", columns.etags)
    _ints(hasher, "mtime", columns.mtimes)
    _texts(hasher, "content_type", columns.content_types)
    _texts(hasher, "user_metadata", columns.metadata)
    _blobs(hasher, "identity", columns.identities)
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
