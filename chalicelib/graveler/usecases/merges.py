"""The merge use case: it builds its request (merge/request.py) and hands it to the one inline-or-workflow decision
(workflow_runner.py), which runs the steps of merge/ (what the merge workflow's tasks run too)."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..merge import MergeRequest, MergeSteps
from ..ports import RefStore
from ..reads.shared import CommitOf
from ..records import BranchID, Commit, Repository
from ..runs.workflow_runner import Runner, TaskStatus

__all__ = ["MergeParts", "Merges"]


@dataclass(frozen=True, slots=True)
class MergeParts:
    """What the merge use case uses: the ref store (the destination's check), the one inline-or-workflow decision,
    the merge's steps, how long a caller waits for a workflow by default, and three of the shared reads."""

    refs: RefStore
    runner: Runner
    steps: MergeSteps
    wait_seconds: float
    get_repository: Callable[[str], Repository]
    commit_of: CommitOf
    now: Callable[[], float]


class Merges:
    """The merge use case and its task's status. ``steps``: what a merge runs, inline or as the merge workflow's
    tasks (and an import's merge step)."""

    def __init__(self, parts: MergeParts) -> None:
        self._refs = parts.refs
        self._parts = parts
        self._runner = parts.runner
        self._wait_seconds = parts.wait_seconds
        self.steps = parts.steps

    def run_post_hooks(self, request: MergeRequest, commit_id: str) -> None:
        """The merge workflow's last step: the post-merge hooks, by the runner's one rule."""
        self._runner.merge_post_hooks(request, commit_id)

    def merge(
        self,
        repo_id: str,
        source_ref: str,
        destination_branch: str,
        committer: str,
        message: str = "",
        metadata: dict[str, str] | None = None,
        strategy: str | None = None,
        path_strategies: Sequence[tuple[str, str]] = (),
        squash_merge: bool = False,
        allow_empty: bool = False,
        force: bool = False,
        *,
        wait_seconds: float | None = None,
    ) -> Commit:
        """Merges ``source_ref`` into the branch with a new commit (never a fast-forward): parents [destination
        head, source] (squash_merge: the head only), the strategies in its metadata. The steps of merge/steps.py,
        inline or as the merge workflow above its threshold (workflow_runner.py), waited for up to
        ``wait_seconds`` (None: the configured wait); StillRunning with the task id when it goes on.

        Raises DirtyBranch when the destination has uncommitted changes, NoChanges when the source's tree is the
        merge base's, as lakeFS decides (merging.source_holds_changes; unless allow_empty or force), Invalid for
        an unknown strategy, NoMergeBase, and MergeConflicts (409, listing the conflicts) when a conflict is
        left unresolved.
        """
        repo = self._parts.get_repository(repo_id)
        # The source first: RefNotFound before BranchNotFound, as the API has always answered.
        source = self._parts.commit_of(repo.id, source_ref)
        self._refs.get_branch(repo.id, BranchID(destination_branch))
        request = MergeRequest(
            repo_id,
            source_ref,
            source.id,
            destination_branch,
            uuid.uuid4().hex,
            committer,
            message,
            self._parts.now(),
            dict(metadata or {}),
            strategy,
            tuple(path_strategies),
            squash_merge,
            allow_empty,
            force,
        )
        return self._runner.merge(request, self._wait(wait_seconds))

    def merge_status(self, repo_id: str, destination_branch: str, task_id: str) -> TaskStatus:
        """A merge task's status (lakeFS's mergeIntoBranchAsyncStatus). Raises NotFound for an id that names no
        merge task into this branch."""
        return self._runner.merge_status(repo_id, destination_branch, task_id)

    def _wait(self, wait_seconds: float | None) -> float:
        return self._wait_seconds if wait_seconds is None else wait_seconds
