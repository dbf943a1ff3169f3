"""Range and metarange IDs are content hashes of the logical rows."""

from __future__ import annotations

import dataclasses
import hashlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chalicelib.adapters.memory import MemoryBlockStore
from chalicelib.graveler.committed import CommittedManager, RangeParams
from chalicelib.graveler.committed import apply as apply_module
from chalicelib.graveler.committed.columns import RangeColumns
from chalicelib.graveler.committed.ids import range_id, range_id_of_lists
from chalicelib.graveler.records import Entry, EntryRecord, Key, StagedEntry


def _write(records: list[EntryRecord], namespace: str) -> tuple[str, list[str]]:
    manager = CommittedManager(MemoryBlockStore())
    metarange = manager.write_metarange(namespace, records)
    return metarange, [info.id for info in manager.ranges(namespace, metarange)]


def test_same_records_give_same_ids_in_separate_stores(kit):
    records = kit.records(list(range(50)))
    first = _write(records, kit.namespace)
    second = _write(list(records), "s3://other-bucket/elsewhere/")
    assert first == second
    assert len(first[0]) == 64 and int(first[0], 16) >= 0


@pytest.mark.parametrize(
    "change",
    [
        {"size": 1},
        {"etag": "another-etag"},
        {"physical_address": "s3://bucket/repos/one/data/elsewhere"},
        {"mtime": 42},
        {"content_type": "text/plain"},
        {"user_metadata": {"k": "v"}},
    ],
)
def test_any_field_change_gives_a_different_id(kit, change):
    records = kit.records(list(range(50)))
    changed = list(records)
    changed[17] = EntryRecord(changed[17].key, dataclasses.replace(changed[17].entry, **change))
    base_metarange, base_ranges = _write(records, kit.namespace)
    new_metarange, new_ranges = _write(changed, kit.namespace)
    assert base_ranges != new_ranges
    assert base_metarange != new_metarange


def test_key_change_gives_a_different_id(kit):
    records = kit.records(list(range(50)))
    renamed = records[:-1] + [EntryRecord(records[-1].key + "x", records[-1].entry)]  # type: ignore[arg-type]
    assert _write(records, kit.namespace) != _write(renamed, kit.namespace)


def test_ranges_are_stored_under_their_id(blocks, kit):
    manager = CommittedManager(blocks)
    metarange = manager.write_metarange(kit.namespace, kit.records(list(range(10))))
    (info,) = manager.ranges(kit.namespace, metarange)
    assert set(blocks.inner.blobs) == {
        f"{kit.namespace}/_lakefs/{info.id}",
        f"{kit.namespace}/_lakefs/{metarange}",
    }


def test_ids_do_not_confuse_where_one_value_ends_and_the_next_begins():
    def columns(addresses: list[str]) -> RangeColumns:
        return RangeColumns.from_lists(
            keys=["k1", "k2"],
            addresses=addresses,
            sizes=[1, 2],
            etags=["e", "e"],
            mtimes=[0, 0],
            content_types=["", ""],
            metadata=["{}", "{}"],
            identities=[b"i", b"i"],
        )

    assert range_id(columns(["ab", "c"])) != range_id(columns(["a", "bc"]))
    assert range_id(columns(["ü", "c"])) != range_id(columns(["", "üc"]))
    assert range_id(columns(["ab", "c"])) == range_id(columns(["ab", "c"]))


@given(
    st.lists(
        st.tuples(
            st.text(max_size=12),
            st.text(max_size=30),
            st.integers(-(2**63), 2**63 - 1),
            st.text(max_size=8),
            st.binary(max_size=40),
        ),
        max_size=40,
        unique_by=lambda row: row[0],
    ),
    st.integers(0, 5),
)
@settings(max_examples=60, deadline=None)
def test_range_id_from_arrow_columns_is_the_row_by_row_serialization(rows, offset):
    rows = sorted(rows)
    lists = (
        [r[0] for r in rows],
        [r[1] for r in rows],
        [r[2] for r in rows],
        [r[3] for r in rows],
        [r[2] // 2 for r in rows],
        [r[3] + "/x" for r in rows],
        [r[1][:3] for r in rows],
        [r[4] for r in rows],
    )
    columns = RangeColumns.from_lists(*lists)
    assert range_id(columns) == range_id_of_lists(*lists)
    # Slices (non-zero array offsets) serialize their own rows only.
    start = min(offset, len(rows))
    part = columns.slice(start, len(rows))
    assert range_id(part) == range_id_of_lists(*(values[start:] for values in lists))


# A fixed listing (some keys and metadata not ASCII) and a fixed set of changes, with the ids the format gave
# when it was written: ids are content addresses shared by every stored commit, so a faster writer must still
# produce exactly these, through either way of looking up rows.
GOLDEN = RangeParams(max_range_bytes=40_000, min_range_bytes=4_000, raggedness=50)
GOLDEN_BASE = "444126b2c51c73b2eedaa6b229680fc48a8a02cb63b0545359371d326458f73c"
GOLDEN_APPLIED = "1911aa6bf66c204d7fe3ffbdc8640bde806b70fc9275b15a7abfc62cfb633f36"
GOLDEN_APPLIED_RANGES = "31413532d0e0042a3a9265d8522b9e82e55b18d471b41e9ea3b6d5d41878b105"


def _golden_entry(n: int, version: int = 0) -> Entry:
    return Entry(
        physical_address=f"s3://bucket/golden/data/{n:05d}-v{version}",
        size=100 + n + version,
        etag=f"{n:08x}{version:04x}",
        mtime=1_700_000_000 + n,
        content_type="text/plain" if n % 5 else "application/json",
        user_metadata={"author": "zoë", "n": str(n)} if n % 7 == 0 else {},
    )


def _golden_key(n: int) -> Key:
    return Key(f"{'é' if n % 11 == 0 else 'a'}/{n % 13:02d}/obj-{n:05d}")


@pytest.mark.parametrize("list_after", [0, 64, 10**9], ids=["arrow buffers", "default", "python lists"])
def test_ids_of_a_fixed_listing_and_commit_never_change(list_after, monkeypatch):
    monkeypatch.setattr(apply_module, "_LIST_AFTER", list_after)
    namespace = "s3://bucket/golden"
    records = sorted((EntryRecord(_golden_key(n), _golden_entry(n)) for n in range(3000)), key=lambda r: r.key)
    manager = CommittedManager(MemoryBlockStore(), GOLDEN)
    base = manager.write_metarange(namespace, records)
    changes = sorted(
        [StagedEntry(_golden_key(n), _golden_entry(n, 1)) for n in range(0, 3000, 37)]
        + [StagedEntry(_golden_key(n), None) for n in range(5, 3000, 101) if n % 37]
        + [StagedEntry(Key(_golden_key(n) + "/new"), _golden_entry(n, 2)) for n in range(3, 3000, 89)],
        key=lambda c: c.key,
    )
    result = manager.apply(namespace, base, changes)
    applied = [info.id for info in manager.ranges(namespace, result.metarange_id)]
    assert base == GOLDEN_BASE and len(manager.ranges(namespace, base)) == 42
    assert (result.added, result.changed, result.removed) == (34, 82, 29)
    assert result.metarange_id == GOLDEN_APPLIED
    assert hashlib.sha256(" ".join(applied).encode()).hexdigest() == GOLDEN_APPLIED_RANGES
