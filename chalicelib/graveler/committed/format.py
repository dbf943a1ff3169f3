"""Ranges and metaranges as Parquet.

Columns are plain Parquet types (utf8 strings, int64, binary), so Spark, DuckDB, Athena or pyarrow can read a
commit's listing straight from ``<namespace>/_lakefs/``:

- range: key, physical_address, size, etag, mtime (unix seconds), content_type, user_metadata (JSON text with
  sorted keys), identity (sha256 of size, etag, metadata and content type; see identity.entry_identity).
  Since the boundary hashes were added, also key_hash: fnv1a-64 of the key's UTF-8 (uint64), so that a range
  copied into a new one never has its keys hashed again. Files without it (the first layout) stay readable: the
  hashes are then computed when needed. The column is derived from the keys, so range ids do not change and the
  format version stays 1 (readers that ignore unknown columns, such as the GC job, read both layouts); the
  schema metadata ``lakelet.key_hash`` names the hash.
- metarange: range_id, min_key, max_key, count, estimated_size.

Rows are sorted by key (by min_key for a metarange), which the file records as its sorting column.
"""

from __future__ import annotations

from functools import cache

from ..errors import StorageError
from ..records import Key, RangeID, RangeInfo
from .arrow import pa, pq
from .columns import RangeColumns, row_schema

FORMAT_VERSION = b"1"
_KIND = b"lakelet.kind"
_VERSION = b"lakelet.format_version"

_KEY_HASH = b"lakelet.key_hash"
KEY_HASH_COLUMN = "key_hash"


# Functions, not constants, so that importing this module does not import pyarrow (committed/arrow.py).
@cache
def range_schema() -> pa.Schema:
    return pa.schema(
        [*row_schema(), pa.field(KEY_HASH_COLUMN, pa.uint64(), nullable=False)],
        metadata={_KIND: b"range", _VERSION: FORMAT_VERSION, _KEY_HASH: b"fnv1a-64"},
    )


@cache
def metarange_schema() -> pa.Schema:
    return pa.schema(
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
    hashes = columns.hashes
    table = columns.table.append_column(
        range_schema().field(KEY_HASH_COLUMN),
        hashes if isinstance(hashes, pa.ChunkedArray) else pa.chunked_array([hashes]),
    ).replace_schema_metadata(range_schema().metadata)
    return _to_bytes(table, _RANGE_DICTIONARY_COLUMNS)


def _single(column: pa.ChunkedArray) -> pa.Array:
    # combine_chunks copies even a single chunk; a range is one row group, so that copy is the common case.
    return column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()


def decode_range(data: bytes) -> RangeColumns:
    table = _read(data, b"range")
    arrays = [_single(table.column(f.name)) for f in row_schema()]
    hashes = None
    if KEY_HASH_COLUMN in table.column_names and (table.schema.metadata or {}).get(_KEY_HASH) == b"fnv1a-64":
        hashes = _single(table.column(KEY_HASH_COLUMN))
    return RangeColumns(arrays, hashes)


def encode_metarange(ranges: list[RangeInfo]) -> bytes:
    table = pa.Table.from_arrays(
        [
            pa.array([r.id for r in ranges], pa.string()),
            pa.array([r.min_key for r in ranges], pa.string()),
            pa.array([r.max_key for r in ranges], pa.string()),
            pa.array([r.count for r in ranges], pa.int64()),
            pa.array([r.estimated_size for r in ranges], pa.int64()),
        ],
        schema=metarange_schema(),
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
