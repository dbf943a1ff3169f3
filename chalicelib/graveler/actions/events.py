"""The events hooks run on (lakeFS's names) and what an operation tells its hooks about itself."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

__all__ = ["EventType"]


class EventType(enum.StrEnum):
    PRE_COMMIT = "pre-commit"
    POST_COMMIT = "post-commit"
    PRE_MERGE = "pre-merge"
    POST_MERGE = "post-merge"
    PRE_CREATE_BRANCH = "pre-create-branch"
    POST_CREATE_BRANCH = "post-create-branch"
    PRE_DELETE_BRANCH = "pre-delete-branch"
    POST_DELETE_BRANCH = "post-delete-branch"
    PRE_CREATE_TAG = "pre-create-tag"
    POST_CREATE_TAG = "post-create-tag"
    PRE_DELETE_TAG = "pre-delete-tag"
    POST_DELETE_TAG = "post-delete-tag"
    PRE_REVERT = "pre-revert"
    POST_REVERT = "post-revert"
    PRE_CHERRY_PICK = "pre-cherry-pick"
    POST_CHERRY_PICK = "post-cherry-pick"

    @property
    def is_pre(self) -> bool:
        return self.value.startswith("pre-")


@dataclass(frozen=True, slots=True)
class HookEvent:
    """One occurrence of an event: the fields of lakeFS's event payload, less the action's and hook's names.

    ``actions_ref`` is the ref whose ``_lakefs_actions/`` holds the actions to run: for a merge the source, for a
    commit the branch (its staged action files included, as lakeFS reads them), for a post-event the new commit.
    ``branch_id`` is empty for tag events, which a ``branches`` filter then never matches (as lakeFS).
    """

    event_type: EventType
    repository_id: str
    actions_ref: str
    branch_id: str = ""
    source_ref: str = ""
    commit_id: str = ""
    tag_id: str = ""
    commit_message: str = ""
    committer: str = ""
    commit_metadata: dict[str, str] = field(default_factory=dict)
    # A key that makes the run's id stable under retries (a workflow step that runs twice records one run).
    idempotency_key: str = ""
    # A post-commit's or post-revert's: the run of its pre-event, which then gets the new commit's id (as lakeFS's
    # PostCommitHook writes it onto the pre-commit run), so the runs of a commit list its pre-commit run too.
    pre_run_id: str = ""
