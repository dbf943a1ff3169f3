"""What garbage collection reads of a repository: every repository, the addresses staged on its branches, its
branch heads and all its commits. GC's prepare (chalicelib/gc/prepare.py) calls these in the order its safety
argument needs (staging, then heads, then commits); each reads the stores afresh."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from ..branches.branch_moves import release_expired
from ..ports import RefStore, StagingStore
from ..records import Branch, BranchID, Commit, CommitID, Repository
from ..writes.staging import branch_tokens

__all__ = ["CollectionInputs", "CollectionPorts"]

_PAGE = 1000


@dataclass(frozen=True, slots=True)
class CollectionPorts:
    """What garbage collection's reads use: the ref and staging stores, and the clock its budget is counted on."""

    refs: RefStore
    staging: StagingStore
    clock: Callable[[], float]


class CollectionInputs:
    """The reads of garbage collection."""

    def __init__(self, ports: CollectionPorts) -> None:
        self._ports = ports

    def iterate_repositories(self) -> Iterator[Repository]:
        """Every repository, by id (also those being deleted: GC skips them when it reads them)."""
        after = ""
        while True:
            page = self._ports.refs.list_repositories(after, _PAGE)
            yield from page
            if len(page) < _PAGE:
                return
            after = page[-1].id

    def _all_branches(self, repo: Repository) -> Iterator[Branch]:
        after = ""
        while True:
            page = self._ports.refs.list_branches(repo.id, after, _PAGE)
            yield from page
            if len(page) < _PAGE:
                return
            after = page[-1].id

    def staged_addresses(self, repo: Repository) -> set[str]:
        """The physical address of every entry staged on any branch, in its current or sealed tokens. Retired
        tokens are left out: what a move committed is kept by its commit, and what a reset discarded is garbage;
        a reader that still reaches it through a record from before the reset is the same race as one reading
        an object deleted meanwhile (the minimum age keeps recent objects either way)."""
        found: set[str] = set()
        for branch in self._all_branches(repo):
            for token in branch_tokens(branch):
                for staged in self._ports.staging.iterate(token):
                    if staged.value is not None:
                        found.add(staged.value.physical_address)
        return found

    def release_retired(self, repo: Repository, deadline: float | None = None) -> int:
        """Drops every branch's expired retired tokens (branch_moves.release_expired): the sweep, the only place
        retired tokens are dropped. ``deadline`` (by the engine's clock): stop then, leaving the rest for the next
        sweep. The entries still retired, over the branches it reached."""
        left = 0
        for branch in self._all_branches(repo):
            if deadline is not None and self._ports.clock() >= deadline:
                left += len(branch.retired_tokens)
                continue
            left += len(
                release_expired(
                    self._ports.refs, self._ports.staging, repo.id, branch.id, branch, None, deadline, self._ports.clock
                )
            )
        return left

    def branch_heads(self, repo: Repository) -> dict[BranchID, CommitID]:
        """Every branch's head commit."""
        return {branch.id: branch.commit_id for branch in self._all_branches(repo)}

    def all_commits(self, repo: Repository) -> dict[CommitID, Commit]:
        """Every commit of the repository, reachable or not."""
        return {commit.id: commit for commit in self._ports.refs.iterate_commits(repo.id)}
