"""Branches and tags: create (tied to the repository's generation), read, list by id, delete (a branch's
staging tokens dropped with it; the default branch and protected branches refused)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from .. import errors
from ..actions import HookEvent, HookRunner
from ..actions.events import EventType
from ..actions.operations import ref_event
from ..branches.branch_moves import new_staging_token, retired_tokens
from ..branches.protection import BranchProtection, NoProtection
from ..ports import RefStore, StagingStore
from ..reads.shared import RepositoryForWrite, RunPreHooks, page_by_id
from ..records import (
    Branch,
    BranchID,
    Page,
    Repository,
    ResolvedRef,
    Tag,
    TagID,
)
from ..storage.caches import TTLCache
from ..validation import (
    validate_branch_id,
    validate_tag_id,
)
from ..writes.staging import branch_tokens, drop_tokens

__all__ = ["BranchParts", "BranchesAndTags"]


@dataclass(frozen=True, slots=True)
class BranchParts:
    """What the branch and tag use cases use: the ref and staging stores, the guard, the hooks (None: none
    run), the branches uploads went to lately, and the shared reads and hook calls."""

    refs: RefStore
    staging: StagingStore
    guard: BranchProtection | NoProtection
    upload_branches: TTLCache[tuple[str, str], Branch]
    hooks: HookRunner | None
    get_repository: Callable[[str], Repository]
    get_branch: Callable[[str, str], Branch]
    resolve: Callable[[str, str], ResolvedRef]
    repository_for_write: RepositoryForWrite
    run_pre_hooks: RunPreHooks
    run_post_hooks: Callable[[HookEvent], None]


class BranchesAndTags:
    """The branch and tag use cases."""

    def __init__(self, parts: BranchParts) -> None:
        self._parts = parts

    def get_branch(self, repo_id: str, branch_id: str) -> Branch:
        """The branch of the live repository. Raises BranchNotFound."""
        return self._parts.get_branch(repo_id, branch_id)

    def create_branch(
        self, repo_id: str, branch_id: str, source_ref: str, hidden: bool = False, force: bool = False
    ) -> Branch:
        """A new branch at ``source_ref``'s commit; in a read-only repository only with ``force`` (and then without
        hooks, as lakeFS runs none on read-only repositories)."""
        validate_branch_id(branch_id)
        repo = self._parts.repository_for_write(repo_id, force)
        source = self._parts.resolve(repo.id, source_ref)
        branch = Branch(BranchID(branch_id), source.commit_id, new_staging_token(repo_id, branch_id), hidden=hidden)
        pre = ref_event(
            EventType.PRE_CREATE_BRANCH,
            repo.id,
            source.commit_id,
            branch_id=branch_id,
            source_ref=source_ref,
            commit_id=source.commit_id,
        )
        self._pre_hooks(repo, pre)
        # Tied to this generation of the repository: a delete (and re-creation) meanwhile makes it a 404.
        self._parts.refs.create_branch(repo.id, branch, generation=repo.generation)
        self._post_hooks(repo, replace(pre, event_type=EventType.POST_CREATE_BRANCH, actions_ref=branch.commit_id))
        return branch

    def _pre_hooks(self, repo: Repository, event: HookEvent) -> None:
        # lakeFS runs no hooks on a read-only repository (a write there needs force): neither does Lakelet.
        if not repo.read_only:
            self._parts.run_pre_hooks(event)

    def _post_hooks(self, repo: Repository, event: HookEvent) -> None:
        if not repo.read_only:
            self._parts.run_post_hooks(event)

    def list_branches(
        self, repo_id: str, prefix: str = "", after: str = "", amount: int | None = 100, show_hidden: bool = False
    ) -> Page[Branch]:
        """Branches by id; hidden ones only with ``show_hidden`` (as lakeFS)."""
        repo = self._parts.get_repository(repo_id)
        return page_by_id(
            lambda a, n: self._parts.refs.list_branches(repo.id, a, n),
            prefix,
            after,
            amount,
            keep=None if show_hidden else lambda branch: not branch.hidden,
        )

    def delete_branch(self, repo_id: str, branch_id: str, force: bool = False) -> None:
        repo = self._parts.repository_for_write(repo_id, force)
        if branch_id == repo.default_branch_id:
            raise errors.Forbidden(f"cannot delete repository default branch: {branch_id}")
        self._parts.guard.refuse_delete(repo, branch_id)
        branch = self._parts.refs.get_branch(repo.id, BranchID(branch_id))
        pre = ref_event(
            EventType.PRE_DELETE_BRANCH,
            repo.id,
            branch_id,
            branch_id=branch_id,
            source_ref=branch_id,
            commit_id=branch.commit_id,
        )
        self._pre_hooks(repo, pre)
        self._parts.refs.delete_branch(repo.id, branch.id)
        self._parts.upload_branches.drop((repo.id, branch_id))
        drop_tokens(self._parts.staging, [*branch_tokens(branch), *retired_tokens(branch)])
        # The branch is gone: its post-delete actions are read at the commit it pointed at.
        self._post_hooks(repo, replace(pre, event_type=EventType.POST_DELETE_BRANCH, actions_ref=branch.commit_id))

    def create_tag(self, repo_id: str, tag_id: str, ref: str, force: bool = False) -> Tag:
        """A new tag; ``force`` writes into a read-only repository (lakeFS's only meaning of it here: an existing
        tag is still TagExists, 409)."""
        validate_tag_id(tag_id)
        repo = self._parts.repository_for_write(repo_id, force)
        tag = Tag(TagID(tag_id), self._parts.resolve(repo.id, ref).commit_id)
        pre = ref_event(
            EventType.PRE_CREATE_TAG, repo.id, tag.commit_id, tag_id=tag_id, source_ref=ref, commit_id=tag.commit_id
        )
        self._pre_hooks(repo, pre)
        self._parts.refs.create_tag(repo.id, tag, generation=repo.generation)
        self._post_hooks(repo, replace(pre, event_type=EventType.POST_CREATE_TAG))
        return tag

    def get_tag(self, repo_id: str, tag_id: str) -> Tag:
        repo = self._parts.get_repository(repo_id)
        return self._parts.refs.get_tag(repo.id, TagID(tag_id))

    def list_tags(self, repo_id: str, prefix: str = "", after: str = "", amount: int | None = 100) -> Page[Tag]:
        repo = self._parts.get_repository(repo_id)
        return page_by_id(lambda a, n: self._parts.refs.list_tags(repo.id, a, n), prefix, after, amount)

    def delete_tag(self, repo_id: str, tag_id: str, force: bool = False) -> None:
        repo = self._parts.repository_for_write(repo_id, force)
        if self._parts.hooks is None or repo.read_only:
            self._parts.refs.delete_tag(repo.id, TagID(tag_id))
            return
        # The tag's commit is where its delete hooks' actions are read.
        tag = self._parts.refs.get_tag(repo.id, TagID(tag_id))
        pre = ref_event(
            EventType.PRE_DELETE_TAG,
            repo.id,
            tag.commit_id,
            tag_id=tag_id,
            source_ref=tag_id,
            commit_id=tag.commit_id,
        )
        self._parts.run_pre_hooks(pre)
        self._parts.refs.delete_tag(repo.id, TagID(tag_id))
        self._parts.run_post_hooks(replace(pre, event_type=EventType.POST_DELETE_TAG))
