"""apply: the per-key rules, reuse by reference, and that it reads and writes only what the changes touch."""

from __future__ import annotations

import dataclasses

import pytest

from chalicelib.graveler.committed import ApplyResult, CommittedManager, RangeParams
from chalicelib.graveler.committed.fnv import fnv1a_64
from chalicelib.graveler.committed.storage import object_address
from chalicelib.graveler.records import EMPTY_METARANGE, EntryRecord, StagedEntry

SMALL = RangeParams(max_range_bytes=1 << 30, min_range_bytes=0, raggedness=50)


def _listing(manager: CommittedManager, namespace: str, metarange: str) -> dict[str, object]:
    return {r.key: r.entry for r in manager.iterate(namespace, metarange)}  # type: ignore[arg-type]


@pytest.fixture
def base(blocks, kit):
    """A base of 1,000 even-numbered keys (odd numbers are free to add) over many ranges."""
    manager = CommittedManager(blocks, SMALL)
    records = kit.records(list(range(0, 2000, 2)))
    metarange = manager.write_metarange(kit.namespace, records)
    assert len(manager.ranges(kit.namespace, metarange)) > 5
    blocks.reset_counts()
    return manager, metarange, {r.key: r.entry for r in records}


def _check_canonical(manager: CommittedManager, namespace: str, result: ApplyResult) -> None:
    """The applied metarange is exactly the one a fresh write of the same listing gives."""
    listing = [EntryRecord(k, v) for k, v in _listing(manager, namespace, result.metarange_id).items()]
    assert manager.write_metarange(namespace, listing) == result.metarange_id


def test_add_new_keys_everywhere(base, kit):
    manager, metarange, model = base
    added = {kit.key(n): kit.entry(n) for n in (1, 999, 1001, 5001)}  # odd keys: inside, between, beyond
    changes = [StagedEntry(k, v) for k, v in sorted(added.items())]
    result = manager.apply(kit.namespace, metarange, changes)
    assert (result.added, result.changed, result.removed, result.changes) == (4, 0, 0, 4)
    assert _listing(manager, kit.namespace, result.metarange_id) == {**model, **added}
    _check_canonical(manager, kit.namespace, result)


def test_changed_identity_takes_the_new_value(base, kit):
    manager, metarange, model = base
    new = kit.entry(10, version=1)
    result = manager.apply(kit.namespace, metarange, [StagedEntry(kit.key(10), new)])
    assert (result.added, result.changed, result.removed) == (0, 1, 0)
    assert manager.get(kit.namespace, result.metarange_id, kit.key(10)) == new
    assert _listing(manager, kit.namespace, result.metarange_id) == {**model, kit.key(10): new}


def test_metadata_or_content_type_change_is_a_change(base, kit):
    manager, metarange, model = base
    changes = [
        StagedEntry(kit.key(10), dataclasses.replace(model[kit.key(10)], user_metadata={"k": "v"})),
        StagedEntry(kit.key(12), dataclasses.replace(model[kit.key(12)], content_type="text/plain")),
    ]
    result = manager.apply(kit.namespace, metarange, sorted(changes, key=lambda c: c.key))
    assert result.changed == 2


def test_same_identity_keeps_the_base_entry_and_is_not_counted(base, blocks, kit):
    manager, metarange, model = base
    old = model[kit.key(10)]
    reuploaded = dataclasses.replace(old, physical_address="s3://bucket/repos/one/data/new/place", mtime=9)
    result = manager.apply(kit.namespace, metarange, [StagedEntry(kit.key(10), reuploaded)])
    assert (result.changes, result.metarange_id) == (0, metarange)
    assert manager.get(kit.namespace, result.metarange_id, kit.key(10)) == old
    assert not blocks.puts  # the rewritten range has the base's id, and so does the metarange


def test_tombstone_of_an_existing_key_removes_it(base, kit):
    manager, metarange, model = base
    result = manager.apply(kit.namespace, metarange, [StagedEntry(kit.key(10), None)])
    assert (result.added, result.changed, result.removed) == (0, 0, 1)
    assert manager.get(kit.namespace, result.metarange_id, kit.key(10)) is None
    assert _listing(manager, kit.namespace, result.metarange_id) == {k: v for k, v in model.items() if k != kit.key(10)}
    _check_canonical(manager, kit.namespace, result)


def test_tombstones_of_absent_keys_are_ignored(base, blocks, kit):
    manager, metarange, _ = base
    changes = [StagedEntry(kit.key(n), None) for n in (3, 5, 1001, 7777)]  # inside, between, beyond
    result = manager.apply(kit.namespace, metarange, sorted(changes, key=lambda c: c.key))
    assert (result.changes, result.metarange_id) == (0, metarange)
    assert not blocks.puts


def test_changes_beyond_the_last_range_are_appended(base, kit):
    manager, metarange, model = base
    last = manager.ranges(kit.namespace, metarange)[-1]
    tail = {f"{last.max_key}~{i:03d}": kit.entry(90_000 + i) for i in range(200)}
    result = manager.apply(kit.namespace, metarange, [StagedEntry(k, v) for k, v in sorted(tail.items())])
    assert result.added == 200
    assert _listing(manager, kit.namespace, result.metarange_id) == {**model, **tail}
    assert manager.ranges(kit.namespace, result.metarange_id)[0] == manager.ranges(kit.namespace, metarange)[0]
    _check_canonical(manager, kit.namespace, result)


def test_apply_on_the_empty_metarange(blocks, kit):
    manager = CommittedManager(blocks, SMALL)
    records = kit.records(list(range(300)))
    changes = [StagedEntry(r.key, r.entry) for r in records] + [StagedEntry("zz/absent", None)]
    result = manager.apply(kit.namespace, EMPTY_METARANGE, changes)
    assert (result.added, result.changed, result.removed) == (300, 0, 0)
    assert list(manager.iterate(kit.namespace, result.metarange_id)) == records
    assert result.metarange_id == manager.write_metarange(kit.namespace, records)


def test_nothing_on_the_empty_metarange_stays_empty(blocks, kit):
    manager = CommittedManager(blocks, SMALL)
    result = manager.apply(kit.namespace, EMPTY_METARANGE, [StagedEntry(kit.key(1), None)])
    assert result == ApplyResult(EMPTY_METARANGE, 0, 0, 0)
    assert not blocks.puts and not blocks.gets


def test_deleting_every_key_gives_the_empty_metarange(base, blocks, kit):
    manager, metarange, model = base
    result = manager.apply(kit.namespace, metarange, [StagedEntry(k, None) for k in sorted(model)])
    assert result == ApplyResult(EMPTY_METARANGE, 0, 0, len(model))
    assert list(manager.iterate(kit.namespace, result.metarange_id)) == []
    assert not blocks.puts


def test_unsorted_changes_are_refused(base, kit):
    manager, metarange, _ = base
    changes = [StagedEntry(kit.key(3), kit.entry(3)), StagedEntry(kit.key(1), kit.entry(1))]
    with pytest.raises(ValueError, match="out of order"):
        manager.apply(kit.namespace, metarange, changes)


# --- The proof: a commit on a big branch reads and writes only the ranges its changes touch. ---------------

PROOF = RangeParams(max_range_bytes=1 << 30, min_range_bytes=0, raggedness=500)


@pytest.fixture(scope="module")
def big(kit):
    """50,000 even-numbered keys over ~100 ranges, written once for the module."""
    store = kit.CountingBlockStore()
    writer = CommittedManager(store, PROOF)
    metarange = writer.write_metarange(kit.namespace, kit.records(list(range(0, 100_000, 2))))
    return store, metarange


def _fresh(big):
    store, metarange = big
    store.reset_counts()
    return CommittedManager(store, PROOF), store, metarange  # a cold cache: every read shows in the counts


def _addresses(namespace: str, ids) -> set[str]:
    return {object_address(namespace, i) for i in ids}


def _range_index(ranges, key: str) -> int:
    return next(i for i, info in enumerate(ranges) if info.min_key <= key <= info.max_key)


def test_proof_one_changed_key_touches_one_range(big, kit):
    manager, store, metarange = _fresh(big)
    ranges = manager.ranges(kit.namespace, metarange)
    assert len(ranges) >= 50
    key = kit.key(51_234)
    touched = _range_index(ranges, key)
    assert 0 < touched < len(ranges) - 1

    result = manager.apply(kit.namespace, metarange, [StagedEntry(key, kit.entry(51_234, version=3))])

    assert (result.added, result.changed, result.removed) == (0, 1, 0)
    new_ranges = manager.ranges(kit.namespace, result.metarange_id)
    assert len(new_ranges) == len(ranges)
    for index, (old, new) in enumerate(zip(ranges, new_ranges, strict=True)):
        if index == touched:
            assert new.id != old.id and (new.min_key, new.max_key, new.count) == (old.min_key, old.max_key, old.count)
        else:
            assert new == old  # reused by reference: the very same range
    assert dict(store.gets) == dict.fromkeys(_addresses(kit.namespace, [metarange, ranges[touched].id]), 1)
    assert dict(store.puts) == dict.fromkeys(
        _addresses(kit.namespace, [result.metarange_id, new_ranges[touched].id]), 1
    )
    assert manager.get(kit.namespace, result.metarange_id, key) == kit.entry(51_234, version=3)


def test_proof_deleting_a_boundary_key_rewrites_only_the_two_ranges_around_it(big, kit):
    manager, store, metarange = _fresh(big)
    ranges = manager.ranges(kit.namespace, metarange)
    touched = len(ranges) // 2
    boundary_key = ranges[touched].max_key

    result = manager.apply(kit.namespace, metarange, [StagedEntry(boundary_key, None)])

    assert result.removed == 1
    new_ranges = manager.ranges(kit.namespace, result.metarange_id)
    # The two ranges around the vanished boundary merge into one; every other range is reused as is.
    assert new_ranges[:touched] == ranges[:touched]
    assert new_ranges[touched + 1 :] == ranges[touched + 2 :]
    merged = new_ranges[touched]
    assert (merged.min_key, merged.max_key) == (ranges[touched].min_key, ranges[touched + 1].max_key)
    assert merged.count == ranges[touched].count + ranges[touched + 1].count - 1
    read = _addresses(kit.namespace, [metarange, ranges[touched].id, ranges[touched + 1].id])
    assert dict(store.gets) == dict.fromkeys(read, 1)
    assert dict(store.puts) == dict.fromkeys(_addresses(kit.namespace, [result.metarange_id, merged.id]), 1)


def test_proof_adding_a_boundary_key_splits_only_its_range(big, kit):
    manager, store, metarange = _fresh(big)
    ranges = manager.ranges(kit.namespace, metarange)
    # A new key sorting right after an existing one (so inside a range) whose hash makes it a boundary.
    key = next(
        candidate
        for n in range(40_000, 100_000, 2)
        if fnv1a_64((candidate := kit.key(n) + ".v2").encode()) % PROOF.raggedness == 0
        and candidate < ranges[_range_index(ranges, kit.key(n))].max_key
    )
    touched = _range_index(ranges, key)

    result = manager.apply(kit.namespace, metarange, [StagedEntry(key, kit.entry(7))])

    new_ranges = manager.ranges(kit.namespace, result.metarange_id)
    assert new_ranges[:touched] == ranges[:touched]
    assert new_ranges[touched + 2 :] == ranges[touched + 1 :]
    left, right = new_ranges[touched], new_ranges[touched + 1]
    assert (left.min_key, left.max_key, right.max_key) == (ranges[touched].min_key, key, ranges[touched].max_key)
    assert dict(store.gets) == dict.fromkeys(_addresses(kit.namespace, [metarange, ranges[touched].id]), 1)
    assert dict(store.puts) == dict.fromkeys(_addresses(kit.namespace, [result.metarange_id, left.id, right.id]), 1)
