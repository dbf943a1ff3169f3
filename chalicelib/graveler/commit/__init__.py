"""The commit use case: ``request`` (what was asked, fixed once), ``plan`` (the frozen plan the workflow state
carries) and ``steps`` (seal, plan, build_slice, finish, drop: idempotent, run inline or as the commit workflow).
``Graveler.commit`` is its one entry."""

from .plan import CommitBase, CommitPlan, SliceSpec
from .request import CommitRequest, request_token
from .steps import (
    COMMITTED,
    DEFAULT_MAX_SLICES,
    DONE_ELSEWHERE,
    OWN_COMMIT_DEPTH,
    REPLAN,
    CommitSteps,
    landed_commit,
    swap_branch,
)

__all__ = [
    "COMMITTED",
    "DEFAULT_MAX_SLICES",
    "DONE_ELSEWHERE",
    "OWN_COMMIT_DEPTH",
    "REPLAN",
    "CommitBase",
    "CommitPlan",
    "CommitRequest",
    "CommitSteps",
    "SliceSpec",
    "landed_commit",
    "request_token",
    "swap_branch",
]
