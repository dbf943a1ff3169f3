"""Commit history: the walk behind the log, and its filters (objects, prefixes, since, stop_at, limit).

The walk from a commit either follows first parents only, or visits every ancestor once, newest first by
creation date, as lakeFS's log does (its commit iterator: a heap on the creation time, sub-second included, and
between equal times the greater commit id first). A path filter keeps the commits
with exactly one parent that changed one of the objects or something under one of the prefixes relative to that
parent; like lakeFS, it never keeps merge commits (nor the initial commit).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from ..ports import RefStore
from ..records import Commit, CommitID, Page, RepositoryID

__all__ = [
    "LogFilter",
    "log_page",
]

# (parent, commit, key to start at) -> the first key >= start whose identity differs between them, or None.
FirstDifference = Callable[[Commit, Commit, str], str | None]


def walk(refs: RefStore, repo_id: RepositoryID, start: CommitID, first_parent: bool) -> Iterator[Commit]:
    """The commits reachable from ``start`` (itself first), each once, newest first."""
    if first_parent:
        current: CommitID | None = start
        while current:
            commit = refs.get_commit(repo_id, current)
            yield commit
            current = commit.parents[0] if commit.parents else None
        return
    seen = {start}
    queue = [_Newest(refs.get_commit(repo_id, start))]
    while queue:
        commit = heapq.heappop(queue).commit
        yield commit
        for parent_id in commit.parents:
            if parent_id not in seen:
                seen.add(parent_id)
                heapq.heappush(queue, _Newest(refs.get_commit(repo_id, parent_id)))


@dataclass(frozen=True, slots=True)
class _Newest:
    """A commit in the walk's heap, which pops the newest first: the later creation date, and of two equal dates
    the greater commit id (lakeFS's order)."""

    commit: Commit

    def __lt__(self, other: _Newest) -> bool:
        mine, theirs = self.commit, other.commit
        if mine.creation_date != theirs.creation_date:
            return mine.creation_date > theirs.creation_date
        return mine.id > theirs.id


@dataclass(frozen=True, slots=True)
class LogFilter:
    """The log's options besides the start and the page. ``since`` is unix seconds: the walk stops at the
    first older commit. ``stop_at`` is a commit id: it is listed, and nothing after it. ``limit``: the page
    holds at most ``amount`` commits and never says there is more."""

    objects: tuple[str, ...] = ()
    prefixes: tuple[str, ...] = ()
    since: int | None = None
    stop_at: CommitID | None = None
    limit: bool = False
    first_parent: bool = False

    @property
    def by_path(self) -> bool:
        return bool(self.objects or self.prefixes)


def touches(
    parent: Commit, commit: Commit, objects: Sequence[str], prefixes: Sequence[str], first_difference: FirstDifference
) -> bool:
    """Whether ``commit`` changed one of the objects, or a key under one of the prefixes, since ``parent``."""
    if parent.meta_range_id == commit.meta_range_id:
        return False
    for path in objects:
        if first_difference(parent, commit, path) == path:
            return True
    for prefix in prefixes:
        found = first_difference(parent, commit, prefix)
        if found is not None and found.startswith(prefix):
            return True
    return False


def log_page(
    refs: RefStore,
    repo_id: RepositoryID,
    start: CommitID,
    options: LogFilter,
    after: str,
    limit: int,
    first_difference: FirstDifference,
) -> Page[Commit]:
    """One page of the history from ``start``; ``after`` is the last commit id of the previous page."""
    commits = walk(refs, repo_id, start, options.first_parent)
    if after:
        for commit in commits:
            if commit.id == after:
                break
    results: list[Commit] = []
    wanted = limit if options.limit else limit + 1
    for commit in commits:
        if options.since is not None and commit.creation_date < options.since:
            break
        if _kept(refs, repo_id, commit, options, first_difference):
            results.append(commit)
            if len(results) >= wanted:
                break
        if options.stop_at is not None and commit.id == options.stop_at:
            break
    has_more = len(results) > limit
    results = results[:limit]
    return Page(results, has_more, results[-1].id if has_more else "")


def _kept(
    refs: RefStore, repo_id: RepositoryID, commit: Commit, options: LogFilter, first_difference: FirstDifference
) -> bool:
    if not options.by_path:
        return True
    if len(commit.parents) != 1:
        return False
    parent = refs.get_commit(repo_id, commit.parents[0])
    return touches(parent, commit, options.objects, options.prefixes, first_difference)
