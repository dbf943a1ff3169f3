"""The RepositoryMetadataStore twin: repository metadata in a dict."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence

from chalicelib.graveler import errors
from chalicelib.graveler.records import RepositoryID

from .memory_refs import MemoryRefStore

__all__ = ["MemoryRepositoryMetadataStore"]


class MemoryRepositoryMetadataStore:
    """Repository metadata, keyed by (repository id, creation date) like the DynamoDB store's condition."""

    def __init__(self, refs: MemoryRefStore) -> None:
        self._refs = refs
        self._lock = threading.Lock()
        self._metadata: dict[tuple[str, int], dict[str, str]] = {}

    def get(self, repo_id: str, creation_date: int) -> dict[str, str]:
        self._check(repo_id, creation_date)
        return dict(self._metadata.get((repo_id, creation_date), {}))

    def set(self, repo_id: str, creation_date: int, values: Mapping[str, str]) -> None:
        self._check(repo_id, creation_date)
        with self._lock:
            self._metadata.setdefault((repo_id, creation_date), {}).update(values)

    def delete(self, repo_id: str, creation_date: int, keys: Sequence[str]) -> None:
        self._check(repo_id, creation_date)
        with self._lock:
            current = self._metadata.get((repo_id, creation_date), {})
            for key in keys:
                current.pop(key, None)

    def _check(self, repo_id: str, creation_date: int) -> None:
        if self._refs.get_repository(RepositoryID(repo_id)).creation_date != creation_date:
            raise errors.RepositoryNotFound(repo_id)
