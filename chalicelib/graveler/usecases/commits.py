"""The commit use case: it builds its request (commit/request.py) and hands it to the one inline-or-workflow
decision (workflow_runner.py), which runs the steps of commit/ (what the commit workflow's tasks run too); and the
commit reads beside it: a ref resolved, a commit read, a commit record written as given (commit_records.py)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass

from .. import errors
from ..commit import CommitRequest, CommitSteps
from ..records import Commit, ResolvedRef
from ..runs.workflow_runner import Runner, TaskStatus
from .commit_records import CommitRecord, CommitRecords

__all__ = ["CommitParts", "Commits"]


@dataclass(frozen=True, slots=True)
class CommitParts:
    """What the commit use case uses: the one inline-or-workflow decision, the commit's steps, the commit records
    written as given, how long a caller waits for a workflow by default, and three of the shared reads."""

    runner: Runner
    steps: CommitSteps
    records: CommitRecords
    wait_seconds: float
    resolve: Callable[[str, str], ResolvedRef]
    get_commit: Callable[[str, str], Commit]
    now: Callable[[], float]


class Commits:
    """The commit use case, its task's status and the commit reads. ``steps``: what a commit runs, inline or as the
    commit workflow's tasks."""

    def __init__(self, parts: CommitParts) -> None:
        self._parts = parts
        self._runner = parts.runner
        self._records = parts.records
        self._wait_seconds = parts.wait_seconds
        self.steps = parts.steps

    def resolve(self, repo_id: str, ref: str) -> ResolvedRef:
        """The commit (and branch, for a branch) a ref expression names. Raises RefNotFound."""
        return self._parts.resolve(repo_id, ref)

    def get_commit(self, repo_id: str, ref: str) -> Commit:
        """The commit a ref expression names in the live repository."""
        return self._parts.get_commit(repo_id, ref)

    def run_pre_hooks(self, request: CommitRequest) -> str:
        """The commit workflow's seal step: the pre-commit hooks, by the runner's one rule."""
        return self._runner.commit_pre_hooks(request)

    def run_post_hooks(self, request: CommitRequest, commit_id: str, pre_run_id: str) -> None:
        """The commit workflow's last step: the post-commit hooks, by the runner's one rule."""
        self._runner.commit_post_hooks(request, commit_id, pre_run_id)

    def create_commit_record(self, repo_id: str, record: CommitRecord, force: bool = False) -> Commit:
        """Stores a commit record as given (commit_records.py)."""
        return self._records.create_commit_record(repo_id, record, force)

    def commit(
        self,
        repo_id: str,
        branch_id: str,
        committer: str,
        message: str,
        metadata: dict[str, str] | None = None,
        date: int | None = None,
        allow_empty: bool = False,
        *,
        force: bool = False,
        wait_seconds: float | None = None,
    ) -> Commit:
        """Seals the staging token, applies every sealed token onto the head and moves the branch: the steps of
        commit/steps.py, inline or as the commit workflow above its threshold (workflow_runner.py), waited for up
        to ``wait_seconds`` (None: the configured wait). Raises StillRunning with the task id when it goes on.

        The branch move is a compare-and-swap; when it loses to another commit the work is redone from what is
        still sealed. When the winner committed our changes already, this request answers NoChanges: the
        winner's commit answers the winner's request only."""
        if not message:
            raise errors.Invalid("commit message is required")
        request = CommitRequest(
            repo_id,
            branch_id,
            uuid.uuid4().hex,
            committer,
            message,
            self._parts.now() if date is None else float(date),
            dict(metadata or {}),
            allow_empty,
            force,
        )
        return self._runner.commit(request, self._wait(wait_seconds))

    def commit_status(self, repo_id: str, branch_id: str, task_id: str) -> TaskStatus:
        """A commit task's status (lakeFS's commitAsyncStatus). Raises NotFound for an id that names no commit
        task of this branch."""
        return self._runner.commit_status(repo_id, branch_id, task_id)

    def _wait(self, wait_seconds: float | None) -> float:
        return self._wait_seconds if wait_seconds is None else wait_seconds
