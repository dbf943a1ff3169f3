"""In-memory twins of every port: the reference behaviour the contract suites hold the AWS adapters to."""

from __future__ import annotations

import bisect
import hashlib
import threading
from collections.abc import Iterator

from chalicelib.auth.records import Credential, User
from chalicelib.graveler import errors
from chalicelib.graveler.ports import PutResult
from chalicelib.graveler.records import (
    Branch,
    BranchID,
    Commit,
    CommitID,
    Key,
    Repository,
    RepositoryID,
    StagedEntry,
    StagingToken,
    Tag,
    TagID,
)


def _page(items: dict[str, object], after: str, limit: int) -> list:  # type: ignore[type-arg]
    return [items[k] for k in sorted(items) if k > after][:limit]


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
        return _page(self._repos, after, limit)  # type: ignore[arg-type]

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

    def create_branch(self, repo_id: RepositoryID, branch: Branch) -> None:
        with self._lock:
            branches = self._branches.setdefault(repo_id, {})
            if branch.id in branches:
                raise errors.BranchExists(branch.id)
            branches[branch.id] = branch

    def set_branch(self, repo_id: RepositoryID, branch: Branch, expected: Branch) -> None:
        with self._lock:
            branches = self._branches.setdefault(repo_id, {})
            if branches.get(branch.id) != expected:
                raise errors.Conflict(f"branch {branch.id} changed concurrently")
            branches[branch.id] = branch

    def delete_branch(self, repo_id: RepositoryID, branch_id: BranchID) -> None:
        with self._lock:
            if self._branches.get(repo_id, {}).pop(branch_id, None) is None:
                raise errors.BranchNotFound(branch_id)

    def list_branches(self, repo_id: RepositoryID, after: str = "", limit: int = 1000) -> list[Branch]:
        return _page(self._branches.get(repo_id, {}), after, limit)  # type: ignore[arg-type]

    def get_tag(self, repo_id: RepositoryID, tag_id: TagID) -> Tag:
        try:
            return self._tags[repo_id][tag_id]
        except KeyError:
            raise errors.TagNotFound(tag_id) from None

    def create_tag(self, repo_id: RepositoryID, tag: Tag) -> None:
        with self._lock:
            tags = self._tags.setdefault(repo_id, {})
            if tag.id in tags:
                raise errors.TagExists(tag.id)
            tags[tag.id] = tag

    def delete_tag(self, repo_id: RepositoryID, tag_id: TagID) -> None:
        with self._lock:
            if self._tags.get(repo_id, {}).pop(tag_id, None) is None:
                raise errors.TagNotFound(tag_id)

    def list_tags(self, repo_id: RepositoryID, after: str = "", limit: int = 1000) -> list[Tag]:
        return _page(self._tags.get(repo_id, {}), after, limit)  # type: ignore[arg-type]

    def get_commit(self, repo_id: RepositoryID, commit_id: CommitID) -> Commit:
        try:
            return self._commits[repo_id][commit_id]
        except KeyError:
            raise errors.CommitNotFound(commit_id) from None

    def add_commit(self, repo_id: RepositoryID, commit: Commit) -> None:
        with self._lock:
            self._commits.setdefault(repo_id, {}).setdefault(commit.id, commit)

    def list_commit_ids(self, repo_id: RepositoryID, prefix: str, limit: int) -> list[CommitID]:
        ids = sorted(k for k in self._commits.get(repo_id, {}) if k.startswith(prefix))
        return [CommitID(k) for k in ids[:limit]]

    def iterate_commits(self, repo_id: RepositoryID) -> Iterator[Commit]:
        commits = dict(self._commits.get(repo_id, {}))
        for commit_id in sorted(commits):
            yield commits[commit_id]


class MemoryStagingStore:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tokens: dict[str, dict[str, StagedEntry]] = {}

    def get(self, token: StagingToken, key: Key) -> StagedEntry | None:
        return self._tokens.get(token, {}).get(key)

    def set(self, token: StagingToken, staged: StagedEntry) -> None:
        with self._lock:
            self._tokens.setdefault(token, {})[staged.key] = staged

    def delete(self, token: StagingToken, key: Key) -> None:
        with self._lock:
            self._tokens.get(token, {}).pop(key, None)

    def iterate(self, token: StagingToken, from_key: str = "", first_page: int | None = None) -> Iterator[StagedEntry]:
        with self._lock:
            entries = dict(self._tokens.get(token, {}))
        keys = sorted(entries)
        for key in keys[bisect.bisect_left(keys, from_key) :]:
            yield entries[key]

    def drop(self, token: StagingToken) -> None:
        with self._lock:
            self._tokens.pop(token, None)


class MemoryBlockStore:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.blobs: dict[str, bytes] = {}

    def put(self, address: str, data: bytes) -> PutResult:
        with self._lock:
            self.blobs[address] = bytes(data)
        return PutResult(size=len(data), etag=hashlib.md5(data).hexdigest())

    def get(self, address: str, start: int | None = None, end: int | None = None) -> bytes:
        try:
            data = self.blobs[address]
        except KeyError:
            raise errors.ObjectNotFound(address) from None
        if start is None:
            return data
        return data[start : (len(data) if end is None else end + 1)]

    def exists(self, address: str) -> bool:
        return address in self.blobs

    def presign_get(self, address: str, expires_seconds: int) -> str:
        return f"https://memory.invalid/{address.removeprefix('s3://')}?expires={expires_seconds}"

    def presign_put(self, address: str, expires_seconds: int) -> str:
        return f"https://memory.invalid/{address.removeprefix('s3://')}?upload&expires={expires_seconds}"

    def delete(self, address: str) -> None:
        with self._lock:
            self.blobs.pop(address, None)


class MemoryAuthStore:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._users: dict[str, User] = {}
        self._credentials: dict[str, Credential] = {}

    def create_user(self, user: User) -> None:
        with self._lock:
            if user.id in self._users:
                raise errors.UserExists(user.id)
            self._users[user.id] = user

    def get_user(self, user_id: str) -> User:
        try:
            return self._users[user_id]
        except KeyError:
            raise errors.UserNotFound(user_id) from None

    def list_users(self, after: str = "", limit: int = 1000) -> list[User]:
        return _page(self._users, after, limit)  # type: ignore[arg-type]

    def create_credential(self, credential: Credential) -> None:
        with self._lock:
            if credential.access_key_id in self._credentials:
                raise errors.AlreadyExists(credential.access_key_id)
            self._credentials[credential.access_key_id] = credential

    def get_credential(self, access_key_id: str) -> Credential:
        try:
            return self._credentials[access_key_id]
        except KeyError:
            raise errors.CredentialNotFound(access_key_id) from None

    def list_credentials(self, user_id: str) -> list[Credential]:
        return sorted(
            (c for c in self._credentials.values() if c.user_id == user_id), key=lambda c: c.access_key_id
        )

    def delete_credential(self, access_key_id: str) -> None:
        with self._lock:
            if self._credentials.pop(access_key_id, None) is None:
                raise errors.CredentialNotFound(access_key_id)
