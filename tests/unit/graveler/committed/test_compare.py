"""Diff and three-way merge of metaranges: results against brute force, and the reads and writes they cost."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chalicelib.adapters.memory import MemoryBlockStore
from chalicelib.graveler.committed import CommittedManager, RangeParams, compare
from chalicelib.graveler.committed.mergetable import Action, Decision, action, decide
from chalicelib.graveler.committed.storage import object_address
from chalicelib.graveler.identity import entry_identity
from chalicelib.graveler.records import (
    EMPTY_METARANGE,
    DiffType,
    Entry,
    EntryRecord,
    Key,
    StagedEntry,
)

SMALL = RangeParams(max_range_bytes=1 << 30, min_range_bytes=0, raggedness=8)
PROOF = RangeParams(max_range_bytes=1 << 30, min_range_bytes=0, raggedness=500)


def _ident(entry: Entry | None) -> bytes | None:
    return None if entry is None else entry_identity(entry)


def _write(manager: CommittedManager, namespace: str, listing: dict[str, Entry]) -> str:
    return manager.write_metarange(namespace, [EntryRecord(Key(k), listing[k]) for k in sorted(listing)])


def _read(manager: CommittedManager, namespace: str, metarange: str) -> dict[str, Entry]:
    return {r.key: r.entry for r in manager.iterate(namespace, metarange)}  # type: ignore[arg-type]


def _source_wins(key: str, source: Action, dest: Action) -> Decision:
    return Decision.TAKE_SOURCE


def _fail(key: str, source: Action, dest: Action) -> None:
    return None


# --- The table itself ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("base", "source", "dest", "expected"),
    [
        (b"a", b"a", b"a", Decision.TAKE_SOURCE),  # unchanged
        (b"a", b"b", b"a", Decision.TAKE_SOURCE),  # changed on the source only
        (b"a", b"a", b"b", Decision.TAKE_DEST),  # changed on the destination only
        (b"a", b"b", b"b", Decision.TAKE_SOURCE),  # changed identically on both
        (b"a", None, b"a", Decision.TAKE_SOURCE),  # deleted on the source, unchanged on the destination
        (b"a", b"a", None, Decision.TAKE_DEST),  # deleted on the destination, unchanged on the source
        (b"a", None, None, Decision.TAKE_SOURCE),  # deleted on both
        (None, b"x", None, Decision.TAKE_SOURCE),  # added on the source
        (None, None, b"x", Decision.TAKE_DEST),  # added on the destination
        (None, b"x", b"x", Decision.TAKE_SOURCE),  # added identically on both
        (b"a", b"b", b"c", Decision.CONFLICT),  # changed differently
        (b"a", b"b", None, Decision.CONFLICT),  # changed on the source, deleted on the destination
        (b"a", None, b"c", Decision.CONFLICT),  # deleted on the source, changed on the destination
        (None, b"x", b"y", Decision.CONFLICT),  # added differently on both
    ],
)
def test_merge_table(base, source, dest, expected):
    assert decide(base, source, dest) is expected


def test_actions():
    assert [action(b"a", b"a"), action(None, b"x"), action(b"a", b"b"), action(b"a", None)] == [
        Action.UNCHANGED,
        Action.ADDED,
        Action.CHANGED,
        Action.DELETED,
    ]


# --- Diff ----------------------------------------------------------------------------------------------------


def test_diff_against_brute_force(kit):
    manager = CommittedManager(MemoryBlockStore(), SMALL)
    left = {kit.key(n): kit.entry(n) for n in range(0, 400, 2)}
    right = dict(left)
    for n in (10, 200, 398):
        right[kit.key(n)] = kit.entry(n, version=1)  # changed
    for n in (0, 52, 300):
        del right[kit.key(n)]  # removed
    for n in (1, 151, 999):
        right[kit.key(n)] = kit.entry(n)  # added
    moved = kit.entry(44)
    right[kit.key(44)] = Entry("s3://elsewhere/x", moved.size, moved.etag, moved.mtime + 5)  # same identity
    lm, rm = _write(manager, kit.namespace, left), _write(manager, kit.namespace, right)

    rows = list(compare.diff(manager, kit.namespace, lm, rm))
    expected = {
        k: (DiffType.ADDED if k not in left else DiffType.REMOVED if k not in right else DiffType.CHANGED)
        for k in sorted(set(left) | set(right))
        if _ident(left.get(k)) != _ident(right.get(k))
    }
    assert {r.key: r.type for r in rows} == expected
    assert [r.key for r in rows] == sorted(expected)
    for row in rows:
        assert row.left_entry() == left.get(row.key) and row.right_entry() == right.get(row.key)
    start = kit.key(151)
    assert [r.key for r in compare.diff(manager, kit.namespace, lm, rm, start)] == [k for k in expected if k >= start]
    assert [r.type for r in compare.diff(manager, kit.namespace, EMPTY_METARANGE, rm)] == [DiffType.ADDED] * len(right)
    assert list(compare.diff(manager, kit.namespace, lm, lm)) == []


# --- The proof: cost follows the difference, not the size --------------------------------------------------


@pytest.fixture(scope="module")
def big(kit):
    """50,000 keys over ~100 ranges, written once for the module."""
    store = kit.CountingBlockStore()
    writer = CommittedManager(store, PROOF)
    listing = {kit.key(n): kit.entry(n) for n in range(0, 100_000, 2)}
    metarange = _write(writer, kit.namespace, listing)
    return store, metarange


def _fresh(big):
    store, metarange = big
    return CommittedManager(store, PROOF), store, metarange


def _change(manager, namespace, metarange, kit, numbers, version):
    return manager.apply(
        namespace, metarange, [StagedEntry(kit.key(n), kit.entry(n, version)) for n in sorted(numbers, key=kit.key)]
    ).metarange_id


def _addresses(namespace, ids):
    return {object_address(namespace, i) for i in ids}


def _range_of(ranges, key):
    return next(info for info in ranges if info.min_key <= key <= info.max_key)


def test_proof_diff_reads_only_the_changed_range(big, kit):
    manager, store, base = _fresh(big)
    changed = _change(manager, kit.namespace, base, kit, [51_234], version=2)
    old_range = _range_of(manager.ranges(kit.namespace, base), kit.key(51_234))
    new_range = _range_of(manager.ranges(kit.namespace, changed), kit.key(51_234))
    assert len(manager.ranges(kit.namespace, base)) >= 50

    manager, store, _ = _fresh(big)  # a cold cache: every read shows in the counts
    store.reset_counts()
    rows = list(compare.diff(manager, kit.namespace, base, changed))

    assert [(r.key, r.type) for r in rows] == [(kit.key(51_234), DiffType.CHANGED)]
    assert dict(store.gets) == dict.fromkeys(_addresses(kit.namespace, [base, changed, old_range.id, new_range.id]), 1)
    assert dict(store.puts) == {}


def test_proof_merge_of_changes_in_different_ranges_reads_and_writes_no_range(big, kit):
    manager, store, base = _fresh(big)
    source = _change(manager, kit.namespace, base, kit, [20_000], version=2)
    dest = _change(manager, kit.namespace, base, kit, [80_000], version=3)

    manager, store, _ = _fresh(big)
    store.reset_counts()
    outcome = compare.merge(manager, kit.namespace, base, source, dest, _fail)

    assert outcome.conflicts == [] and outcome.metarange_id is not None
    merged = manager.ranges(kit.namespace, outcome.metarange_id)
    source_ranges, dest_ranges = manager.ranges(kit.namespace, source), manager.ranges(kit.namespace, dest)
    assert {r.id for r in merged} <= {r.id for r in source_ranges} | {r.id for r in dest_ranges}
    assert dict(store.gets) == dict.fromkeys(_addresses(kit.namespace, [base, source, dest]), 1)
    assert dict(store.puts) == dict.fromkeys(_addresses(kit.namespace, [outcome.metarange_id]), 1)
    assert manager.get(kit.namespace, outcome.metarange_id, kit.key(20_000)) == kit.entry(20_000, 2)
    assert manager.get(kit.namespace, outcome.metarange_id, kit.key(80_000)) == kit.entry(80_000, 3)


def test_proof_merge_of_changes_in_one_range_reads_and_writes_only_that_range(big, kit):
    manager, store, base = _fresh(big)
    source = _change(manager, kit.namespace, base, kit, [51_234], version=2)
    dest = _change(manager, kit.namespace, base, kit, [51_244], version=3)
    versions = [_range_of(manager.ranges(kit.namespace, m), kit.key(51_234)) for m in (base, source, dest)]
    assert len({v.id for v in versions}) == 3 and len({(v.min_key, v.max_key) for v in versions}) == 1

    manager, store, _ = _fresh(big)
    store.reset_counts()
    outcome = compare.merge(manager, kit.namespace, base, source, dest, _fail)

    assert outcome.metarange_id is not None
    merged = manager.ranges(kit.namespace, outcome.metarange_id)
    written = _range_of(merged, kit.key(51_234))
    others = [r for r in merged if r.id != written.id]
    assert others == [r for r in manager.ranges(kit.namespace, base) if r.id != versions[0].id]
    assert dict(store.gets) == dict.fromkeys(
        _addresses(kit.namespace, [base, source, dest, *(v.id for v in versions)]), 1
    )
    assert dict(store.puts) == dict.fromkeys(_addresses(kit.namespace, [outcome.metarange_id, written.id]), 1)
    assert manager.get(kit.namespace, outcome.metarange_id, kit.key(51_234)) == kit.entry(51_234, 2)
    assert manager.get(kit.namespace, outcome.metarange_id, kit.key(51_244)) == kit.entry(51_244, 3)

    # The preview of the same merge reads the same ranges (now cached) and lists the one change.
    store.reset_counts()
    changes = list(compare.merge_changes(manager, kit.namespace, base, source, dest))
    assert [(c.key, c.type) for c in changes] == [(kit.key(51_234), DiffType.CHANGED)]
    assert dict(store.puts) == {}


# --- Property: merge equals the table applied key by key ----------------------------------------------------

KEYS = [f"k/{i:03d}" for i in range(40)]


def _entry(key: str, version: int) -> Entry:
    return Entry(f"s3://b/ns/data/{key}-{version}", 10 + version, f"{version:032x}", 1_700_000_000 + version)


side_edits = st.dictionaries(st.sampled_from(KEYS), st.one_of(st.none(), st.integers(1, 3)), max_size=8)


def _apply_edits(listing: dict[str, Entry], edits: dict[str, int | None], tag: int) -> dict[str, Entry]:
    out = dict(listing)
    for key, version in edits.items():
        if version is None:
            out.pop(key, None)
        else:
            # Versions 1-3 are shared by both sides (so both may make the same change); tag 0 is the base's.
            out[key] = _entry(key, version if version < 3 else 3 + tag)
    return out


def _model(base, source, dest):
    """The table, key by key: (merged identities, conflicting keys)."""
    merged, conflicts = {}, []
    for key in sorted(set(base) | set(source) | set(dest)):
        b, s, d = (_ident(m.get(key)) for m in (base, source, dest))
        if s == d or d == b:
            value = s
        elif s == b:
            value = d
        else:
            conflicts.append(key)
            continue
        if value is not None:
            merged[key] = value
    return merged, conflicts


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    base_keys=st.sets(st.sampled_from(KEYS), max_size=40),
    source_edits=side_edits,
    dest_edits=side_edits,
    raggedness=st.sampled_from([2, 5, 1000]),
)
def test_merge_equals_the_table_key_by_key(base_keys, source_edits, dest_edits, raggedness):
    manager = CommittedManager(MemoryBlockStore(), RangeParams(1 << 30, 0, raggedness))
    ns = "s3://b/ns"
    base = {k: _entry(k, 0) for k in base_keys}
    source, dest = _apply_edits(base, source_edits, 1), _apply_edits(base, dest_edits, 2)
    bm, sm, dm = (_write(manager, ns, m) for m in (base, source, dest))
    merged_model, conflicts_model = _model(base, source, dest)

    outcome = compare.merge(manager, ns, bm, sm, dm, _fail)
    assert [c.key for c in outcome.conflicts] == conflicts_model
    for conflict in outcome.conflicts:
        assert conflict.source is action(_ident(base.get(conflict.key)), _ident(source.get(conflict.key)))
        assert conflict.destination is action(_ident(base.get(conflict.key)), _ident(dest.get(conflict.key)))
    if conflicts_model:
        assert outcome.metarange_id is None
    else:
        result = _read(manager, ns, outcome.metarange_id)
        assert {k: entry_identity(v) for k, v in result.items()} == merged_model
        for key, entry in result.items():
            assert entry in (source.get(key), dest.get(key))
        # Written like a commit: the same metarange as a fresh write of the same listing (canonical cuts).
        assert _write(manager, ns, result) == outcome.metarange_id

    # source-wins settles every conflict with the source's side.
    settled = compare.merge(manager, ns, bm, sm, dm, _source_wins)
    expected = dict(merged_model)
    for key in conflicts_model:
        if key in source:
            expected[key] = entry_identity(source[key])
    assert {k: entry_identity(v) for k, v in _read(manager, ns, settled.metarange_id).items()} == expected

    # The preview lists exactly what the merge changes in the destination, and the conflicts.
    changes = list(compare.merge_changes(manager, ns, bm, sm, dm))
    assert [c.key for c in changes if c.type is DiffType.CONFLICT] == conflicts_model
    dest_ids = {k: entry_identity(v) for k, v in dest.items()}
    changed = sorted(
        k
        for k in set(dest_ids) | set(merged_model)
        if k not in conflicts_model and dest_ids.get(k) != merged_model.get(k)
    )
    assert [c.key for c in changes if c.type is not DiffType.CONFLICT] == changed
