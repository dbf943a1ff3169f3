"""The RefStore twin: repositories, branches, tags and commits in dicts, as the DynamoDB ref store keeps
them in its tables (tests/contract/test_refstore_contract.py holds the two to the same behaviour)."""

from __future__ import annotations

import contextlib
import dataclasses
import threading
from collections.abc import Iterator, Sequence

from chalicelib.graveler import errors
from chalicelib.graveler.records import (
    Branch,
    BranchID,
    Commit,
    CommitID,
    Repository,
    RepositoryID,
    RepositoryState,
    Tag,
    TagID,
)

from .memory_pages import page

__all__ = ["MemoryRefStore"]


class MemoryRefStore:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._repos: dict[str, Repository] = {}
        self._branches: dict[str, dict[str, Branch]] = {}
        self._tags: dict[str, dict[str, Tag]] = {}
        self._commits: dict[str, dict[str, Commit]] = {}

    def get_repository(self, repo_id: RepositoryID) -> Repository:
        try:
            return self._repos[repo_id]
        except KeyError:
            raise errors.RepositoryNotFound(repo_id) from None

    def create_repository(self, repo: Repository) -> None:
        with self._lock:
            if repo.id in self._repos:
                raise errors.RepositoryExists(repo.id)
            self._repos[repo.id] = repo

    def list_repositories(self, after: str = "", limit: int = 1000) -> list[Repository]:
        return page(self._repos, after, limit)  # type: ignore[arg-type]

    def delete_repository(self, repo_id: RepositoryID) -> None:
        with self._lock:
            if repo_id not in self._repos:
                raise errors.RepositoryNotFound(repo_id)
            del self._repos[repo_id]
            for table in (self._branches, self._tags, self._commits):
                table.pop(repo_id, None)

    def get_branch(self, repo_id: RepositoryID, branch_id: BranchID) -> Branch:
        try:
            return self._branches[repo_id][branch_id]
        except KeyError:
            raise errors.BranchNotFound(branch_id) from None

    @contextlib.contextmanager
    def branch_held(self, repo_id: RepositoryID, branch_id: BranchID) -> Iterator[Branch | None]:
        """The branch (None when missing), the lock held until the block ends: no move changes it meanwhile (the
        memory staging store's guarded writes, as DynamoDB's transaction checks the record)."""
        with self._lock:
            yield self._branches.get(repo_id, {}).get(branch_id)

    def create_branch(self, repo_id: RepositoryID, branch: Branch, generation: str | None = None) -> None:
        with self._lock:
            self._check_generation(repo_id, generation)
            branches = self._branches.setdefault(repo_id, {})
            if branch.id in branches:
                raise errors.BranchExists(branch.id)
            branches[branch.id] = branch

    def _check_generation(self, repo_id: RepositoryID, generation: str | None) -> None:
        """Called with the lock held: refuses a write tied to a generation the repository no longer has."""
        if generation is None:
            return
        repo = self._repos.get(repo_id)
        if repo is None or repo.state is not RepositoryState.ACTIVE or repo.generation != generation:
            raise errors.RepositoryNotFound(f"repository {repo_id} is gone or was created again")

    def set_branch(self, repo_id: RepositoryID, branch: Branch, expected: Branch) -> None:
        with self._lock:
            branches = self._branches.setdefault(repo_id, {})
            stored = branches.get(branch.id)
            if stored != expected or stored is None:
                raise errors.Conflict(f"branch {branch.id} changed concurrently")
            branches[branch.id] = dataclasses.replace(branch, hidden=stored.hidden)

    def delete_branch(self, repo_id: RepositoryID, branch_id: BranchID) -> None:
        with self._lock:
            if self._branches.get(repo_id, {}).pop(branch_id, None) is None:
                raise errors.BranchNotFound(branch_id)

    def list_branches(self, repo_id: RepositoryID, after: str = "", limit: int = 1000) -> list[Branch]:
        return page(self._branches.get(repo_id, {}), after, limit)  # type: ignore[arg-type]

    def get_tag(self, repo_id: RepositoryID, tag_id: TagID) -> Tag:
        try:
            return self._tags[repo_id][tag_id]
        except KeyError:
            raise errors.TagNotFound(tag_id) from None

    def create_tag(self, repo_id: RepositoryID, tag: Tag, generation: str | None = None) -> None:
        with self._lock:
            self._check_generation(repo_id, generation)
            tags = self._tags.setdefault(repo_id, {})
            if tag.id in tags:
                raise errors.TagExists(tag.id)
            tags[tag.id] = tag

    def delete_tag(self, repo_id: RepositoryID, tag_id: TagID) -> None:
        with self._lock:
            if self._tags.get(repo_id, {}).pop(tag_id, None) is None:
                raise errors.TagNotFound(tag_id)

    def list_tags(self, repo_id: RepositoryID, after: str = "", limit: int = 1000) -> list[Tag]:
        return page(self._tags.get(repo_id, {}), after, limit)  # type: ignore[arg-type]

    def get_commit(self, repo_id: RepositoryID, commit_id: CommitID) -> Commit:
        try:
            return self._commits[repo_id][commit_id]
        except KeyError:
            raise errors.CommitNotFound(commit_id) from None

    def add_commit(self, repo_id: RepositoryID, commit: Commit) -> None:
        with self._lock:
            self._commits.setdefault(repo_id, {}).setdefault(commit.id, commit)

    def add_commits(self, repo_id: RepositoryID, commits: Sequence[Commit]) -> None:
        with self._lock:
            stored = self._commits.setdefault(repo_id, {})
            for commit in commits:
                stored[commit.id] = commit

    def delete_commit(self, repo_id: RepositoryID, commit_id: CommitID) -> None:
        with self._lock:
            self._commits.get(repo_id, {}).pop(commit_id, None)

    def list_commit_ids(self, repo_id: RepositoryID, prefix: str, limit: int) -> list[CommitID]:
        ids = sorted(k for k in self._commits.get(repo_id, {}) if k.startswith(prefix))
        return [CommitID(k) for k in ids[:limit]]

    def iterate_commits(self, repo_id: RepositoryID, after: str = "") -> Iterator[Commit]:
        commits = dict(self._commits.get(repo_id, {}))
        for commit_id in sorted(commits):
            if commit_id > after:
                yield commits[commit_id]
