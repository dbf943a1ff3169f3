"""The reads and checks every use case shares: resolving refs, the live repository, a repository open for writes,
a branch, the checks before a branch move, the hook calls around an operation, and paging records by id. One
``Reads`` is built over the engine's parts (parts.py) and handed to each use case with them: a helper they hold,
not a base class they extend."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from ..branches import move_checks
from ..committed import CommittedManager
from ..parts import EngineParts
from ..records import Branch, BranchID, Commit, Page, Repository, RepositoryID, ResolvedRef, StagingToken
from ..refs import resolve_ref
from .listing import clamp_amount

if TYPE_CHECKING:
    from ..actions import HookEvent

__all__ = ["CommitOf", "Reads", "RepositoryForWrite", "RunPreHooks", "page_by_id"]


# The shared reads a use case's own record names, as callables (each a bound method of one ``Reads``; a test may
# give any function of the same shape). Those with a default argument are Protocols; the others plain Callables.
class RepositoryForWrite(Protocol):
    """``Reads.repository_for_write``."""

    def __call__(self, repo_id: str, force: bool = False) -> Repository: ...


class RunPreHooks(Protocol):
    """``Reads.run_pre_hooks``."""

    def __call__(self, event: HookEvent, branch: Branch | None = None) -> str: ...


class CommitOf(Protocol):
    """``Reads.commit_of``."""

    def __call__(self, repo_id: RepositoryID, ref: str, branches: dict[BranchID, Branch] | None = None) -> Commit: ...


class Reads:
    """The shared reads and checks over one engine's parts."""

    def __init__(self, parts: EngineParts) -> None:
        self._parts = parts

    def run_pre_hooks(self, event: HookEvent, branch: Branch | None = None) -> str:
        """Before the operation moves anything and holding no lock; raises HookAborted (412) when a hook fails.
        ``branch``: the event's actions ref as this request read it (a branch), so it is not read again. Answers the
        run's id ("" when no action matched): the post-event's ``pre_run_id``."""
        if self._parts.hooks is None:
            return ""
        run = self._parts.hooks.run(event, branch)
        return "" if run is None else run.run_id

    def run_post_hooks(self, event: HookEvent) -> None:
        """After the operation; failures are recorded in the run, never raised (the operation stands)."""
        if self._parts.hooks is not None:
            self._parts.hooks.run_post(event)

    def now(self) -> float:
        """The time commits are dated with (unix seconds, sub-second kept: the log orders by it) when the caller
        gives none."""
        return self._parts.clock()

    def resolve(self, repo_id: str, ref: str) -> ResolvedRef:
        return resolve_ref(self._parts.refs, RepositoryID(repo_id), ref)

    def get_commit(self, repo_id: str, ref: str) -> Commit:
        repo = self.get_repository(repo_id)
        return self._parts.refs.get_commit(repo.id, self.resolve(repo.id, ref).commit_id)

    def get_repository(self, repo_id: str) -> Repository:
        return move_checks.live_repository(self._parts.refs, repo_id)

    def get_branch(self, repo_id: str, branch_id: str) -> Branch:
        repo = self.get_repository(repo_id)
        return self._parts.refs.get_branch(repo.id, BranchID(branch_id))

    def committed_for(self, repo: Repository) -> CommittedManager:
        """The committed manager that writes with the repository's range format (reads are the same for every
        format), so that its cuts, and its ids, never change."""
        return self._parts.committed.for_format(repo.range_format)

    def repository_for_write(self, repo_id: str, force: bool = False) -> Repository:
        """The repository; a read-only one only with ``force`` (lakeFS's ReadOnly && !Force), else
        ReadOnlyRepository (403)."""
        return move_checks.repository_for_write(self._parts.refs, repo_id, force)

    def commit_of(self, repo_id: RepositoryID, ref: str, branches: dict[BranchID, Branch] | None = None) -> Commit:
        """The commit ``ref`` resolves to in a repository already read. ``branches``: see refs.resolve_ref (the
        branches this request read already)."""
        resolved = resolve_ref(self._parts.refs, repo_id, ref, branches)
        return self._parts.refs.get_commit(repo_id, resolved.commit_id)

    def refuse_dirty(self, repo: Repository, branch: Branch, tokens: Sequence[StagingToken]) -> None:
        parts = self._parts
        move_checks.refuse_dirty(parts.refs, parts.staging, parts.committed, repo, branch, tokens)

    def prepare_move(self, repo: Repository, branch_id: BranchID) -> None:
        parts = self._parts
        move_checks.prepare_move(parts.refs, parts.staging, parts.committed, repo, branch_id, parts.sleep)


def page_by_id(
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
