"""What the job reads: the prepare manifest and its active commits, an earlier mark, and the addresses the active
commits' metaranges and ranges and the staged parts reference (the side of the subtraction that must stay)."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from .layout import (
    COMMITS_HEADER,
    FORMAT_VERSION,
    KIND_KEY,
    RANGE_FORMAT_VERSION,
    VERSION_KEY,
    GCJobError,
    Namespace,
    mark_manifest_key,
    prepare_manifest_key,
)
from .storage import get_bytes, get_json, read_concurrently

# What a referenced address comes from: a range of an active commit, or a part of the staged addresses.
SOURCE_RANGE = "range"
SOURCE_STAGED = "staged"


def load_prepared(s3: Any, ns: Namespace, run_id: str) -> dict[str, Any]:
    manifest = get_json(s3, ns.bucket, prepare_manifest_key(ns, run_id), "prepare manifest")
    if manifest.get("format_version") != FORMAT_VERSION:
        raise GCJobError(f"prepare manifest of format {manifest.get('format_version')!r}, expected {FORMAT_VERSION}")
    if Namespace.parse(str(manifest.get("storage_namespace", ""))) != ns:
        raise GCJobError(f"run {run_id} was prepared for {manifest.get('storage_namespace')}, not {ns.uri}")
    if manifest.get("run_id") != run_id:
        raise GCJobError(f"prepare manifest names run {manifest.get('run_id')!r}, expected {run_id!r}")
    return manifest


def load_mark(s3: Any, ns: Namespace, run_id: str) -> dict[str, Any]:
    manifest = get_json(s3, ns.bucket, mark_manifest_key(ns, run_id), "mark")
    if Namespace.parse(str(manifest.get("storage_namespace", ""))) != ns or manifest.get("run_id") != run_id:
        raise GCJobError(f"the mark of run {run_id} belongs to another namespace or run")
    return manifest


def read_lakelet_parquet(data: bytes, columns: list[str], kind: bytes, where: str) -> pa.Table:
    """Columns of a Lakelet range or metarange, after checking it is one, in the version this job knows."""
    parquet = pq.ParquetFile(pa.BufferReader(data))
    metadata = parquet.schema_arrow.metadata or {}
    if metadata.get(KIND_KEY) != kind or metadata.get(VERSION_KEY) != RANGE_FORMAT_VERSION:
        raise GCJobError(
            f"{where}: expected a Lakelet {kind.decode()} of format {RANGE_FORMAT_VERSION.decode()}, found "
            f"kind {metadata.get(KIND_KEY)!r} version {metadata.get(VERSION_KEY)!r}"
        )
    return parquet.read(columns=columns)


def read_commits(data: bytes) -> list[tuple[str, str]]:
    """(commit_id, meta_range_id) of each active commit."""
    rows = list(csv.reader(io.StringIO(data.decode())))
    if not rows or tuple(rows[0]) != COMMITS_HEADER:
        raise GCJobError(f"commits.csv must start with the header {','.join(COMMITS_HEADER)}")
    return [(row[0], row[1]) for row in rows[1:] if row]


def normalize_addresses(ns: Namespace, column: Any) -> pa.Array:
    """``Namespace.normalize`` over a column of physical addresses, without a Python object per row. A missing
    address references nothing and is dropped."""
    addresses = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    addresses = pc.drop_null(addresses.cast(pa.string()))
    addresses = pc.replace_substring_regex(addresses, pattern="^s3[an]://", replacement="s3://")
    relative = pc.invert(pc.match_substring(addresses, "://"))
    if pc.any(relative).as_py():
        joined = pc.binary_join_element_wise(ns.address(ns.prefix), pc.utf8_ltrim(addresses, characters="/"), "")
        addresses = pc.if_else(relative, joined, addresses)
    return addresses


def metarange_ranges(s3: Any, ns: Namespace, metarange_id: str) -> dict[str, int]:
    """The ranges of a metarange: id -> rows."""
    key = ns.metadata_key(metarange_id)
    table = read_lakelet_parquet(get_bytes(s3, ns.bucket, key), ["range_id", "count"], b"metarange", key)
    return dict(zip(table.column("range_id").to_pylist(), table.column("count").to_pylist()))


def distinct_ranges(s3: Any, ns: Namespace, metarange_ids: Sequence[str]) -> dict[str, int]:
    """The ranges of all of ``metarange_ids``, each once (commits share most of theirs): id -> rows."""
    seen: dict[str, int] = {}
    for ranges in read_concurrently(lambda metarange: metarange_ranges(s3, ns, metarange), metarange_ids):
        seen.update(ranges)
    return seen


def referenced_addresses(s3: Any, ns: Namespace, source: tuple[str, str]) -> pa.Array:
    """The addresses of one source, normalized: ``(SOURCE_RANGE, range id)`` or ``(SOURCE_STAGED, part
    location)``."""
    kind, name = source
    if kind == SOURCE_RANGE:
        key = ns.metadata_key(name)
        table = read_lakelet_parquet(get_bytes(s3, ns.bucket, key), ["physical_address"], b"range", key)
    else:
        table = pq.read_table(pa.BufferReader(get_bytes(s3, ns.bucket, ns.key_of(name))), columns=["address"])
    return normalize_addresses(ns, table.column(0))
