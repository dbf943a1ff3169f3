"""The commit use case: ``request`` (what was asked, fixed once), ``plan`` (the frozen plan the workflow state
carries) and ``steps`` (seal, plan, build_slice, finish, drop: idempotent, run inline or as the commit workflow).
``engine.commits.commit`` is its one entry."""

from ..runs.slicing import DEFAULT_MAX_SLICES
from .plan import COMMITTED, DONE_ELSEWHERE, REPLAN, BuiltSlice, CommitBase, CommitPlan, Finish, Sealed, SliceSpec
from .request import CommitRequest, request_token
from .steps import OWN_COMMIT_DEPTH, CommitSteps, find_recent_commit, landed_commit, swap_branch

__all__ = [
    "COMMITTED",
    "DEFAULT_MAX_SLICES",
    "DONE_ELSEWHERE",
    "OWN_COMMIT_DEPTH",
    "REPLAN",
    "BuiltSlice",
    "CommitBase",
    "CommitPlan",
    "CommitRequest",
    "CommitSteps",
    "Finish",
    "Sealed",
    "SliceSpec",
    "find_recent_commit",
    "landed_commit",
    "request_token",
    "swap_branch",
]
