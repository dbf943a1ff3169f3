"""The events of graveler's operations, built from what each operation knows: one function per kind, so every
entry (inline, workflow step) tells its hooks the same things.

Where the actions come from, as lakeFS reads them: a commit's pre-hooks from the branch (staged action files
included), a merge's from the source; post-hooks from the commit the operation made.
"""

from __future__ import annotations

from ..commit import CommitRequest
from ..merge import MergeRequest
from .events import EventType, HookEvent

__all__ = ["commit_event", "merge_event", "ref_event"]


def commit_event(request: CommitRequest, commit_id: str = "", pre_run_id: str = "") -> HookEvent:
    """pre-commit without ``commit_id``, post-commit with it (and the pre-commit's run, which gets its id)."""
    kind = EventType.POST_COMMIT if commit_id else EventType.PRE_COMMIT
    return HookEvent(
        kind,
        request.repository,
        commit_id or request.branch,
        branch_id=request.branch,
        source_ref=commit_id or request.branch,
        commit_id=commit_id,
        commit_message=request.message,
        committer=request.committer,
        commit_metadata=dict(request.metadata),
        idempotency_key=f"{request.request_id}/{kind}" if commit_id else "",
        pre_run_id=pre_run_id,
    )


def merge_event(request: MergeRequest, commit_id: str = "") -> HookEvent:
    """pre-merge without ``commit_id``, post-merge with it."""
    kind = EventType.POST_MERGE if commit_id else EventType.PRE_MERGE
    return HookEvent(
        kind,
        request.repository,
        commit_id or request.source_commit,
        branch_id=request.destination,
        source_ref=request.source_ref,
        commit_id=commit_id,
        commit_message=request.message,
        committer=request.committer,
        commit_metadata=dict(request.metadata),
        idempotency_key=f"{request.request_id}/{kind}" if commit_id else "",
    )


def ref_event(
    kind: EventType,
    repo_id: str,
    actions_ref: str,
    branch_id: str = "",
    tag_id: str = "",
    source_ref: str = "",
    commit_id: str = "",
    committer: str = "",
    message: str = "",
    pre_run_id: str = "",
) -> HookEvent:
    """Branch and tag creation and deletion, revert and cherry-pick. ``pre_run_id``: a post-revert's pre-revert
    run, which gets the revert's commit id (lakeFS's PostRevertHook)."""
    return HookEvent(
        kind,
        repo_id,
        actions_ref,
        branch_id=branch_id,
        source_ref=source_ref,
        commit_id=commit_id,
        tag_id=tag_id,
        committer=committer,
        commit_message=message,
        pre_run_id=pre_run_id,
    )
