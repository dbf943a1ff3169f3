"""Reads: get, iterate from a key without touching earlier ranges, caching, threads, damaged storage."""

from __future__ import annotations

import threading

import pytest

from chalicelib.graveler.committed import CommittedManager, RangeParams
from chalicelib.graveler.committed.columns import RangeColumns
from chalicelib.graveler.committed.storage import object_address
from chalicelib.graveler.errors import DataMissing, StorageError

PARAMS = RangeParams(max_range_bytes=1 << 30, min_range_bytes=0, raggedness=40)


@pytest.fixture
def written(blocks, kit):
    records = kit.records(list(range(0, 4000, 2)))
    metarange = CommittedManager(blocks, PARAMS).write_metarange(kit.namespace, records)
    blocks.reset_counts()
    manager = CommittedManager(blocks, PARAMS)  # cold cache
    ranges = manager.ranges(kit.namespace, metarange)
    assert len(ranges) > 10
    return manager, metarange, records, ranges


def test_get_present_keys_reads_one_range_each(written, blocks, kit):
    manager, metarange, records, ranges = written
    for record in records[::97] + [records[0], records[-1]]:
        assert manager.get(kit.namespace, metarange, record.key) == record.entry
    for info in ranges[:5]:
        blocks.reset_counts()
        fresh = CommittedManager(blocks, PARAMS)
        assert fresh.get(kit.namespace, metarange, info.max_key) is not None
        assert set(blocks.gets) == {object_address(kit.namespace, i) for i in (metarange, info.id)}


def test_get_absent_keys(written, blocks, kit):
    manager, metarange, _, ranges = written
    gap = ranges[3].max_key + "\x00"  # after one range's last key, before the next one's first
    assert gap < ranges[4].min_key
    blocks.reset_counts()
    for key in ["", "a", "data/part=0/file-0000001.parquet", gap, "zzz", kit.key(1), kit.key(3999)]:
        assert manager.get(kit.namespace, metarange, key) is None
    # Keys outside every range's bounds are answered from the metarange alone.
    assert object_address(kit.namespace, ranges[4].id) not in blocks.gets


def test_iterate_everything_in_order(written, kit):
    manager, metarange, records, _ = written
    assert list(manager.iterate(kit.namespace, metarange)) == records


def test_iterate_from_key_skips_earlier_ranges_unread(written, blocks, kit):
    manager, metarange, records, ranges = written
    start = len(ranges) // 2
    from_key = records[[r.key for r in records].index(ranges[start].min_key) + 3].key
    blocks.reset_counts()

    got = list(manager.iterate(kit.namespace, metarange, from_key))

    assert got == [r for r in records if r.key >= from_key]
    read = {object_address(kit.namespace, info.id) for info in ranges[:start]}
    assert not read & set(blocks.gets)
    assert all(blocks.gets[object_address(kit.namespace, info.id)] == 1 for info in ranges[start:])


@pytest.mark.parametrize("from_key", ["", "\x00", "data/part=4/file-0000004.parquet.", "zz"])
def test_iterate_from_key_boundaries(written, kit, from_key):
    manager, metarange, records, _ = written
    assert list(manager.iterate(kit.namespace, metarange, from_key)) == [r for r in records if r.key >= from_key]


def test_iterate_is_lazy(written, blocks, kit):
    manager, metarange, records, ranges = written
    iterator = manager.iterate(kit.namespace, metarange)
    assert next(iterator) == records[0]
    assert not any(object_address(kit.namespace, info.id) in blocks.gets for info in ranges[1:])


def test_reads_are_cached(written, blocks, kit):
    manager, metarange, records, ranges = written
    list(manager.iterate(kit.namespace, metarange))
    first = sum(blocks.gets.values())
    assert first == len(ranges) + 1
    list(manager.iterate(kit.namespace, metarange))
    manager.get(kit.namespace, metarange, records[5].key)
    manager.range_records(kit.namespace, ranges[2].id)
    assert sum(blocks.gets.values()) == first


def test_cache_is_bounded(written, blocks, kit):
    _, metarange, _, ranges = written
    manager = CommittedManager(blocks, PARAMS, cache_size=2)
    list(manager.iterate(kit.namespace, metarange))
    blocks.reset_counts()
    list(manager.iterate(kit.namespace, metarange))
    assert sum(blocks.gets.values()) == len(ranges)  # the metarange stayed (most recent); ranges were evicted


def test_concurrent_readers_agree(written, kit):
    manager, metarange, records, _ = written
    results: list[bool] = []
    errors: list[BaseException] = []

    def read() -> None:
        try:
            results.append(list(manager.iterate(kit.namespace, metarange)) == records)
            results.append(all(manager.get(kit.namespace, metarange, r.key) == r.entry for r in records[::50]))
        except BaseException as e:  # surfaced below: a thread's exception would otherwise vanish
            errors.append(e)

    threads = [threading.Thread(target=read) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors and len(results) == 16 and all(results)


def test_missing_or_damaged_objects_raise_storage_error(written, blocks, kit):
    _, metarange, _, ranges = written
    # Missing is permanent (DataMissing, 500: never "retry later"); unreadable stays a StorageError.
    with pytest.raises(DataMissing, match="metarange"):
        CommittedManager(blocks).ranges(kit.namespace, "f" * 64)  # type: ignore[arg-type]
    blocks.inner.delete(object_address(kit.namespace, ranges[0].id))
    with pytest.raises(DataMissing, match="range"):
        CommittedManager(blocks).range_records(kit.namespace, ranges[0].id)
    blocks.inner.put(object_address(kit.namespace, ranges[1].id), b"not parquet")
    with pytest.raises(StorageError, match="unreadable"):
        CommittedManager(blocks).range_records(kit.namespace, ranges[1].id)
    # A metarange file where a range is expected is refused, not misread.
    with pytest.raises(StorageError):
        CommittedManager(blocks).range_records(kit.namespace, metarange)  # type: ignore[arg-type]


def test_namespace_trailing_slash_is_the_same_place(blocks, kit):
    manager = CommittedManager(blocks)
    metarange = manager.write_metarange(kit.namespace + "/", kit.records([1, 2]))
    assert len(list(CommittedManager(blocks).iterate(kit.namespace, metarange))) == 2


def test_cache_is_bounded_by_memory(written, blocks, kit):
    _, metarange, _, ranges = written
    reader = CommittedManager(blocks)
    biggest = max(reader.storage.range(kit.namespace, info.id).memory_estimate() for info in ranges)
    manager = CommittedManager(blocks, PARAMS, cache_bytes=biggest)  # room for about one range
    list(manager.iterate(kit.namespace, metarange))
    assert manager.storage.cached_range_bytes <= biggest
    blocks.reset_counts()
    list(manager.iterate(kit.namespace, metarange))
    assert sum(blocks.gets.values()) >= len(ranges) - 1
    # With room for them all, a second walk reads nothing again.
    roomy = CommittedManager(blocks, PARAMS)
    list(roomy.iterate(kit.namespace, metarange))
    blocks.reset_counts()
    list(roomy.iterate(kit.namespace, metarange))
    assert sum(blocks.gets.values()) == 0


def _columns(rows: int) -> RangeColumns:
    keys = [f"k/{i:06d}" for i in range(rows)]
    return RangeColumns.from_lists(
        keys, keys, [1] * rows, ["e"] * rows, [0] * rows, ["t"] * rows, [""] * rows, [b"i" * 32] * rows
    )


def test_memory_estimate_counts_buffers_and_rows():
    small, large = _columns(10), _columns(1000)
    assert small.memory_estimate() >= small.table.nbytes + 10 * 100
    assert large.memory_estimate() > 50 * small.memory_estimate()
