"""apply against a brute-force dict model, on random bases, changes and range parameters."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chalicelib.adapters.memory import MemoryBlockStore
from chalicelib.graveler.committed import CommittedManager, RangeParams
from chalicelib.graveler.committed import apply as apply_module
from chalicelib.graveler.identity import entry_identity
from chalicelib.graveler.records import Entry, EntryRecord, Key, StagedEntry

# Short keys from a small alphabet so bases and changes collide often, including unicode and prefixes.
keys = st.text(alphabet="ab/é😀", min_size=1, max_size=5)

# What a change does to a key: delete it, stage new content, or re-stage the same content elsewhere.
actions = st.sampled_from(["delete", "new", "same"])

params = st.builds(
    RangeParams,
    max_range_bytes=st.sampled_from([300, 2_000, 1 << 30]),
    min_range_bytes=st.sampled_from([0, 150]),
    raggedness=st.integers(1, 6),
)


def _entry(key: str, version: int) -> Entry:
    return Entry(
        physical_address=f"s3://b/ns/data/{version}/{key}",
        size=len(key.encode()) + version,
        etag=f"etag-{version}",
        mtime=version,
        content_type="text/plain" if version % 2 else "application/octet-stream",
        user_metadata={"v": str(version)} if version % 3 == 0 else {},
    )


def _apply_model(base: dict[str, Entry], changes: list[StagedEntry]) -> tuple[dict[str, Entry], int, int, int]:
    result = dict(base)
    added = changed = removed = 0
    for change in changes:
        old = base.get(change.key)
        if change.value is None:
            if old is not None:
                del result[change.key]
                removed += 1
        elif old is None:
            result[change.key] = change.value
            added += 1
        elif entry_identity(old) != entry_identity(change.value):
            result[change.key] = change.value
            changed += 1
    return result, added, changed, removed


def _changes(base: dict[str, Entry], plan: dict[str, tuple[str, int]]) -> list[StagedEntry]:
    staged = []
    for key, (action, version) in sorted(plan.items()):
        if action == "delete":
            staged.append(StagedEntry(Key(key), None))
        elif action == "same" and key in base:
            moved = dataclasses.replace(base[key], physical_address=f"s3://b/ns/data/moved/{key}", mtime=10**9)
            staged.append(StagedEntry(Key(key), moved))
        else:
            staged.append(StagedEntry(Key(key), _entry(key, version)))
    return staged


def _records(listing: dict[str, Entry]) -> list[EntryRecord]:
    return [EntryRecord(Key(k), v) for k, v in sorted(listing.items())]


# How a range entered by changes is looked up: straight from its Arrow buffers (what a spread commit does, a few
# changes per range) or through the Python key and identity lists (what many changes in one range switch to).
LOOKUPS = {"arrow buffers": 0, "python lists": 10**9}


@pytest.mark.parametrize("list_after", LOOKUPS.values(), ids=LOOKUPS.keys())
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    base_keys=st.dictionaries(keys, st.integers(0, 4), max_size=60),
    rounds=st.lists(st.dictionaries(keys, st.tuples(actions, st.integers(5, 9)), max_size=25), min_size=1, max_size=3),
    range_params=params,
)
def test_apply_matches_the_dict_model(list_after, base_keys, rounds, range_params):
    previous, apply_module._LIST_AFTER = apply_module._LIST_AFTER, list_after
    try:
        _check_rounds(base_keys, rounds, range_params)
    finally:
        apply_module._LIST_AFTER = previous


def _check_rounds(base_keys, rounds, range_params):
    namespace = "s3://bucket/model"
    manager = CommittedManager(MemoryBlockStore(), range_params)
    model = {k: _entry(k, v) for k, v in base_keys.items()}
    metarange = manager.write_metarange(namespace, _records(model))

    for plan in rounds:
        changes = _changes(model, plan)
        expected, added, changed, removed = _apply_model(model, changes)

        result = manager.apply(namespace, metarange, changes)

        assert (result.added, result.changed, result.removed) == (added, changed, removed)
        assert list(manager.iterate(namespace, result.metarange_id)) == _records(expected)
        # Content addressing end to end: the same listing is the same metarange however it was reached.
        fresh = CommittedManager(MemoryBlockStore(), range_params)
        assert fresh.write_metarange(namespace, _records(expected)) == result.metarange_id
        ranges = manager.ranges(namespace, result.metarange_id)
        assert sum(info.count for info in ranges) == len(expected)
        for key in list(expected)[:5] + ["zz-absent"]:
            assert manager.get(namespace, result.metarange_id, Key(key)) == expected.get(key)
        model, metarange = expected, result.metarange_id
