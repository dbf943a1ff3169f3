"""Pull requests (lakeFS's pulls API, pkg/graveler and pkg/catalog): a proposal to merge one branch into another,
open until it is merged (through the one merge entry, engine.merges.merge: hooks, branch protection, strategies and
conflicts as any merge) or closed.

What Lakelet does as lakeFS does: ids are xid-shaped (20 characters of base32hex, time first, so the id order is
the creation order), a listing filters by status ("open"; "closed" means closed or merged; anything else all),
closing or merging sets closed_date, and merging records merged_commit_id.

Where it differs on purpose (docs/api.md): a PATCH may not set status "merged" (lakeFS lets a client mark a pull
request merged without merging anything) and a merged pull request cannot change status again; reopening a closed
one clears its closed_date.
"""

from __future__ import annotations

import base64
import os
import re
import struct
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Protocol

from .. import errors
from ..reads.listing import clamp_amount
from ..records import Commit, Page, PullRequest, PullRequestStatus, Repository
from ..validation import validate_branch_id

if TYPE_CHECKING:  # ports.py names this module's records in its signatures
    from ..ports import PullRequestStore
    from ..runs.workflow_runner import TaskStatus

__all__ = [
    "MergeEntry",
    "PullRequest",
    "PullRequestParts",
    "PullRequestStatus",
    "PullRequestUpdate",
    "PullRequests",
    "new_pull_request_id",
]

# How many times an edit is tried again when another edit of the same pull request won the compare-and-swap.
UPDATE_TRIES = 5
_ID = re.compile(r"[0-9a-v]{20}")


@dataclass(frozen=True, slots=True)
class PullRequestUpdate:
    """lakeFS's PullRequestBasic as a PATCH: each field None is left as it is."""

    title: str | None = None
    description: str | None = None
    status: str | None = None


class MergeEntry(Protocol):
    """engine.merges.merge, as a pull request calls it."""

    def __call__(
        self,
        repo_id: str,
        source_ref: str,
        destination_branch: str,
        committer: str,
        message: str = "",
        metadata: dict[str, str] | None = None,
        strategy: str | None = None,
    ) -> Commit: ...


@dataclass(frozen=True, slots=True)
class PullRequestParts:
    """What the pull request use cases need: their store, the engine's reads and its one merge entry."""

    store: PullRequestStore | None  # None: an engine built without them, whose every call answers Unsupported
    repository: Callable[[str], Repository]  # the live repository; raises RepositoryNotFound
    check_branch: Callable[[str, str], None]  # raises BranchNotFound
    merge: MergeEntry
    clock: Callable[[], float]
    # engine.merges.merge_status: how a merge that went on as a workflow ended (repo, destination, task id).
    merge_status: Callable[[str, str, str], TaskStatus]


def new_pull_request_id(now: float) -> str:
    """An xid-shaped id: 4 bytes of seconds, 3 of microseconds (so ids made within one second still sort by
    time), then 5 random bytes, base32hex in lower case (20 characters)."""
    seconds = int(now)
    micros = min(int((now - seconds) * 1_000_000), 999_999)
    raw = struct.pack(">I", seconds & 0xFFFFFFFF) + micros.to_bytes(3, "big") + os.urandom(5)
    return base64.b32hexencode(raw).decode("ascii").rstrip("=").lower()


def validate_pull_request_id(pr_id: str) -> None:
    if not _ID.fullmatch(pr_id):
        raise errors.Invalid(f"pull request id: invalid value {pr_id!r}")


def _status(value: str) -> PullRequestStatus:
    try:
        return PullRequestStatus(value.lower())
    except ValueError:
        raise errors.Invalid(f"invalid pull request status {value!r}: open, closed or merged") from None


def _keep(status_filter: str) -> Callable[[PullRequest], bool]:
    wanted = status_filter.lower()
    if wanted == PullRequestStatus.OPEN:
        return lambda pr: pr.status is PullRequestStatus.OPEN
    if wanted == PullRequestStatus.CLOSED:
        return lambda pr: pr.status is not PullRequestStatus.OPEN
    if wanted == PullRequestStatus.MERGED:
        return lambda pr: pr.status is PullRequestStatus.MERGED
    return lambda pr: True


class PullRequests:
    """The pull request use cases over their parts."""

    def __init__(self, parts: PullRequestParts) -> None:
        self._parts = parts

    def _store(self) -> PullRequestStore:
        if self._parts.store is None:
            raise errors.Unsupported("pull requests are not configured on this engine")
        return self._parts.store

    def create(
        self, repo_id: str, title: str, description: str, source_branch: str, destination_branch: str, author: str
    ) -> PullRequest:
        """Raises InvalidName, Invalid (the same branch twice), RepositoryNotFound, BranchNotFound."""
        validate_branch_id(destination_branch)
        validate_branch_id(source_branch)
        if source_branch == destination_branch:
            raise errors.Invalid("source and destination branches are the same: same branch")
        repo = self._parts.repository(repo_id)
        self._parts.check_branch(repo.id, source_branch)
        self._parts.check_branch(repo.id, destination_branch)
        now = self._parts.clock()
        pr = PullRequest(
            new_pull_request_id(now),
            title,
            description,
            author,
            source_branch,
            destination_branch,
            PullRequestStatus.OPEN,
            now,
        )
        self._store().create(repo, pr)
        return pr

    def get(self, repo_id: str, pr_id: str) -> PullRequest:
        """Raises Invalid (a malformed id), RepositoryNotFound, PullRequestNotFound."""
        validate_pull_request_id(pr_id)
        return self._settle(repo_id, self._store().get(self._parts.repository(repo_id), pr_id))

    def list(
        self, repo_id: str, prefix: str = "", after: str = "", amount: int | None = None, status: str = "all"
    ) -> Page[PullRequest]:
        """Pull requests by id (their creation order) with ids > after starting with prefix, filtered by status."""
        repo = self._parts.repository(repo_id)
        limit = clamp_amount(amount)
        keep = _keep(status)
        start = max(after, prefix[:-1]) if prefix else after
        found: list[PullRequest] = []
        while len(found) <= limit:
            batch = self._store().list(repo, start, limit + 1)
            for pr in batch:
                if pr.id > after and pr.id.startswith(prefix) and keep(pr):
                    found.append(pr)
            if len(batch) <= limit or (prefix and batch[-1].id > prefix and not batch[-1].id.startswith(prefix)):
                break
            start = batch[-1].id
        has_more = len(found) > limit
        found = [self._settle(repo_id, pr) for pr in found[:limit]]
        return Page(found, has_more, found[-1].id if has_more else "")

    def update(self, repo_id: str, pr_id: str, change: PullRequestUpdate) -> PullRequest:
        """Edits title, description or status (open, closed). Raises Invalid for an unknown status, for "merged"
        (only a merge merges) and for any status change of a merged pull request; PullRequestNotFound."""
        new_status = None if change.status is None else _status(change.status)
        if new_status is PullRequestStatus.MERGED:
            raise errors.Invalid("a pull request is merged by merging it (PUT .../pulls/{id}/merge)")

        def edit(pr: PullRequest) -> PullRequest:
            edited = replace(
                pr,
                title=pr.title if change.title is None else change.title,
                description=pr.description if change.description is None else change.description,
            )
            if new_status is None or new_status is pr.status:
                return edited
            if pr.status is PullRequestStatus.MERGED:
                raise errors.Invalid("a merged pull request cannot be closed or reopened")
            closed = self._parts.clock() if new_status is PullRequestStatus.CLOSED else None
            return replace(edited, status=new_status, closed_date=closed)

        return self._edit(repo_id, pr_id, edit)

    def merge(
        self,
        repo_id: str,
        pr_id: str,
        committer: str,
        may_merge_into: Callable[[str], None],
        message: str = "",
        metadata: dict[str, str] | None = None,
        strategy: str | None = None,
    ) -> PullRequest:
        """Merges an open pull request's source into its destination through the engine's one merge entry, then
        records it merged. ``may_merge_into(destination)`` raises when the caller may not commit there (lakeFS
        asks fs:CreateCommit on the destination besides pr:WritePullRequest). Raises Invalid ("bad pull request
        status") unless open, and whatever the merge raises (MergeConflicts, DirtyBranch, NoChanges, a
        protected branch, a failed hook, StillRunning when it goes on as a workflow)."""
        pr = self.get(repo_id, pr_id)
        may_merge_into(pr.destination_branch)
        if pr.merge_task_id is not None:
            # A merge of it still goes on as a workflow: the same task again, not a second merge.
            raise errors.StillRunning(pr.merge_task_id)
        if pr.status is not PullRequestStatus.OPEN:
            raise errors.Invalid(f"bad pull request status: {pr.status.value}")
        try:
            merged = self._parts.merge(
                repo_id, pr.source_branch, pr.destination_branch, committer, message, metadata, strategy
            )
        except errors.StillRunning as running:
            # Recorded, so that reading the pull request later settles it from the task's outcome.
            task_id = running.task_id
            self._edit(repo_id, pr_id, lambda current: replace(current, merge_task_id=task_id))
            raise
        return self._record_merge(repo_id, pr_id, merged.id, self._parts.clock())

    def drop_repository(self, repo: Repository) -> int:
        """Removes the pull requests of a repository just deleted (its record, passed in, names the generation they
        are kept under); how many."""
        return self._store().delete_all(repo)

    def _record_merge(self, repo_id: str, pr_id: str, commit_id: str, when: float) -> PullRequest:
        # The merge happened: it is recorded even if the pull request was edited or closed meanwhile.
        return self._edit(
            repo_id,
            pr_id,
            lambda current: replace(
                current,
                status=PullRequestStatus.MERGED,
                merged_commit_id=commit_id,
                closed_date=when,
                merge_task_id=None,
            ),
        )

    def _settle(self, repo_id: str, pr: PullRequest) -> PullRequest:
        """A pull request whose merge went on as a workflow, brought up to date with how that task ended: merged
        when it succeeded, open again (no task) when it failed, as it is while it runs."""
        if pr.merge_task_id is None:
            return pr
        task = self._parts.merge_status(repo_id, pr.destination_branch, pr.merge_task_id)
        if not task.completed:
            return pr
        if task.result is not None:
            return self._record_merge(repo_id, pr.id, task.result.id, task.update_time)
        return self._edit(repo_id, pr.id, lambda current: replace(current, merge_task_id=None))

    def _edit(self, repo_id: str, pr_id: str, edit: Callable[[PullRequest], PullRequest]) -> PullRequest:
        validate_pull_request_id(pr_id)
        repo = self._parts.repository(repo_id)
        for _ in range(UPDATE_TRIES):
            current = self._store().get(repo, pr_id)
            edited = edit(current)
            if edited == current:
                return current
            try:
                self._store().update(repo, edited, current)
            except errors.PreconditionFailed:
                continue
            return edited
        raise errors.TooManyTries(f"pull request {pr_id} kept changing")
