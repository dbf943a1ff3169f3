"""The range formats' params: format 1 keeps the ids it always gave, format 2 bounds every range by its max."""

from __future__ import annotations

import pytest

from chalicelib.graveler.committed import CommittedManager
from chalicelib.graveler.committed.columns import metadata_json, row_estimate
from chalicelib.graveler.committed.params import RANGE_FORMAT_1, RANGE_FORMAT_2, RangeParams, params_for_format
from chalicelib.graveler.records import Key, StagedEntry

# A fixed listing of the fixture repository and fixed changes on it, with the ids each format gives: format 1's
# were computed by the release before formats (its only params), format 2's when it was introduced.
GOLDEN = {
    1: (
        "38c606cc000447d1f01b94678f589ff03ffe629eff7abffeeae454e0cafbc548",
        "01da2b1c660fd40f4d7227e32040b7c66ba4c63c5b9930a9876f5f37499c3e7d",
        [14371, 14323, 11427],
    ),
    2: (
        "d260d4ec0c934be56984e839e51edd6b71f03a20914953a8e0d875eb19869d5c",
        "7458b6ae7be8b2a2a3f647e3ee428e84a0817fa6771e201c6738a381bf4f7db6",
        [9720, 11432, 12278, 6691],
    ),
}


def _changes(kit, objects: int) -> list[StagedEntry]:
    return sorted(
        [StagedEntry(kit.key(n), kit.entry(n, 1)) for n in range(0, objects, 97)]
        + [StagedEntry(Key(kit.key(n) + "/new"), kit.entry(n, 2)) for n in range(5, objects, 331)],
        key=lambda c: c.key,
    )


@pytest.mark.parametrize("range_format", [1, 2])
def test_ids_of_each_format_never_change(blocks, kit, range_format):
    manager = CommittedManager(blocks, RANGE_FORMAT_2).for_format(range_format)
    base = manager.write_metarange(kit.namespace, kit.records(range(40_000)))
    applied = manager.apply(kit.namespace, base, _changes(kit, 40_000)).metarange_id
    assert (base, applied, [r.count for r in manager.ranges(kit.namespace, applied)]) == GOLDEN[range_format]


def _row_bytes(record) -> int:
    entry = record.entry
    return row_estimate(
        record.key, entry.physical_address, entry.etag, entry.content_type, metadata_json(entry.user_metadata)
    )


def test_format_2_never_emits_a_range_above_its_max(blocks, kit):
    records = kit.records(range(100_000))
    largest_row = max(_row_bytes(r) for r in records)
    manager = CommittedManager(blocks)
    assert manager.params == RANGE_FORMAT_2
    base = manager.write_metarange(kit.namespace, records)
    # 20,000 new keys inside a few ranges: their ranges would grow without the bound.
    inserted = sorted(
        (StagedEntry(Key(kit.key(n) + f"/x{i}"), kit.entry(n, 1)) for n in range(40_000, 40_100) for i in range(200)),
        key=lambda c: c.key,
    )
    grown = manager.apply(kit.namespace, base, inserted).metarange_id
    for metarange in (base, grown):
        ranges = manager.ranges(kit.namespace, metarange)
        # A range closes on the row that reaches the max: every range but that row is below it.
        assert all(r.estimated_size < RANGE_FORMAT_2.max_range_bytes + largest_row for r in ranges)
        assert max(r.estimated_size for r in ranges) >= RANGE_FORMAT_2.min_range_bytes
    assert any(r.estimated_size >= RANGE_FORMAT_2.max_range_bytes for r in manager.ranges(kit.namespace, grown))
    # Format 1 on the same listing holds ranges far above format 2's max: the bound is format 2's own.
    old = CommittedManager(kit.CountingBlockStore(), RANGE_FORMAT_1)
    old_ranges = old.ranges(kit.namespace, old.write_metarange(kit.namespace, records))
    assert max(r.estimated_size for r in old_ranges) > 2 * RANGE_FORMAT_2.max_range_bytes


def test_views_share_storage_and_only_the_current_format_follows_settings(blocks, kit):
    configured = RangeParams(max_range_bytes=4000, min_range_bytes=600, raggedness=7)
    manager = CommittedManager(blocks, configured)
    old = manager.for_format(1)
    assert manager.for_format(2) is manager and old.params == RANGE_FORMAT_1
    assert old.for_format(2).params == configured
    assert old.storage is manager.storage
    assert params_for_format(1, configured) == RANGE_FORMAT_1
    assert params_for_format(2, configured) == configured


def test_the_default_settings_are_the_current_formats_params() -> None:
    # settings.py imports nothing of graveler (it is read by every process, the CLI included), so the current
    # format's values are written twice: a deployment without LAKELET_RANGE_* must cut as the format says.
    from chalicelib.settings import Settings
    from chalicelib.wiring import range_params

    assert range_params(Settings()) == RANGE_FORMAT_2
