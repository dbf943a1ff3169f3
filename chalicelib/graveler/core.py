"""What every use case of the Graveler facade stands on: the ports it was built with, and the reads and checks
they share (resolving refs, the live repository, a repository open for writes, the checks before a branch move,
a new commit record, paging by id). The use cases are mixins over this class (repositories.py,
branches_and_tags.py, objects.py, diffs.py, history.py, rewrites.py); service.py joins them into ``Graveler``."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from . import move_checks
from .actions.files_cache import ActionFilesCache
from .caches import TTLCache
from .collected import CollectedCheck
from .committed import CommittedManager
from .identity import new_commit
from .listing import clamp_amount
from .ports import BlockStore, RefStore, StagingStore
from .protection import BranchProtection, NoProtection
from .records import (
    Branch,
    BranchID,
    Commit,
    CommitID,
    MetaRangeID,
    Page,
    Repository,
    RepositoryID,
    ResolvedRef,
    StagingToken,
)
from .refs import resolve_ref
from .workflow_runner import Workflows

if TYPE_CHECKING:
    from .actions import HookEvent, HookRunner

__all__ = ["UPLOAD_BRANCH_TTL_SECONDS", "GravelerCore"]

# How long a branch an upload address was issued for is taken to still exist without reading it again.
UPLOAD_BRANCH_TTL_SECONDS = 2.0


class GravelerCore:
    """The ports and the shared reads and checks of every use case."""

    def __init__(
        self,
        refs: RefStore,
        staging: StagingStore,
        blocks: BlockStore,
        committed: CommittedManager,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
        protection: BranchProtection | None = None,
        collected: CollectedCheck | None = None,
        namespace_prefix: str | None = None,
        workflows: Workflows | None = None,
        hooks: HookRunner | None = None,
    ) -> None:
        """``namespace_prefix``: where repositories may live (``s3://<bucket>/`` of the deployment); None: any.
        ``workflows``: where large commits and merges run (workflow_runner.py); None: always inline."""
        self.workflows = workflows or Workflows()
        self.refs = refs
        self.namespace_prefix = namespace_prefix
        self.staging = staging
        self.blocks = blocks
        self.committed = committed
        self._clock = clock
        self._sleep = sleep
        # The branch protection rules (None: an engine without a rules store, where nothing is protected).
        self.protection = protection
        self.guard: BranchProtection | NoProtection = protection or NoProtection()
        # Which entries' data garbage collection deleted, for the reads that do not touch the data themselves.
        self.collected = collected or CollectedCheck(blocks)
        # The hooks of actions (None: an engine that runs none).
        self.hooks = hooks
        # The action files of commits, which every guarded operation looks up twice.
        self.action_files_cache = ActionFilesCache()
        # Branches an upload address was handed out for lately (objects.py, check_upload_branch).
        self.upload_branches: TTLCache[tuple[str, str], bool] = TTLCache(UPLOAD_BRANCH_TTL_SECONDS)

    def run_pre_hooks(self, event: HookEvent, branch: Branch | None = None) -> None:
        """Before the operation moves anything and holding no lock; raises HookAborted (412) when a hook fails.
        ``branch``: the event's actions ref as this request read it (a branch), so it is not read again."""
        if self.hooks is not None:
            self.hooks.run(event, branch)

    def run_post_hooks(self, event: HookEvent) -> None:
        """After the operation; failures are recorded in the run, never raised (the operation stands)."""
        if self.hooks is not None:
            self.hooks.run_post(event)

    def now(self) -> float:
        """The time commits are dated with (unix seconds, sub-second kept: the log orders by it) when the caller
        gives none."""
        return self._clock()

    def resolve(self, repo_id: str, ref: str) -> ResolvedRef:
        return resolve_ref(self.refs, RepositoryID(repo_id), ref)

    def get_commit(self, repo_id: str, ref: str) -> Commit:
        repo = self.get_repository(repo_id)
        return self.refs.get_commit(repo.id, self.resolve(repo.id, ref).commit_id)

    def get_repository(self, repo_id: str) -> Repository:
        return move_checks.live_repository(self.refs, repo_id)

    def committed_for(self, repo: Repository) -> CommittedManager:
        """The committed manager that writes with the repository's range format (reads are the same for every
        format), so that its cuts, and its ids, never change."""
        return self.committed.for_format(repo.range_format)

    def repository_for_write(self, repo_id: str, force: bool) -> Repository:
        """The repository; read-only ones only with ``force`` (lakeFS's force flag on branch operations)."""
        return move_checks.repository_for_write(self.refs, repo_id, force)

    def _commit_of(self, repo_id: RepositoryID, ref: str) -> Commit:
        return self.refs.get_commit(repo_id, self.resolve(repo_id, ref).commit_id)

    def refuse_dirty(self, repo: Repository, branch: Branch, tokens: Sequence[StagingToken]) -> None:
        move_checks.refuse_dirty(self.refs, self.staging, self.committed, repo, branch, tokens)

    def prepare_move(self, repo: Repository, branch_id: BranchID) -> None:
        move_checks.prepare_move(self.refs, self.staging, self.committed, repo, branch_id, self._sleep)

    def _writable_repository(self, repo_id: str, force: bool = False) -> Repository:
        """The repository; a read-only one only with ``force`` (lakeFS's ReadOnly && !Force), else
        ReadOnlyRepository (403)."""
        return move_checks.repository_for_write(self.refs, repo_id, force)

    def _make_commit(
        self,
        committer: str,
        message: str,
        meta_range_id: MetaRangeID,
        creation_date: float,
        metadata: dict[str, str],
        parents: tuple[CommitID, ...],
        generation: int,
    ) -> Commit:
        return new_commit(committer, message, meta_range_id, creation_date, metadata, parents, generation)

    @staticmethod
    def _page_by_id(
        fetch: Callable[[str, int], list],  # type: ignore[type-arg]
        prefix: str,
        after: str,
        amount: int | None,
        keep: Callable[[Any], bool] | None = None,
    ) -> Page:  # type: ignore[type-arg]
        """A page of records with ``id`` from a store listing ids > after, filtered by prefix and by ``keep``."""
        limit = clamp_amount(amount)
        # ids > prefix[:-1] include every id that starts with prefix (and a few before it, skipped below).
        start = prefix[:-1] if prefix and prefix > after else after
        items: list = []  # type: ignore[type-arg]
        while len(items) <= limit:
            batch = fetch(start, limit + 1)
            for item in batch:
                if item.id.startswith(prefix):
                    if keep is None or keep(item):
                        items.append(item)
                elif item.id > prefix:
                    batch = []
                    break
            if len(batch) <= limit:
                break
            start = batch[-1].id
        has_more = len(items) > limit
        items = items[:limit]
        return Page(items, has_more, items[-1].id if has_more else "")
