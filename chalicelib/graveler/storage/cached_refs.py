"""A RefStore that remembers, per container, the records that do not change: commits forever (a commit record is
immutable: its id is the hash of its content), repositories for a short TTL (a repository changes only when it
is created or deleted; a write in this container drops it at once, another container's delete is seen within the
TTL, as lakeFS's own repository cache does). Branches and tags move, and the staging write's re-check against a
concurrent seal must read the branch as stored: they are remembered only where a :class:`ChangeWitness` can tell
that their table has not been written since they were read (the embedded local stack, whose one process answers
every write: lakelet/stack/table_writes.py). Then a remembered record is exactly what a strongly consistent read
would return now, and deployed, without a witness, every read goes to the store.

Memory is bounded by a number of entries: a commit record is a few hundred bytes plus its metadata, so the
default bound of 4,096 commits stays around a few MiB.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from .. import errors
from ..ports import RefStore
from ..records import Branch, BranchID, Commit, CommitID, Repository, RepositoryID, Tag, TagID
from .caches import LRUCache, TTLCache
from .ports import ChangeWitness

__all__ = ["CachedRefStore"]

DEFAULT_REPOSITORY_TTL_SECONDS = 2.0
DEFAULT_MAX_COMMITS = 4096
DEFAULT_MAX_REPOSITORIES = 1024
DEFAULT_MAX_REFS = 4096


class _Witnessed[V]:
    """Records read under a witness's mark, answered again while the witness says their table is unchanged; a
    record the store says is missing (``missing``, only that error) is remembered as missing the same way."""

    def __init__(self, witness: ChangeWitness, missing: type[errors.NotFound], capacity: int) -> None:
        self._witness = witness
        self._missing = missing
        self._read: LRUCache[tuple[RepositoryID, str], tuple[object, V | errors.NotFound]] = LRUCache(capacity)

    def lookup(self, key: tuple[RepositoryID, str], load: Callable[[], V]) -> V:
        found = self._read.get(key)
        if found is not None and self._witness.unchanged_since(found[0]):
            if isinstance(found[1], errors.NotFound):
                raise type(found[1])(*found[1].args)
            return found[1]
        mark = self._witness.mark()
        try:
            value = load()
        except self._missing as missing:
            self._read.put(key, (mark, missing))
            raise
        self._read.put(key, (mark, value))
        return value

    def drop(self, key: tuple[RepositoryID, str]) -> None:
        self._read.drop(key)

    def drop_repository(self, repo_id: RepositoryID) -> None:
        self._read.drop_where(lambda key: key[0] == repo_id)


class CachedRefStore:
    """Wraps a RefStore; what it does not cache goes straight to the wrapped store."""

    def __init__(
        self,
        inner: RefStore,
        repository_ttl_seconds: float = DEFAULT_REPOSITORY_TTL_SECONDS,
        max_commits: int = DEFAULT_MAX_COMMITS,
        clock: Callable[[], float] | None = None,
        *,
        branch_witness: ChangeWitness | None = None,
        tag_witness: ChangeWitness | None = None,
    ) -> None:
        """``branch_witness``, ``tag_witness``: the witnesses of the stores' branch and tag tables, where there
        are any (see the module's docstring); without one, those reads all go to the store."""
        self.inner = inner
        self._branches: _Witnessed[Branch] | None = (
            _Witnessed(branch_witness, errors.BranchNotFound, DEFAULT_MAX_REFS) if branch_witness is not None else None
        )
        self._tags: _Witnessed[Tag] | None = (
            _Witnessed(tag_witness, errors.TagNotFound, DEFAULT_MAX_REFS) if tag_witness is not None else None
        )
        self._commits: LRUCache[tuple[RepositoryID, CommitID], Commit] = LRUCache(max_commits)
        self._repositories: TTLCache[RepositoryID, Repository] = TTLCache(
            repository_ttl_seconds, clock or time.monotonic, DEFAULT_MAX_REPOSITORIES
        )

    def __getattr__(self, name: str) -> Any:
        # Whatever else the wrapped adapter offers (beyond the RefStore port) stays reachable.
        return getattr(self.inner, name)

    # ---- repositories: a short TTL, dropped by this container's own writes ----------------------------------

    def get_repository(self, repo_id: RepositoryID) -> Repository:
        return self._repositories.lookup(repo_id, lambda: self.inner.get_repository(repo_id))

    def create_repository(self, repo: Repository) -> None:
        self._repositories.drop(repo.id)
        self.inner.create_repository(repo)

    def list_repositories(self, after: str = "", limit: int = 1000) -> list[Repository]:
        return self.inner.list_repositories(after, limit)

    def delete_repository(self, repo_id: RepositoryID) -> None:
        self._repositories.drop(repo_id)
        try:
            self.inner.delete_repository(repo_id)
        finally:
            # A repository re-created under the same name has other commits; and its record changed meanwhile.
            self._repositories.drop(repo_id)
            self._commits.drop_where(lambda key: key[0] == repo_id)
            for refs in (self._branches, self._tags):
                if refs is not None:
                    refs.drop_repository(repo_id)

    # ---- commits: immutable, kept until the bound pushes them out --------------------------------------------

    def get_commit(self, repo_id: RepositoryID, commit_id: CommitID) -> Commit:
        key = (repo_id, commit_id)
        found = self._commits.get(key)
        if found is None:
            found = self.inner.get_commit(repo_id, commit_id)
            self._commits.put(key, found)
        return found

    def add_commit(self, repo_id: RepositoryID, commit: Commit) -> None:
        self.inner.add_commit(repo_id, commit)
        self._commits.put((repo_id, commit.id), commit)

    def add_commits(self, repo_id: RepositoryID, commits: Sequence[Commit]) -> None:
        # Not remembered here: a restore writes them by the thousand, and a later read is the first use of any.
        self.inner.add_commits(repo_id, commits)

    def delete_commit(self, repo_id: RepositoryID, commit_id: CommitID) -> None:
        # Other containers may still remember it until their bound pushes it out: only a restore's roll-back
        # deletes commits, ones it added moments before and that no ref names.
        self.inner.delete_commit(repo_id, commit_id)
        self._commits.drop_where(lambda key: key == (repo_id, commit_id))

    def list_commit_ids(self, repo_id: RepositoryID, prefix: str, limit: int) -> list[CommitID]:
        return self.inner.list_commit_ids(repo_id, prefix, limit)

    def iterate_commits(self, repo_id: RepositoryID, after: str = "") -> Iterator[Commit]:
        return self.inner.iterate_commits(repo_id, after)

    # ---- branches and tags: remembered only under a witness ------------------------------------------------------

    def get_branch(self, repo_id: RepositoryID, branch_id: BranchID) -> Branch:
        if self._branches is None:
            return self.inner.get_branch(repo_id, branch_id)
        return self._branches.lookup((repo_id, branch_id), lambda: self.inner.get_branch(repo_id, branch_id))

    def create_branch(self, repo_id: RepositoryID, branch: Branch, generation: str | None = None) -> None:
        try:
            self.inner.create_branch(repo_id, branch, generation)
        finally:
            self._drop_branch(repo_id, branch.id)

    def set_branch(self, repo_id: RepositoryID, branch: Branch, expected: Branch) -> None:
        try:
            self.inner.set_branch(repo_id, branch, expected)
        finally:
            self._drop_branch(repo_id, branch.id)

    def delete_branch(self, repo_id: RepositoryID, branch_id: BranchID) -> None:
        try:
            self.inner.delete_branch(repo_id, branch_id)
        finally:
            self._drop_branch(repo_id, branch_id)

    def list_branches(self, repo_id: RepositoryID, after: str = "", limit: int = 1000) -> list[Branch]:
        return self.inner.list_branches(repo_id, after, limit)

    def get_tag(self, repo_id: RepositoryID, tag_id: TagID) -> Tag:
        if self._tags is None:
            return self.inner.get_tag(repo_id, tag_id)
        return self._tags.lookup((repo_id, tag_id), lambda: self.inner.get_tag(repo_id, tag_id))

    def create_tag(self, repo_id: RepositoryID, tag: Tag, generation: str | None = None) -> None:
        try:
            self.inner.create_tag(repo_id, tag, generation)
        finally:
            self._drop_tag(repo_id, tag.id)

    def delete_tag(self, repo_id: RepositoryID, tag_id: TagID) -> None:
        try:
            self.inner.delete_tag(repo_id, tag_id)
        finally:
            self._drop_tag(repo_id, tag_id)

    def list_tags(self, repo_id: RepositoryID, after: str = "", limit: int = 1000) -> list[Tag]:
        return self.inner.list_tags(repo_id, after, limit)

    # The witness tells every write, this container's own included; dropping a record at its own write as well
    # does not rely on that.
    def _drop_branch(self, repo_id: RepositoryID, branch_id: BranchID) -> None:
        if self._branches is not None:
            self._branches.drop((repo_id, branch_id))

    def _drop_tag(self, repo_id: RepositoryID, tag_id: TagID) -> None:
        if self._tags is not None:
            self._tags.drop((repo_id, tag_id))
