"""What the merge's steps hand each other, as frozen records with their JSON form (plan_json.py, the one codec:
the workflow state carries them between Lambdas): the plan (the state machine maps over ``slices``) and each
merged slice. The finish answers commit/plan.py's ``Finish``, as a commit's does."""

from __future__ import annotations

from dataclasses import dataclass

from ..runs.plan_json import JsonRecord


@dataclass(frozen=True, slots=True)
class MergeSliceSpec(JsonRecord):
    """One slice of the key space, [lo, hi) (hi None: to the end), where no range of the three sides straddles a
    bound: merged on its own. A Map item of the workflow: bounds, ids and the strategies only."""

    namespace: str
    base: str
    source: str
    dest: str
    strategy: str | None
    path_strategies: tuple[tuple[str, str], ...]
    request_id: str
    lo: str
    hi: str | None
    # The repository's range format: 1 when absent, as in the state of an execution started before formats.
    range_format: int = 1


@dataclass(frozen=True, slots=True)
class MergeFixed(JsonRecord):
    """The merge's fixed points: the destination head it builds on, the sealed tokens it releases, and the merged
    metarange when the merge needs no range read (one side is the base)."""

    namespace: str
    dest_commit: str
    dest_generation: int
    source_generation: int
    tokens: tuple[str, ...]
    metarange: str | None = None
    range_format: int = 1


@dataclass(frozen=True, slots=True)
class MergePlan(JsonRecord):
    """The fixed points, the slices to merge, and the size: the entries of the source's and the destination's
    ranges that the merge base does not share (what decides between inline and the workflow)."""

    fixed: MergeFixed
    slices: tuple[MergeSliceSpec, ...]
    size: int


@dataclass(frozen=True, slots=True)
class MergedSlice(JsonRecord):
    """A merged slice: its ranges as a metarange of their own, or (``metarange`` None) the count of conflicts no
    strategy settled and the file under ``_lakefs/`` that keeps the first of them."""

    metarange: str | None
    unresolved: int = 0
    conflicts: str = ""


__all__ = ["MergeFixed", "MergePlan", "MergeSliceSpec", "MergedSlice"]
