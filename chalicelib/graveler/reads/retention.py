"""Which commits garbage collection keeps: the lakeFS retention rules as a pure function of the commit graph.

Starting points are every branch head (always kept) and every dangling leaf: a commit that is nobody's first
parent and no branch's head (left behind by a deleted branch, a reset, or a tag on an abandoned line). Each
starting point has a threshold, ``now - days``, with ``days`` from its branch's rule, else the default rule
(dangling leaves always take the default). From each starting point the walk follows first parents: a commit
created after its threshold keeps its first parent active, so a branch keeps every commit inside its window
plus the first one before it. A dangling leaf counts as if a head created at the same moment pointed at it:
it is kept only when it was itself created inside the default window. Where several walks reach a commit, the
union is kept, i.e. the longest retention wins.

Days are whole periods of 86,400 seconds; a commit created exactly at its threshold is outside its window.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass

from ..errors import CommitNotFound
from ..records import BranchID, Commit, CommitID

__all__ = ["BranchRetention", "RetentionRules", "active_commits"]

SECONDS_PER_DAY = 86_400


@dataclass(frozen=True, slots=True)
class BranchRetention:
    """A branch's own retention window."""

    branch_id: BranchID
    retention_days: int


@dataclass(frozen=True, slots=True)
class RetentionRules:
    """A repository's garbage collection rules (lakeFS GarbageCollectionRules)."""

    default_retention_days: int
    branches: tuple[BranchRetention, ...] = ()

    def days_for(self, branch_id: BranchID | None) -> int:
        """The window of a branch: its own rule, else the default (also for dangling leaves, ``None``)."""
        if branch_id is not None:
            for rule in self.branches:
                if rule.branch_id == branch_id:
                    return rule.retention_days
        return self.default_retention_days


@dataclass(frozen=True, slots=True)
class StartingPoint:
    """Where a walk starts: a branch head, or (``branch_id`` None) a dangling leaf."""

    commit_id: CommitID
    branch_id: BranchID | None


def dangling_leaves(commits: Mapping[CommitID, Commit], heads: Collection[CommitID]) -> list[CommitID]:
    """Commits that are nobody's first parent and no branch's head, in id order."""
    first_parents = {commit.parents[0] for commit in commits.values() if commit.parents}
    head_set = set(heads)
    return sorted(cid for cid in commits if cid not in first_parents and cid not in head_set)


def starting_points(commits: Mapping[CommitID, Commit], heads: Mapping[BranchID, CommitID]) -> list[StartingPoint]:
    """Every branch head, then every dangling leaf."""
    points = [StartingPoint(cid, bid) for bid, cid in sorted(heads.items())]
    points.extend(StartingPoint(cid, None) for cid in dangling_leaves(commits, heads.values()))
    return points


def active_commits(
    commits: Mapping[CommitID, Commit],
    heads: Mapping[BranchID, CommitID],
    rules: RetentionRules,
    now: float,
) -> frozenset[CommitID]:
    """The commits whose objects garbage collection must keep.

    ``commits`` is every commit of the repository, ``heads`` maps each branch to its head commit, ``now`` is
    unix seconds. Raises CommitNotFound when a head or a first parent is missing from ``commits``: the graph
    is incomplete, and collecting on a partial view could delete live data.
    """

    def get(cid: CommitID) -> Commit:
        try:
            return commits[cid]
        except KeyError:
            raise CommitNotFound(f"commit {cid} is referenced but missing: refusing to compute retention") from None

    def threshold_of(point: StartingPoint) -> float:
        return now - rules.days_for(point.branch_id) * SECONDS_PER_DAY

    active: set[CommitID] = set()
    # The earliest threshold a walk has already gone through each commit with. A walk from the same commit with
    # a later threshold (a shorter window) reaches a subset of what that walk reached, so it stops there.
    walked: dict[CommitID, float] = {}
    # Longest windows first, so shorter ones stop early where a longer walk already went.
    for point in sorted(starting_points(commits, heads), key=threshold_of):
        threshold = threshold_of(point)
        commit = get(point.commit_id)
        if point.branch_id is None and commit.creation_date <= threshold:
            continue  # a dangling leaf outside the default window keeps nothing
        active.add(commit.id)
        while True:
            earlier = walked.get(commit.id)
            if earlier is not None and earlier <= threshold:
                break
            walked[commit.id] = threshold
            if commit.creation_date <= threshold or not commit.parents:
                break
            commit = get(commit.parents[0])
            active.add(commit.id)
    return frozenset(active)
