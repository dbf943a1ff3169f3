"""Parquet round trips, and the files are plain Parquet that any reader understands."""

from __future__ import annotations

import io
import json

import pyarrow as pa
import pyarrow.parquet as pq

from chalicelib.graveler.committed import CommittedManager
from chalicelib.graveler.committed import format as parquet
from chalicelib.graveler.committed.columns import RangeColumns, metadata_json
from chalicelib.graveler.committed.storage import object_address
from chalicelib.graveler.identity import entry_identity
from chalicelib.graveler.records import Entry, EntryRecord, Key, RangeID, RangeInfo


def _varied_records() -> list[EntryRecord]:
    entries = {
        "a/plain.txt": Entry("s3://b/ns/data/g1/x1", 0, "d41d8cd98f00b204e9800998ecf8427e", 1, "text/plain", {}),
        "a/with-meta.csv": Entry(
            "s3://b/ns/data/g1/x2", 12345678901, "etag-2", 1_700_000_000, "text/csv",
            {"zeta": "last", "alpha": "first", "mid": "ü ∑ 😀", "empty": ""},
        ),
        "b/日本語/ファイル.json": Entry("s3://b/ns/data/g2/x3", 5, "e3", 2, "application/json", {"k": "v"}),
        "c/emoji-😀-key": Entry("s3://b/ns/data/g2/x4", 7, "e4", 3, "", {}),
        "c/space and\ttab": Entry("s3://b/ns/data/g3/x5", 9, "e5", 4, "application/octet-stream", {"a": "1"}),
    }
    return [EntryRecord(Key(k), v) for k, v in sorted(entries.items())]


def test_round_trip_through_manager_keeps_every_field(blocks, kit):
    records = _varied_records()
    manager = CommittedManager(blocks)
    metarange = manager.write_metarange(kit.namespace, records)

    (info,) = manager.ranges(kit.namespace, metarange)
    fresh = CommittedManager(blocks)  # nothing cached: decode what was stored
    assert fresh.range_records(kit.namespace, info.id) == records
    assert list(fresh.iterate(kit.namespace, metarange)) == records
    assert (info.min_key, info.max_key, info.count) == (records[0].key, records[-1].key, len(records))


def test_columns_round_trip_in_format_module():
    records = _varied_records()
    columns = RangeColumns(
        keys=[r.key for r in records],
        addresses=[r.entry.physical_address for r in records],
        sizes=[r.entry.size for r in records],
        etags=[r.entry.etag for r in records],
        mtimes=[r.entry.mtime for r in records],
        content_types=[r.entry.content_type for r in records],
        metadata=[metadata_json(r.entry.user_metadata) for r in records],
        identities=[entry_identity(r.entry) for r in records],
    )
    decoded = parquet.decode_range(parquet.encode_range(columns))
    assert decoded == columns
    assert [decoded.record_at(i) for i in range(len(decoded))] == records


def test_range_parquet_is_plain_parquet(blocks, kit):
    records = _varied_records()
    manager = CommittedManager(blocks)
    metarange = manager.write_metarange(kit.namespace, records)
    (info,) = manager.ranges(kit.namespace, metarange)

    table = pq.read_table(io.BytesIO(blocks.inner.blobs[object_address(kit.namespace, info.id)]))
    assert table.column_names == [
        "key", "physical_address", "size", "etag", "mtime", "content_type", "user_metadata", "identity",
    ]
    assert table.schema.field("key").type == pa.string()
    assert table.schema.field("size").type == pa.int64()
    assert table.schema.field("identity").type == pa.binary()
    rows = table.to_pylist()
    assert [row["key"] for row in rows] == [r.key for r in records]
    with_meta = rows[[r.key for r in records].index("a/with-meta.csv")]
    # Sorted keys, compact separators, non-ASCII kept as is.
    assert with_meta["user_metadata"] == '{"alpha":"first","empty":"","mid":"ü ∑ 😀","zeta":"last"}'
    assert json.loads(with_meta["user_metadata"]) == records[1].entry.user_metadata
    assert with_meta["identity"] == entry_identity(records[1].entry)
    assert rows[0]["user_metadata"] == "{}"


def test_metarange_parquet_is_plain_parquet(blocks, kit):
    manager = CommittedManager(blocks)
    metarange = manager.write_metarange(kit.namespace, _varied_records())
    table = pq.read_table(io.BytesIO(blocks.inner.blobs[object_address(kit.namespace, metarange)]))
    assert table.column_names == ["range_id", "min_key", "max_key", "count", "estimated_size"]
    assert table.schema.field("range_id").type == pa.string()
    (info,) = manager.ranges(kit.namespace, metarange)
    assert table.to_pylist() == [
        {
            "range_id": info.id,
            "min_key": info.min_key,
            "max_key": info.max_key,
            "count": info.count,
            "estimated_size": info.estimated_size,
        }
    ]


def test_metarange_round_trip():
    ranges = [
        RangeInfo(RangeID("a" * 64), Key("a"), Key("b/ü"), 2, 300),
        RangeInfo(RangeID("b" * 64), Key("c"), Key("c"), 1, 99),
    ]
    assert parquet.decode_metarange(parquet.encode_metarange(ranges)) == ranges
