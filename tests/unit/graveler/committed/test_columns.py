"""What a decoded range costs to keep and to copy: no Python object per row, no key hashed twice."""

from __future__ import annotations

import gc
import types
from unittest import mock

from bench.fixture_repo import entry_of, key_of
from chalicelib.graveler.committed import CommittedManager, RangeParams
from chalicelib.graveler.committed import columns as columns_module
from chalicelib.graveler.committed import writer as writer_module
from chalicelib.graveler.records import StagedEntry

PARAMS = RangeParams(max_range_bytes=1 << 30, min_range_bytes=0, raggedness=1 << 62)


def _reachable_tracked(root: object, limit: int) -> int:
    """Objects the garbage collector tracks and would walk, reachable from ``root`` (stops past ``limit``)."""
    seen: set[int] = set()
    stack = [root]
    while stack and len(seen) <= limit:
        obj = stack.pop()
        for child in gc.get_referents(obj):
            if isinstance(child, (type, types.ModuleType, types.FunctionType)):
                continue  # shared by every instance, not part of the range
            if id(child) not in seen and (gc.is_tracked(child) or isinstance(child, (str, bytes, int))):
                seen.add(id(child))
                stack.append(child)
    return len(seen)


def test_a_cached_range_holds_no_python_object_per_row(blocks, kit):
    manager = CommittedManager(blocks, PARAMS)
    metarange = manager.write_metarange(kit.namespace, kit.records(list(range(5000))))
    (info,) = manager.ranges(kit.namespace, metarange)
    manager.storage.clear_cache()
    cached = manager.storage.range(kit.namespace, info.id)
    assert len(list(manager.iterate(kit.namespace, metarange))) == 5000  # a listing leaves nothing behind
    assert _reachable_tracked(cached, 1000) < 100


def test_copied_rows_are_never_hashed_again(blocks, kit):
    manager = CommittedManager(blocks, RangeParams(max_range_bytes=1 << 30, min_range_bytes=0, raggedness=1000))
    base = manager.write_metarange(kit.namespace, kit.records(list(range(0, 20_000, 2))))
    manager.storage.clear_cache()
    hashed: list[int] = []
    real_one, real_many = writer_module.fnv1a_64, columns_module.fnv1a_64_arrow

    def one(data: bytes) -> int:
        hashed.append(1)
        return real_one(data)

    def many(keys):  # type: ignore[no-untyped-def]
        hashed.append(len(keys))
        return real_many(keys)

    changes = sorted((StagedEntry(key_of(n), entry_of(n)) for n in (3, 9_001, 19_999)), key=lambda c: c.key)
    with mock.patch.object(writer_module, "fnv1a_64", one), mock.patch.object(columns_module, "fnv1a_64_arrow", many):
        result = manager.apply(kit.namespace, base, changes)
    assert result.added == 3
    # The new keys, plus at most the last key of each base range (is it a boundary?): every stored row of the
    # rewritten ranges brought its hash along.
    ranges = len(manager.ranges(kit.namespace, base))
    assert 3 <= ranges < 30
    assert sum(hashed) <= 3 + ranges
    keys = [r.key for r in manager.iterate(kit.namespace, result.metarange_id)]
    assert len(keys) == 10_003 and keys == sorted(keys)
