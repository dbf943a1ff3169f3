"""The merge base of two commits: git's best common ancestor, found over commit generations.

Both commits are queued in a max-heap by generation (ties: the later creation date first). Each popped commit
passes the sides that reached it (left, right, or both) on to its parents; the first parent reached from both
sides is the best common ancestor: any other common ancestor is an ancestor of it, since a commit's generation
is greater than all of its ancestors'.
"""

from __future__ import annotations

import heapq

from .. import errors
from ..ports import RefStore
from ..records import Commit, CommitID, RepositoryID

__all__ = ["require_merge_base"]

_LEFT = 1
_RIGHT = 2


def find_merge_base(refs: RefStore, repo_id: RepositoryID, left: CommitID, right: CommitID) -> Commit | None:
    """The best common ancestor of ``left`` and ``right`` (either one itself when it is an ancestor of the
    other), or None when they have none. Raises CommitNotFound for a missing commit."""
    first = refs.get_commit(repo_id, left)
    if left == right:
        return first
    second = refs.get_commit(repo_id, right)
    reached: dict[CommitID, int] = {left: _LEFT, right: _RIGHT}
    queue: list[tuple[int, float, str, Commit]] = []

    def push(commit: Commit) -> None:
        heapq.heappush(queue, (-commit.generation, -commit.creation_date, commit.id, commit))

    push(first)
    push(second)
    while queue:
        commit = heapq.heappop(queue)[3]
        flags = reached[commit.id]
        for parent in commit.parents:
            if parent not in reached:
                reached[parent] = 0
                push(refs.get_commit(repo_id, parent))
            reached[parent] |= flags
            if reached[parent] == _LEFT | _RIGHT:
                return refs.get_commit(repo_id, parent)
    return None


def require_merge_base(refs: RefStore, repo_id: RepositoryID, left: CommitID, right: CommitID) -> Commit:
    """find_merge_base, raising NoMergeBase (400) when there is none."""
    base = find_merge_base(refs, repo_id, left, right)
    if base is None:
        raise errors.NoMergeBase(f"commits {left[:12]} and {right[:12]} have no common ancestor")
    return base
