"""Rewrites of a branch: revert and cherry-pick (a three-way merge onto the head as a new commit), reset
(uncommitted changes dropped: all, one object, a prefix) and hard reset (the branch pointed at another commit).
Every branch move goes through branch_moves.py, the one compare-and-swap loop."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .. import errors
from ..actions import HookEvent
from ..actions.events import EventType
from ..actions.operations import ref_event
from ..branches.branch_moves import move_to_commit, new_staging_token, retire, update_branch
from ..branches.protection import BranchProtection, NoProtection
from ..committed import CommittedManager, compare
from ..committed.merge import Resolver
from ..committed.mergetable import Action, Decision
from ..errors import MergeConflicts
from ..identity import new_commit
from ..ports import RefStore, StagingStore
from ..reads.shared import CommitOf, RepositoryForWrite, RunPreHooks
from ..records import (
    EMPTY_METARANGE,
    Branch,
    BranchID,
    Commit,
    Entry,
    Key,
    MetaRangeID,
    Repository,
    RepositoryID,
    ResolvedRef,
    StagingToken,
)
from ..validation import (
    validate_path,
)
from ..writes.reset import reset_key, reset_prefix
from ..writes.staging import branch_tokens

__all__ = ["RESET_ALL", "RESET_OBJECT", "RESET_PREFIX", "RewriteParts", "Rewrites"]

# What a branch reset drops (lakeFS's names).
RESET_ALL = "reset"
RESET_OBJECT = "object"
RESET_PREFIX = "common_prefix"


_REVERT_EVENTS = (EventType.PRE_REVERT, EventType.POST_REVERT)
_CHERRY_PICK_EVENTS = (EventType.PRE_CHERRY_PICK, EventType.POST_CHERRY_PICK)


@dataclass(frozen=True, slots=True)
class RewriteParts:
    """What revert, cherry-pick and reset use: the stores, the clock and sleep, the guard, and the shared
    reads, checks before a move and hook calls."""

    refs: RefStore
    staging: StagingStore
    committed: CommittedManager
    clock: Callable[[], float]
    sleep: Callable[[float], None]
    guard: BranchProtection | NoProtection
    resolve: Callable[[str, str], ResolvedRef]
    repository_for_write: RepositoryForWrite
    run_pre_hooks: RunPreHooks
    run_post_hooks: Callable[[HookEvent], None]
    commit_of: CommitOf
    committed_for: Callable[[Repository], CommittedManager]
    refuse_dirty: Callable[[Repository, Branch, Sequence[StagingToken]], None]
    prepare_move: Callable[[Repository, BranchID], None]


class Rewrites:
    """The use cases that rewrite a branch."""

    def __init__(self, parts: RewriteParts) -> None:
        self._parts = parts

    def revert(
        self,
        repo_id: str,
        branch_id: str,
        ref: str,
        committer: str,
        parent_number: int = 0,
        message: str | None = None,
        metadata: dict[str, str] | None = None,
        allow_empty: bool = False,
        force: bool = False,
    ) -> Commit:
        """A new commit on the branch undoing ``ref``: its parent merged into the branch with ``ref`` as the
        merge base. A merge commit needs ``parent_number`` (1-based) to say which parent to go back to.
        Raises DirtyBranch, NoChanges (nothing to undo, unless allow_empty) and MergeConflicts."""
        repo = self._parts.repository_for_write(repo_id, force)
        self._parts.guard.refuse_commit(repo, branch_id)
        target = self._parts.commit_of(repo.id, ref)
        if parent_number < 0:
            raise errors.Invalid("parent_number must not be negative")
        if len(target.parents) > 1 and parent_number == 0:
            raise errors.Invalid(
                f"must specify 1-based parent number for reverting merge commit: {ref} (parent_number)"
            )
        parent = self._parent_metarange(repo.id, target, max(parent_number, 1), ref)

        def build(branch: Branch) -> Commit:
            self._parts.refuse_dirty(repo, branch, branch.sealed_tokens)
            head = self._parts.refs.get_commit(repo.id, branch.commit_id)
            metarange = self._merged(
                repo, target.meta_range_id, parent, head.meta_range_id, _no_resolution, f"revert of {ref}"
            )
            if metarange == head.meta_range_id and not allow_empty:
                raise errors.NoChanges(f"reverting {ref} changes nothing on branch {branch_id}")
            return new_commit(
                committer,
                message or f"Revert {ref}",
                metarange,
                self._parts.clock(),
                dict(metadata or {}),
                (head.id,),
                head.generation + 1,
            )

        return self._hooked_rewrite(
            repo, branch_id, ref, committer, message or f"Revert {ref}", build, _REVERT_EVENTS, "revert"
        )

    def cherry_pick(
        self,
        repo_id: str,
        branch_id: str,
        ref: str,
        committer: str,
        parent_number: int | None = None,
        message: str | None = None,
        metadata: dict[str, str] | None = None,
        force: bool = False,
    ) -> Commit:
        """A new commit on the branch with the changes ``ref`` made relative to its parent (``parent_number``,
        1-based, required for a merge commit). It keeps the picked commit's message and metadata, plus
        cherry-pick-origin and cherry-pick-committer. Raises DirtyBranch and MergeConflicts."""
        repo = self._parts.repository_for_write(repo_id, force)
        self._parts.guard.refuse_commit(repo, branch_id)
        target = self._parts.commit_of(repo.id, ref)
        if parent_number is None and len(target.parents) > 1:
            raise errors.Invalid(
                f"must specify 1-based parent number for cherry-picking merge commit: {ref} (parent_number)"
            )
        number = 1 if parent_number is None else parent_number
        if number < 1 or number > len(target.parents):
            raise errors.Invalid(f"given commit does not have the given parent number: {ref} has no parent {number}")
        parent = self._parent_metarange(repo.id, target, number, ref)
        recorded = {
            **target.metadata,
            **(metadata or {}),
            "cherry-pick-origin": target.id,
            "cherry-pick-committer": target.committer,
        }

        def build(branch: Branch) -> Commit:
            self._parts.refuse_dirty(repo, branch, branch.sealed_tokens)
            head = self._parts.refs.get_commit(repo.id, branch.commit_id)
            metarange = self._merged(
                repo, parent, target.meta_range_id, head.meta_range_id, _no_resolution, f"cherry-pick of {ref}"
            )
            return new_commit(
                committer,
                message or target.message,
                metarange,
                self._parts.clock(),
                recorded,
                (head.id,),
                head.generation + 1,
            )

        return self._hooked_rewrite(
            repo, branch_id, ref, committer, message or target.message, build, _CHERRY_PICK_EVENTS, "cherry-pick"
        )

    def _hooked_rewrite(
        self,
        repo: Repository,
        branch_id: str,
        ref: str,
        committer: str,
        message: str,
        build: Callable[[Branch], Commit],
        events: tuple[EventType, EventType],
        what: str,
    ) -> Commit:
        """Moves the branch to the commit ``build`` makes, between the pre- and post-hooks of ``events``."""
        pre, post = events
        # Before the move's compare-and-swap and holding no lock: a refusing hook leaves the branch as it was.
        pre_run_id = self._parts.run_pre_hooks(
            ref_event(
                pre, repo.id, branch_id, branch_id=branch_id, source_ref=ref, committer=committer, message=message
            )
        )
        self._parts.prepare_move(repo, BranchID(branch_id))
        made = move_to_commit(
            self._parts.refs, self._parts.staging, repo.id, BranchID(branch_id), build, what, self._parts.sleep
        )
        self._parts.run_post_hooks(
            ref_event(
                post,
                repo.id,
                made.id,
                branch_id=branch_id,
                source_ref=ref,
                commit_id=made.id,
                committer=committer,
                message=made.message,
                # lakeFS writes a revert's commit onto its pre-revert run; a cherry-pick's pre-run keeps none.
                pre_run_id=pre_run_id if pre == EventType.PRE_REVERT else "",
            )
        )
        return made

    def reset_branch(
        self, repo_id: str, branch_id: str, path_type: str = RESET_ALL, path: str | None = None, force: bool = False
    ) -> None:
        """Drops uncommitted changes: all of them (``reset``), one object (``object``) or every key under a
        prefix (``common_prefix``). Dropping a change that does not exist is a no-op."""
        repo = self._parts.repository_for_write(repo_id, force)
        self._parts.guard.refuse_write(repo, branch_id)
        bid = BranchID(branch_id)
        if path_type == RESET_ALL:
            # The discarded tokens are retired: the sweep drops them after their grace, never this request.
            update_branch(
                self._parts.refs,
                repo.id,
                bid,
                lambda b: Branch(b.id, b.commit_id, new_staging_token(repo.id, b.id), (), retire(b, branch_tokens(b))),
                f"branch {bid} kept moving during the reset",
                self._parts.sleep,
            )
            return
        if path_type not in (RESET_OBJECT, RESET_PREFIX):
            raise errors.Invalid(f"reset type must be {RESET_ALL}, {RESET_OBJECT} or {RESET_PREFIX}")
        if path is None or (path_type == RESET_OBJECT and not path):
            raise errors.Invalid(f"reset of type {path_type} needs a path")
        branch = self._parts.refs.get_branch(repo.id, bid)
        head = self._parts.refs.get_commit(repo.id, branch.commit_id)

        def committed(key: Key) -> Entry | None:
            return self._parts.committed.get(repo.storage_namespace, head.meta_range_id, key)

        if path_type == RESET_OBJECT:
            validate_path(path)
            reset_key(self._parts.staging, branch, Key(path), committed)
        else:
            reset_prefix(self._parts.staging, branch, path, committed)

    def hard_reset(self, repo_id: str, branch_id: str, ref: str, force: bool = False) -> Branch:
        """Points the branch at ``ref``'s commit. Raises DirtyBranch when it has uncommitted changes."""
        repo = self._parts.repository_for_write(repo_id, force)
        self._parts.guard.refuse_commit(repo, branch_id)

        def change(branch: Branch) -> Branch:
            self._parts.refuse_dirty(repo, branch, branch.sealed_tokens)
            # Resolved on every try: "main~1" must mean the parent of the head that is actually replaced.
            target = self._parts.resolve(repo.id, ref).commit_id
            return Branch(branch.id, target, branch.staging_token, (), retire(branch, branch.sealed_tokens))

        bid = BranchID(branch_id)
        self._parts.prepare_move(repo, bid)
        _, moved = update_branch(
            self._parts.refs, repo.id, bid, change, f"branch {bid} kept moving during the hard reset", self._parts.sleep
        )
        return moved

    def _parent_metarange(self, repo_id: RepositoryID, commit: Commit, number: int, ref: str) -> MetaRangeID:
        """The metarange of the commit's parent ``number`` (1-based); empty for a commit with no parent."""
        if not commit.parents:
            return EMPTY_METARANGE
        if number > len(commit.parents):
            raise errors.Invalid(f"given commit does not have the given parent number: {ref} has no parent {number}")
        return self._parts.refs.get_commit(repo_id, commit.parents[number - 1]).meta_range_id

    def _merged(
        self,
        repo: Repository,
        base: MetaRangeID,
        source: MetaRangeID,
        dest: MetaRangeID,
        resolve: Resolver,
        what: str,
    ) -> MetaRangeID:
        """The merged metarange. Raises MergeConflicts when a conflict is left unresolved."""
        outcome = compare.merge(self._parts.committed_for(repo), repo.storage_namespace, base, source, dest, resolve)
        if outcome.metarange_id is None:
            unresolved = sum(1 for c in outcome.conflicts if c.resolution is None)
            raise MergeConflicts(f"conflict found: {unresolved} conflicting path(s) in the {what}", outcome.conflicts)
        return outcome.metarange_id


def _no_resolution(key: str, source: Action, destination: Action) -> Decision | None:
    """Revert and cherry-pick take no strategy: every conflict fails them."""
    return None
