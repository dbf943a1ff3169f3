"""What is checked before a head moves (a merge, revert, cherry-pick or hard reset), as functions over the ports,
so the merge steps and the use cases share them without one importing the other."""

from __future__ import annotations

from collections.abc import Sequence

from .. import errors
from ..committed import CommittedManager
from ..identity import entry_identity
from ..ports import RefStore, StagingStore
from ..records import Branch, BranchID, Repository, RepositoryID, RepositoryState, StagingToken
from ..writes.staging import staged_changes, token_is_empty
from .branch_moves import Sleep, seal


def live_repository(refs: RefStore, repo_id: str) -> Repository:
    """The repository; RepositoryNotFound also while it is being deleted."""
    repo = refs.get_repository(RepositoryID(repo_id))
    if repo.state is RepositoryState.IN_DELETION:
        raise errors.RepositoryNotFound(f"repository {repo_id} is being deleted")
    return repo


def repository_for_write(refs: RefStore, repo_id: str, force: bool = False) -> Repository:
    """The repository; read-only ones only with ``force`` (lakeFS's force flag on branch operations)."""
    repo = live_repository(refs, repo_id)
    if repo.read_only and not force:
        raise errors.ReadOnlyRepository(repo_id)
    return repo


def refuse_dirty(
    refs: RefStore,
    staging: StagingStore,
    committed: CommittedManager,
    repo: Repository,
    branch: Branch,
    tokens: Sequence[StagingToken],
) -> None:
    """Raises DirtyBranch when the staged entries of ``tokens`` change the branch head. Entries that change
    nothing (the committed content again, a tombstone of a key not committed: what a failed commit leaves
    sealed) do not count, as in lakeFS."""
    head = refs.get_commit(repo.id, branch.commit_id)
    for staged in staged_changes(staging, list(tokens)):
        found = committed.get(repo.storage_namespace, head.meta_range_id, staged.key)
        if staged.value is None:
            dirty = found is not None
        else:
            dirty = found is None or entry_identity(found) != entry_identity(staged.value)
        if dirty:
            raise errors.DirtyBranch(f"uncommitted changes (dirty branch): branch {branch.id}")


def prepare_move(
    refs: RefStore,
    staging: StagingStore,
    committed: CommittedManager,
    repo: Repository,
    branch_id: BranchID,
    sleep: Sleep | None = None,
) -> None:
    """What lakeFS does before a merge, revert, cherry-pick or hard reset moves a branch's head: refuse
    uncommitted changes, then seal the staging token. The move then drops every sealed token, so entries that
    changed nothing against the old head cannot turn into changes against the new one. A write that lands
    after the seal goes to the fresh token and survives the move."""
    branch = refs.get_branch(repo.id, branch_id)
    refuse_dirty(refs, staging, committed, repo, branch, [branch.staging_token])
    if not token_is_empty(staging, branch.staging_token):
        seal(refs, staging, repo.id, branch_id, sleep)


__all__ = ["live_repository", "prepare_move", "refuse_dirty", "repository_for_write"]
