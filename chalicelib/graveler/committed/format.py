"""Ranges and metaranges as Parquet: the only module of graveler that imports pyarrow.

Columns are plain Parquet types (utf8 strings, int64, binary), so Spark, DuckDB, Athena or pyarrow can read a
commit's listing straight from ``<namespace>/_lakefs/``:

- range: key, physical_address, size, etag, mtime (unix seconds), content_type, user_metadata (JSON text with
  sorted keys), identity (sha256 of size, etag, metadata and content type; see identity.entry_identity).
- metarange: range_id, min_key, max_key, count, estimated_size.

Rows are sorted by key (by min_key for a metarange), which the file records as its sorting column.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq

from ..errors import StorageError
from ..records import Key, RangeID, RangeInfo
from .columns import RangeColumns

FORMAT_VERSION = b"1"
_KIND = b"lakelet.kind"
_VERSION = b"lakelet.format_version"

RANGE_SCHEMA = pa.schema(
    [
        pa.field("key", pa.string(), nullable=False),
        pa.field("physical_address", pa.string(), nullable=False),
        pa.field("size", pa.int64(), nullable=False),
        pa.field("etag", pa.string(), nullable=False),
        pa.field("mtime", pa.int64(), nullable=False),
        pa.field("content_type", pa.string(), nullable=False),
        pa.field("user_metadata", pa.string(), nullable=False),
        pa.field("identity", pa.binary(), nullable=False),
    ],
    metadata={_KIND: b"range", _VERSION: FORMAT_VERSION},
)

METARANGE_SCHEMA = pa.schema(
    [
        pa.field("range_id", pa.string(), nullable=False),
        pa.field("min_key", pa.string(), nullable=False),
        pa.field("max_key", pa.string(), nullable=False),
        pa.field("count", pa.int64(), nullable=False),
        pa.field("estimated_size", pa.int64(), nullable=False),
    ],
    metadata={_KIND: b"metarange", _VERSION: FORMAT_VERSION},
)

# Columns that repeat a lot (content types, empty metadata) compress well as dictionaries; keys, addresses,
# etags and identities are unique per row, where a dictionary only costs time.
_RANGE_DICTIONARY_COLUMNS = ["content_type", "user_metadata"]


def _to_bytes(table: pa.Table, dictionary_columns: list[str] | bool) -> bytes:
    sink = pa.BufferOutputStream()
    pq.write_table(
        table,
        sink,
        use_dictionary=dictionary_columns,
        compression="snappy",
        sorting_columns=[pq.SortingColumn(0)],
        write_statistics=True,
    )
    return bytes(sink.getvalue().to_pybytes())


def _read(data: bytes, kind: bytes, dictionary_columns: list[str] | None = None) -> pa.Table:
    table = pq.read_table(pa.BufferReader(data), read_dictionary=dictionary_columns)
    found = (table.schema.metadata or {}).get(_KIND)
    if found != kind:
        raise StorageError(f"expected a Parquet {kind.decode()}, found {found!r}")
    return table


def encode_range(columns: RangeColumns) -> bytes:
    table = pa.Table.from_arrays(
        [
            pa.array(columns.keys, pa.string()),
            pa.array(columns.addresses, pa.string()),
            pa.array(columns.sizes, pa.int64()),
            pa.array(columns.etags, pa.string()),
            pa.array(columns.mtimes, pa.int64()),
            pa.array(columns.content_types, pa.string()),
            pa.array(columns.metadata, pa.string()),
            pa.array(columns.identities, pa.binary()),
        ],
        schema=RANGE_SCHEMA,
    )
    return _to_bytes(table, _RANGE_DICTIONARY_COLUMNS)


def _shared_strings(column: pa.ChunkedArray) -> list[str]:
    """The values of a dictionary-encoded column, one Python object per distinct value: repeated content types
    and metadata then cost a pointer per cached row instead of a string each."""
    values: list[str] = []
    for chunk in column.chunks:
        if isinstance(chunk, pa.DictionaryArray):
            distinct = chunk.dictionary.to_pylist()
            values.extend([distinct[i] for i in chunk.indices.to_pylist()])
        else:
            values.extend(chunk.to_pylist())
    return values


def decode_range(data: bytes) -> RangeColumns:
    table = _read(data, b"range", _RANGE_DICTIONARY_COLUMNS)
    return RangeColumns(
        keys=table.column("key").to_pylist(),
        addresses=table.column("physical_address").to_pylist(),
        sizes=table.column("size").to_pylist(),
        etags=table.column("etag").to_pylist(),
        mtimes=table.column("mtime").to_pylist(),
        content_types=_shared_strings(table.column("content_type")),
        metadata=_shared_strings(table.column("user_metadata")),
        identities=table.column("identity").to_pylist(),
    )


def encode_metarange(ranges: list[RangeInfo]) -> bytes:
    table = pa.Table.from_arrays(
        [
            pa.array([r.id for r in ranges], pa.string()),
            pa.array([r.min_key for r in ranges], pa.string()),
            pa.array([r.max_key for r in ranges], pa.string()),
            pa.array([r.count for r in ranges], pa.int64()),
            pa.array([r.estimated_size for r in ranges], pa.int64()),
        ],
        schema=METARANGE_SCHEMA,
    )
    return _to_bytes(table, False)


def decode_metarange(data: bytes) -> list[RangeInfo]:
    table = _read(data, b"metarange")
    return [
        RangeInfo(id=RangeID(rid), min_key=Key(lo), max_key=Key(hi), count=count, estimated_size=size)
        for rid, lo, hi, count, size in zip(
            table.column("range_id").to_pylist(),
            table.column("min_key").to_pylist(),
            table.column("max_key").to_pylist(),
            table.column("count").to_pylist(),
            table.column("estimated_size").to_pylist(),
            strict=True,
        )
    ]
