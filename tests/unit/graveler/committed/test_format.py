"""Parquet round trips, and the files are plain Parquet that any reader understands."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from chalicelib.graveler.committed import CommittedManager
from chalicelib.graveler.committed import format as parquet
from chalicelib.graveler.committed.columns import RangeColumns, metadata_json
from chalicelib.graveler.committed.fnv import fnv1a_64
from chalicelib.graveler.committed.storage import object_address
from chalicelib.graveler.identity import entry_identity
from chalicelib.graveler.records import Entry, EntryRecord, Key, RangeID, RangeInfo, StagedEntry


def _varied_records() -> list[EntryRecord]:
    entries = {
        "a/plain.txt": Entry("s3://b/ns/data/g1/x1", 0, "d41d8cd98f00b204e9800998ecf8427e", 1, "text/plain", {}),
        "a/with-meta.csv": Entry(
            "s3://b/ns/data/g1/x2",
            12345678901,
            "etag-2",
            1_700_000_000,
            "text/csv",
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
    columns = RangeColumns.from_lists(
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
        "key",
        "physical_address",
        "size",
        "etag",
        "mtime",
        "content_type",
        "user_metadata",
        "identity",
        "key_hash",
    ]
    assert table.schema.metadata[b"lakelet.format_version"] == b"1"
    assert table.schema.metadata[b"lakelet.key_hash"] == b"fnv1a-64"
    assert table.schema.field("key_hash").type == pa.uint64()
    assert table.column("key_hash").to_pylist() == [fnv1a_64(r.key.encode()) for r in records]
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


FIXTURES = Path(__file__).parent / "fixtures"
# Written by the range writer before ranges carried their key hashes (eight columns, no key_hash).
V1_RANGE = FIXTURES / "range-v1-ff80e2710da625576a8973299ece631be44f18cfd0b820401b8f9417b91843b7.parquet"


def test_a_range_of_the_first_layout_reads_and_keeps_its_id(blocks, kit):
    rid = RangeID(V1_RANGE.name.removeprefix("range-v1-").removesuffix(".parquet"))
    data = V1_RANGE.read_bytes()
    assert "key_hash" not in pq.read_table(io.BytesIO(data)).column_names
    blocks.put(object_address(kit.namespace, rid), data)
    manager = CommittedManager(blocks)
    assert manager.range_records(kit.namespace, rid) == _varied_records()
    decoded = parquet.decode_range(data)
    # The hashes it lacks are computed, and rewriting it gives the same id (ids cover the rows, not the layout).
    assert decoded.hashes.to_pylist() == [fnv1a_64(r.key.encode()) for r in _varied_records()]
    assert manager.storage.write_range(kit.namespace, decoded) == rid
    # The same records written now get the same id, so commits keep their ids across the layouts.
    metarange = manager.write_metarange(kit.namespace, _varied_records())
    assert [info.id for info in manager.ranges(kit.namespace, metarange)] == [rid]


def test_a_range_of_the_first_layout_is_copied_into_a_new_range_with_hashes(blocks, kit):
    rid = RangeID(V1_RANGE.name.removeprefix("range-v1-").removesuffix(".parquet"))
    blocks.put(object_address(kit.namespace, rid), V1_RANGE.read_bytes())
    manager = CommittedManager(blocks)
    info = RangeInfo(rid, Key("a/plain.txt"), Key("c/space and\ttab"), 5, 549)
    metarange = manager.storage.write_metarange(kit.namespace, [info])
    result = manager.apply(kit.namespace, metarange, [StagedEntry(Key("b/new"), Entry("s3://b/ns/x", 1, "e", 1))])
    (written,) = manager.ranges(kit.namespace, result.metarange_id)
    table = pq.read_table(io.BytesIO(blocks.inner.blobs[object_address(kit.namespace, written.id)]))
    assert table.column("key_hash").to_pylist() == [fnv1a_64(k.encode()) for k in table.column("key").to_pylist()]
    assert table.num_rows == 6
