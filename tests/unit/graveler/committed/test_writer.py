"""Content-defined range boundaries: where ranges close, and that the cuts survive edits elsewhere."""

from __future__ import annotations

from itertools import accumulate

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chalicelib.adapters.memory import MemoryBlockStore
from chalicelib.graveler.committed import CommittedManager, RangeParams
from chalicelib.graveler.committed import format as parquet
from chalicelib.graveler.committed.columns import RangeColumns, metadata_json, row_estimate
from chalicelib.graveler.committed.fnv import fnv1a_64, fnv1a_64_many
from chalicelib.graveler.committed.storage import object_address
from chalicelib.graveler.committed.writer import RangeWriter, closes_range
from chalicelib.graveler.records import EMPTY_METARANGE, EntryRecord, RangeInfo

SMALL = RangeParams(max_range_bytes=1 << 30, min_range_bytes=0, raggedness=500)


def test_fnv1a_64_known_vectors():
    assert fnv1a_64(b"") == 0xCBF29CE484222325
    assert fnv1a_64(b"a") == 0xAF63DC4C8601EC8C
    assert fnv1a_64(b"foobar") == 0x85944171F73967E8


def _assert_content_defined(
    manager: CommittedManager, namespace: str, ranges: list[RangeInfo], params: RangeParams
) -> None:
    """Each range ends on a boundary (the last may end with the data) and holds no boundary before its end."""
    for position, info in enumerate(ranges):
        size = 0
        records = manager.range_records(namespace, info.id)
        for index, record in enumerate(records):
            entry = record.entry
            size += row_estimate(
                record.key,
                entry.physical_address,
                entry.etag,
                entry.content_type,
                metadata_json(entry.user_metadata),
            )
            last = index == len(records) - 1
            if not last or position < len(ranges) - 1:
                assert closes_range(record.key, size, params) == last, (info, index)
        assert size == info.estimated_size
        assert len(records) == info.count


def test_every_range_but_the_last_ends_on_a_boundary(blocks, kit):
    manager = CommittedManager(blocks, SMALL)
    records = kit.records(list(range(5000)))
    ranges = manager.ranges(kit.namespace, manager.write_metarange(kit.namespace, records))
    assert len(ranges) > 3
    _assert_content_defined(manager, kit.namespace, ranges, SMALL)
    assert sum(info.count for info in ranges) == len(records)
    hits = [r.key for r in records if fnv1a_64(r.key.encode()) % SMALL.raggedness == 0]
    assert [info.max_key for info in ranges[:-1]] == [k for k in hits if k != records[-1].key]


def test_max_size_splits_without_hash_hits(blocks, kit):
    params = RangeParams(max_range_bytes=4096, min_range_bytes=0, raggedness=1 << 62)
    manager = CommittedManager(blocks, params)
    ranges = manager.ranges(kit.namespace, manager.write_metarange(kit.namespace, kit.records(list(range(1000)))))
    assert len(ranges) > 10
    _assert_content_defined(manager, kit.namespace, ranges, params)
    assert all(info.estimated_size >= 4096 for info in ranges[:-1])


def test_min_size_suppresses_small_ranges(blocks, kit):
    params = RangeParams(max_range_bytes=1 << 30, min_range_bytes=20_000, raggedness=5)
    manager = CommittedManager(blocks, params)
    ranges = manager.ranges(kit.namespace, manager.write_metarange(kit.namespace, kit.records(list(range(3000)))))
    assert len(ranges) > 3
    _assert_content_defined(manager, kit.namespace, ranges, params)
    assert all(info.estimated_size >= 20_000 for info in ranges[:-1])


def test_stored_hashes_are_every_keys_whether_hashed_at_once_or_at_the_close(blocks, kit):
    # Rows below the minimum are hashed together when their range closes (vectorised above 64 rows), the rest as
    # they come; every stored hash must be its key's, in order, since later writes cut ranges by them.
    params = RangeParams(max_range_bytes=1 << 30, min_range_bytes=20_000, raggedness=7)
    manager = CommittedManager(blocks, params)
    records = kit.records(list(range(3000)))
    ranges = manager.ranges(kit.namespace, manager.write_metarange(kit.namespace, records))
    assert len(ranges) > 3
    stored: list[int] = []
    for info in ranges:
        data = blocks.inner.blobs[object_address(kit.namespace, info.id)]
        stored.extend(parquet.decode_range(data).hashes.to_pylist())
    assert stored == [fnv1a_64(r.key.encode()) for r in records]
    _assert_content_defined(manager, kit.namespace, ranges, params)


def test_boundaries_are_stable_under_an_early_insert(blocks, kit):
    manager = CommittedManager(blocks, SMALL)
    numbers = list(range(0, 100_000, 2))  # 50,000 keys, leaving odd numbers free to insert
    base = manager.ranges(kit.namespace, manager.write_metarange(kit.namespace, kit.records(numbers)))
    inserted = manager.ranges(kit.namespace, manager.write_metarange(kit.namespace, kit.records(numbers + [301])))
    assert len(base) > 50
    old_ids = {info.id for info in base}
    new_ids = {info.id for info in inserted}
    assert len(old_ids - new_ids) in (1, 2)
    assert len(new_ids - old_ids) in (1, 2)
    assert len(old_ids & new_ids) >= len(base) - 2


def test_no_records_is_the_empty_metarange_and_writes_nothing(blocks, kit):
    manager = CommittedManager(blocks)
    assert manager.write_metarange(kit.namespace, []) == EMPTY_METARANGE
    assert not blocks.puts
    assert manager.ranges(kit.namespace, EMPTY_METARANGE) == []
    assert list(manager.iterate(kit.namespace, EMPTY_METARANGE)) == []
    assert manager.get(kit.namespace, EMPTY_METARANGE, kit.key(1)) is None
    assert not blocks.gets


@pytest.mark.parametrize("duplicate", [False, True])
def test_unsorted_or_duplicate_records_are_refused(blocks, kit, duplicate):
    records = kit.records([1, 2, 3])
    bad = records + [records[-1]] if duplicate else [records[1], records[0], records[2]]
    with pytest.raises(ValueError, match="out of order"):
        CommittedManager(blocks).write_metarange(kit.namespace, bad)


def test_params_are_validated():
    with pytest.raises(ValueError):
        RangeParams(max_range_bytes=100, min_range_bytes=10, raggedness=0)
    with pytest.raises(ValueError):
        RangeParams(max_range_bytes=10, min_range_bytes=20, raggedness=5)


def test_written_entries_keep_user_metadata_independent(blocks, kit):
    entry = kit.entry(1, user_metadata={"a": "1"})
    manager = CommittedManager(blocks)
    metarange = manager.write_metarange(kit.namespace, [EntryRecord(kit.key(1), entry)])
    first = manager.get(kit.namespace, metarange, kit.key(1))
    assert first is not None
    first.user_metadata["a"] = "mutated"  # a caller mutating its copy must not poison the cache
    assert manager.get(kit.namespace, metarange, kit.key(1)) == entry


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.one_of(st.binary(max_size=3), st.binary(min_size=9, max_size=9), st.binary(min_size=20, max_size=20)),
        max_size=400,
    )
)
def test_bulk_fnv_equals_one_at_a_time(items):
    assert fnv1a_64_many(items) == [fnv1a_64(item) for item in items]


def test_bulk_fnv_on_many_keys_of_one_length():
    items = [f"k/{n:06d}".encode() for n in range(1000)]  # several full lane chunks and a partial one
    assert fnv1a_64_many(items) == [fnv1a_64(item) for item in items]


@settings(max_examples=60, deadline=None)
@given(
    numbers=st.sets(st.integers(0, 5000), max_size=300),
    pieces=st.lists(st.tuples(st.integers(1, 40), st.booleans()), min_size=1, max_size=40),
    params=st.builds(
        RangeParams,
        max_range_bytes=st.sampled_from([500, 3000, 1 << 30]),
        min_range_bytes=st.sampled_from([0, 200]),
        raggedness=st.integers(1, 9),
    ),
)
def test_copied_runs_and_new_rows_cut_as_row_by_row(kit, numbers, pieces, params):
    """Rows copied from a stored range in runs of any length (bisections over its running sizes and hash hits),
    mixed with new entries, close ranges exactly where a row-by-row check does."""
    records = kit.records(sorted(numbers))
    expected: list[tuple[str, int]] = []
    size = 0
    for index, record in enumerate(records):
        entry = record.entry
        size += row_estimate(
            record.key, entry.physical_address, entry.etag, entry.content_type, metadata_json(entry.user_metadata)
        )
        if closes_range(record.key, size, params) or index == len(records) - 1:
            expected.append((record.key, size))
            size = 0
    blocks = MemoryBlockStore()
    whole = CommittedManager(blocks, RangeParams(max_range_bytes=1 << 40, min_range_bytes=0, raggedness=1 << 62))
    stored = whole.ranges(kit.namespace, whole.write_metarange(kit.namespace, records))
    manager = CommittedManager(blocks, params)
    writer = RangeWriter(manager.storage, kit.namespace, params)
    source = manager.storage.range(kit.namespace, stored[0].id) if stored else None
    position, turn = 0, 0
    while position < len(records):
        length, copy = pieces[turn % len(pieces)]
        turn += 1
        stop = min(len(records), position + length)
        if copy:
            assert source is not None
            writer.add_rows(source, position, stop)
        else:
            for record in records[position:stop]:
                writer.add_entry(record.key, record.entry)
        position = stop
    ranges = writer.finish()
    assert [(info.max_key, info.estimated_size) for info in ranges] == expected
    assert [r for info in ranges for r in manager.range_records(kit.namespace, info.id)] == records


@pytest.mark.parametrize("text", ["ascii", "ü", "😀/é"], ids=["ascii", "two-byte", "four-byte"])
@pytest.mark.parametrize("column", ["key", "physical_address", "etag", "content_type", "user_metadata"])
def test_running_sizes_count_code_points_whatever_the_column_holds(kit, text, column):
    """Sizes count code points, as len() does: a column that is all ASCII takes them from its offsets, any other
    from its values. Slices and many-chunk columns (a range being written) give the same counts."""
    entries = [kit.entry(n) for n in range(40)]
    values = {
        "key": [f"k/{n:03d}" for n in range(40)],
        "physical_address": [e.physical_address for e in entries],
        "etag": [e.etag for e in entries],
        "content_type": [e.content_type for e in entries],
        "user_metadata": ["{}"] * 40,
    }
    values[column] = [f"{v}{text * (n % 3)}" for n, v in enumerate(values[column])]
    rows = RangeColumns.from_lists(
        values["key"],
        values["physical_address"],
        [e.size for e in entries],
        values["etag"],
        [e.mtime for e in entries],
        values["content_type"],
        values["user_metadata"],
        [bytes(32)] * 40,
    )
    estimates = [
        row_estimate(*(values[c][n] for c in ("key", "physical_address", "etag", "content_type", "user_metadata")))
        for n in range(40)
    ]
    running = list(accumulate(estimates))
    assert list(rows.running_sizes()) == running
    assert list(rows.slice(7, 30).running_sizes()) == [r - running[6] for r in running[7:30]]
    chunked = RangeColumns(pa.concat_tables([rows.table.slice(0, 11), rows.table.slice(11)]), rows.hashes)
    assert chunked.table.column(0).num_chunks == 2
    assert list(chunked.running_sizes()) == running
