"""Diff and merge of stored metaranges: the CommittedManager operations that compare commits.

They extend CommittedManager from outside manager.py, over the same storage and cache (a module of this
package may use the manager's storage: it is this package's own).

- ``diff``: the keys that differ between two metaranges (two-dot).
- ``merge_changes``: what merging ``source`` into ``dest`` since ``base`` changes in ``dest``, and the conflicts
  (three-dot diff, merge preview).
- ``merge``: the merged metarange, written like a commit's, or the conflicts that prevent it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from ..records import DiffType, Entry, Key, MetaRangeID, RangeID, RangeInfo
from .columns import RangeColumns
from .cursor import BaseLookup, RangeCursor
from .diff import DiffRow, diff_cursors
from .manager import CommittedManager
from .merge import KeyConflict, Resolver, merge_ranges
from .mergetable import Decision, action, decide
from .storage import CommittedStorage
from .writer import RangeWriter

__all__ = ["MergeChange", "MergeOutcome", "diff", "merge", "merge_changes", "trivial_merge"]


def _storage(manager: CommittedManager) -> CommittedStorage:
    return manager.storage


def _ranges(manager: CommittedManager, namespace: str, metarange: MetaRangeID) -> list[RangeInfo]:
    return _storage(manager).metarange(namespace, metarange).ranges


def diff(
    manager: CommittedManager, namespace: str, left: MetaRangeID, right: MetaRangeID, from_key: str = ""
) -> Iterator[DiffRow]:
    """Keys >= ``from_key`` whose identity differs between ``left`` and ``right``, in key order. Ranges with the
    same ID on both sides are never read."""
    storage = _storage(manager)

    def load(rid: RangeID) -> RangeColumns:
        return storage.range(namespace, rid)

    return diff_cursors(
        RangeCursor(_ranges(manager, namespace, left), load, from_key),
        RangeCursor(_ranges(manager, namespace, right), load, from_key),
    )


@dataclass(frozen=True, slots=True)
class MergeChange:
    """A key that merging changes in the destination (type added, removed or changed, entry the new value), or
    a conflicting key (type conflict, entry the source's, ``conflict`` what each side did and any resolution)."""

    key: Key
    type: DiffType
    entry: Entry | None
    conflict: KeyConflict | None = None


def merge_changes(
    manager: CommittedManager,
    namespace: str,
    base: MetaRangeID,
    source: MetaRangeID,
    dest: MetaRangeID,
    resolve: Resolver | None = None,
    from_key: str = "",
) -> Iterator[MergeChange]:
    """The keys >= ``from_key`` that merging ``source`` into ``dest`` touches: the diff of dest and source, each
    key classified against the base by the merge table. Keys that only the destination changed are not listed.
    ``resolve`` may pick a side for a conflict (the change it makes is then reported with the conflict)."""
    storage = _storage(manager)
    lookup = BaseLookup(_ranges(manager, namespace, base), lambda rid: storage.range(namespace, rid))
    for row in diff(manager, namespace, dest, source, from_key):
        base_id = lookup.identity(row.key)
        dest_id, source_id = row.left_identity, row.right_identity
        decision = decide(base_id, source_id, dest_id)
        if decision is Decision.TAKE_DEST:
            continue
        if decision is Decision.TAKE_SOURCE:
            yield MergeChange(row.key, row.type, row.right_entry())
            continue
        s_action, d_action = action(base_id, source_id), action(base_id, dest_id)
        resolution = resolve(row.key, s_action, d_action) if resolve is not None else None
        conflict = KeyConflict(row.key, s_action, d_action, row.right_entry(), row.left_entry(), resolution)
        yield MergeChange(row.key, DiffType.CONFLICT, conflict.source_entry, conflict)


@dataclass(frozen=True, slots=True)
class MergeOutcome:
    """The merged metarange (None when a conflict stayed unresolved) and every conflict met."""

    metarange_id: MetaRangeID | None
    conflicts: list[KeyConflict] = field(default_factory=list)
    resolved: int = 0


def trivial_merge(base: MetaRangeID, source: MetaRangeID, dest: MetaRangeID) -> MetaRangeID | None:
    """The merged metarange when no range needs reading (one side is the base, or both are the same), else None."""
    if dest == base or source == dest:
        return source
    if source == base:
        return dest
    return None


def merge(
    manager: CommittedManager,
    namespace: str,
    base: MetaRangeID,
    source: MetaRangeID,
    dest: MetaRangeID,
    resolve: Resolver,
) -> MergeOutcome:
    """Merges ``source`` into ``dest`` since ``base``. Ranges and the metarange are written only when every
    conflict was resolved; unchanged ranges are reused by reference."""
    trivial = trivial_merge(base, source, dest)
    if trivial is not None:
        return MergeOutcome(trivial)
    storage = _storage(manager)
    base_ranges = _ranges(manager, namespace, base)
    source_ranges = _ranges(manager, namespace, source)
    dest_ranges = _ranges(manager, namespace, dest)
    known = {r.id for r in source_ranges} | {r.id for r in dest_ranges} | {r.id for r in base_ranges}
    writer = RangeWriter(storage, namespace, manager.params, known_ranges=known)
    walk = merge_ranges(
        base_ranges,
        source_ranges,
        dest_ranges,
        lambda rid: storage.range(namespace, rid),
        writer,
        manager.params,
        resolve,
    )
    if walk.ranges is None:
        return MergeOutcome(None, walk.conflicts, walk.resolved)
    ids = [r.id for r in walk.ranges]
    for existing, ranges in ((dest, dest_ranges), (source, source_ranges)):
        if ids == [r.id for r in ranges]:
            return MergeOutcome(existing, walk.conflicts, walk.resolved)
    return MergeOutcome(storage.write_metarange(namespace, walk.ranges), walk.conflicts, walk.resolved)
