"""The merge use case: ``request`` (what was asked, fixed once), ``policy`` (strategies and the dry run's
records), ``base`` (the merge base), ``plan`` (the frozen plan the workflow state carries) and ``steps`` (plan,
build_slice, finish, drop: idempotent, run inline or as the merge workflow). The range-level walk is
committed/merge.py; the records of a merge's changes and conflicts (MergeChange, KeyConflict, Decision) are
named here for the API. ``engine.merges.merge`` is its one entry."""

from ..committed.compare import MergeChange
from ..committed.merge import KeyConflict
from ..committed.mergetable import Decision
from ..runs.slicing import DEFAULT_MAX_SLICES
from .base import find_merge_base, require_merge_base
from .plan import MergedSlice, MergeFixed, MergePlan, MergeSliceSpec
from .policy import ConflictPolicy, MergePreview, MergeSummary, conflict_policy
from .request import MergeRequest
from .steps import MergeSteps, conflicts_address, landed_merge, read_conflicts

__all__ = [
    "DEFAULT_MAX_SLICES",
    "ConflictPolicy",
    "Decision",
    "KeyConflict",
    "MergeChange",
    "MergeFixed",
    "MergePlan",
    "MergePreview",
    "MergeRequest",
    "MergeSliceSpec",
    "MergeSteps",
    "MergeSummary",
    "MergedSlice",
    "base",
    "conflict_policy",
    "conflicts_address",
    "find_merge_base",
    "landed_merge",
    "policy",
    "read_conflicts",
    "require_merge_base",
]
