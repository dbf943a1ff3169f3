"""The Graveler facade: one object whose public methods are the engine's use cases, for the API, the S3
gateway, GC and the local stack. The use cases live in their own modules, joined here as mixins over core.py
(the ports and what they share): repositories.py, branches_and_tags.py, objects.py, diffs.py, history.py,
rewrites.py, conditional_delete.py, conditional_uploads.py, namespace_files.py and collection_inputs.py (the last
two so that nothing outside graveler touches the stores). Commit and merge are here, each the one entry of its
package (commit/, merge/), inline or as a workflow through workflow_runner.py.
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Sequence

from . import errors, workflow_runner
from .branches_and_tags import BranchesAndTags
from .collection_inputs import CollectionInputs
from .commit import CommitRequest, CommitSteps
from .commit_records import CommitRecords
from .committed import CommittedManager, RangeParams
from .conditional_delete import ConditionalDelete
from .conditional_uploads import ConditionalUploads
from .diffs import Diffs
from .history import History
from .merge import MergeRequest, MergeSteps
from .namespace_files import NamespaceStorage
from .records import (
    BranchID,
    Commit,
)
from .repositories import Repositories
from .rewrites import Rewrites
from .staged_objects import StagedObjects
from .workflow_runner import TaskStatus

# The committed-data manager and its range parameters are named here for wiring, which builds the engine:
# committed/ itself is internal to graveler.
__all__ = ["CommittedManager", "Graveler", "RangeParams"]


class Graveler(
    Repositories,
    BranchesAndTags,
    StagedObjects,
    ConditionalDelete,
    ConditionalUploads,
    Diffs,
    History,
    Rewrites,
    NamespaceStorage,
    CollectionInputs,
    CommitRecords,
):
    """The versioning engine's use cases."""

    @functools.cached_property
    def commit_steps(self) -> CommitSteps:
        """The commit as steps over these ports (what ``commit`` runs, and the commit workflow's tasks)."""
        return CommitSteps(
            self.refs,
            self.staging,
            self.blocks,
            self.committed.params,
            storage=self.committed.storage,
            sleep=self._sleep,
            guard=self.guard,
        )

    @functools.cached_property
    def merge_steps(self) -> MergeSteps:
        """The merge as steps over these ports (what ``merge`` runs, and the merge workflow's tasks)."""
        return MergeSteps(self.refs, self.staging, self.blocks, self.committed, sleep=self._sleep)

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
            self.now() if date is None else float(date),
            dict(metadata or {}),
            allow_empty,
            force,
        )
        return workflow_runner.commit(self, request, self._wait(wait_seconds))

    def commit_status(self, repo_id: str, branch_id: str, task_id: str) -> TaskStatus:
        """A commit task's status (lakeFS's commitAsyncStatus). Raises NotFound for an id that names no commit
        task of this branch."""
        return workflow_runner.commit_status(self, repo_id, branch_id, task_id)

    def _wait(self, wait_seconds: float | None) -> float:
        return self.workflows.wait_seconds if wait_seconds is None else wait_seconds

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
        repo = self.get_repository(repo_id)
        # The source first: RefNotFound before BranchNotFound, as the API has always answered.
        source = self._commit_of(repo.id, source_ref)
        self.refs.get_branch(repo.id, BranchID(destination_branch))
        request = MergeRequest(
            repo_id,
            source_ref,
            source.id,
            destination_branch,
            uuid.uuid4().hex,
            committer,
            message,
            self.now(),
            dict(metadata or {}),
            strategy,
            tuple(path_strategies),
            squash_merge,
            allow_empty,
            force,
        )
        return workflow_runner.merge(self, request, self._wait(wait_seconds))

    def merge_status(self, repo_id: str, destination_branch: str, task_id: str) -> TaskStatus:
        """A merge task's status (lakeFS's mergeIntoBranchAsyncStatus). Raises NotFound for an id that names no
        merge task into this branch."""
        return workflow_runner.merge_status(self, repo_id, destination_branch, task_id)
