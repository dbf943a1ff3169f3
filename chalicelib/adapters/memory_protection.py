"""The BranchProtectionStore twin: each repository's branch protection rules in a dict."""

from __future__ import annotations

import threading

from chalicelib.graveler import errors
from chalicelib.graveler.branches.protection import ProtectionRules
from chalicelib.graveler.records import RepositoryID

from .memory_refs import MemoryRefStore

__all__ = ["MemoryBranchProtectionStore"]


class MemoryBranchProtectionStore:
    """Branch protection rules, keyed by (repository id, creation date) like the DynamoDB store's condition."""

    def __init__(self, refs: MemoryRefStore) -> None:
        self._refs = refs
        self._lock = threading.Lock()
        self._rules: dict[tuple[str, int], ProtectionRules] = {}

    def get(self, repo_id: str, creation_date: int) -> ProtectionRules:
        self._check(repo_id, creation_date)
        with self._lock:
            return self._rules.get((repo_id, creation_date), ProtectionRules((), ""))

    def set(self, repo_id: str, creation_date: int, rules: ProtectionRules, expected_etag: str | None) -> None:
        self._check(repo_id, creation_date)
        with self._lock:
            current = self._rules.get((repo_id, creation_date), ProtectionRules((), ""))
            if expected_etag is not None and current.etag != expected_etag:
                raise errors.PreconditionFailed("branch protection rules changed since the given ETag")
            self._rules[(repo_id, creation_date)] = rules

    def _check(self, repo_id: str, creation_date: int) -> None:
        if self._refs.get_repository(RepositoryID(repo_id)).creation_date != creation_date:
            raise errors.RepositoryNotFound(repo_id)
