"""Repository metadata: lakeFS's free-form key/value pairs on a repository (GET|POST|DELETE .../metadata).

The store is a port (memory twin, DynamoDB on the repository's own item); this module holds the port and the
use cases. Every call names the repository's creation date, so metadata never outlives its repository: a
repository deleted and created again under the same name starts with none.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from chalicelib.graveler import errors
from chalicelib.graveler.engine import Engine

MAX_KEYS = 100
MAX_KEY_CHARS = 256
MAX_VALUE_CHARS = 4096


class RepositoryMetadataStore(Protocol):
    """Metadata of repositories, each identified by (id, creation date)."""

    def get(self, repo_id: str, creation_date: int) -> dict[str, str]:
        """The repository's metadata ({} when it has none). Raises RepositoryNotFound for another generation."""
        ...

    def set(self, repo_id: str, creation_date: int, values: Mapping[str, str]) -> None:
        """Adds or replaces these keys, atomically. Raises RepositoryNotFound."""
        ...

    def delete(self, repo_id: str, creation_date: int, keys: Sequence[str]) -> None:
        """Removes these keys (missing ones are ignored), atomically. Raises RepositoryNotFound."""
        ...


class RepositoryMetadata:
    """The use cases: checks the repository exists (and is writable for changes) and the size limits."""

    def __init__(self, engine: Engine, store: RepositoryMetadataStore) -> None:
        self._engine = engine
        self._store = store

    def get(self, repo_id: str) -> dict[str, str]:
        repo = self._engine.repositories.get_repository(repo_id)
        return self._store.get(repo.id, repo.creation_date)

    def set(self, repo_id: str, values: Mapping[str, str]) -> None:
        """Raises RepositoryNotFound, ReadOnlyRepository, Invalid (empty, too many or too long keys/values)."""
        repo = self._writable(repo_id)
        if not values:
            raise errors.Invalid("metadata to set must not be empty")
        for key, value in values.items():
            _check_key(key)
            if len(value) > MAX_VALUE_CHARS:
                raise errors.Invalid(f"metadata value of {key!r} is longer than {MAX_VALUE_CHARS} characters")
        if len(set(self._store.get(repo.id, repo.creation_date)) | set(values)) > MAX_KEYS:
            raise errors.Invalid(f"a repository holds at most {MAX_KEYS} metadata keys")
        self._store.set(repo.id, repo.creation_date, values)

    def delete(self, repo_id: str, keys: Sequence[str]) -> None:
        repo = self._writable(repo_id)
        for key in keys:
            _check_key(key)
        self._store.delete(repo.id, repo.creation_date, keys)

    def _writable(self, repo_id: str):  # type: ignore[no-untyped-def]
        repo = self._engine.repositories.get_repository(repo_id)
        if repo.read_only:
            raise errors.ReadOnlyRepository(repo_id)
        return repo


def _check_key(key: str) -> None:
    if not key or len(key) > MAX_KEY_CHARS:
        raise errors.Invalid(f"metadata keys must be 1-{MAX_KEY_CHARS} characters")
