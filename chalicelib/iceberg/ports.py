"""The catalog's ports: what it uses of the versioning engine, and the vendor of temporary S3 credentials for a
table's files (credentials.py says what is asked of it; chalicelib/adapters/sts_credentials.py is STS's).

``VersionedObjects`` names exactly the engine's use cases the catalog calls, each narrowed to the methods it calls
(chalicelib/graveler/engine.py's ``Engine`` is one, structurally): the store (store.py), the files of tables in
the store (files.py) and the namespace listings (namespaces.py) depend on it, not on the engine."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from chalicelib.graveler import errors
    from chalicelib.graveler.ports import PutResult
    from chalicelib.graveler.records import Branch, Entry, ListedObject, Page, Repository
    from chalicelib.graveler.usecases.conditional_uploads import ConditionalObject

__all__ = [
    "BranchReads",
    "Clock",
    "ConditionalWrites",
    "ObjectUses",
    "RefResolver",
    "RepositoryUses",
    "StoreFiles",
    "Vended",
    "Vendor",
    "VersionedObjects",
]


class StoreFiles(Protocol):
    """Files of a repository's storage namespace by their addresses (graveler's NamespaceFiles)."""

    @property
    def namespace(self) -> str: ...

    def get(self, address: str) -> bytes:
        """ObjectNotFound when nothing is there."""
        ...

    def stat(self, address: str) -> PutResult:
        """ObjectNotFound when nothing is there."""
        ...

    def put(self, address: str, data: bytes) -> PutResult: ...


class RepositoryUses(Protocol):
    """Repositories: one by id (and its storage namespace), a page of them, the files of a namespace."""

    def get_repository(self, repo_id: str) -> Repository:
        """RepositoryNotFound (a NotFound), InvalidName."""
        ...

    def list_repositories(self, *, after: str = "", amount: int | None = 100) -> Page[Repository]: ...

    def namespace_files(self, storage_namespace: str) -> StoreFiles: ...


class BranchReads(Protocol):
    """Branches: whether a ref is one (writes go to branches only), and a page of a repository's."""

    def get_branch(self, repo_id: str, branch_id: str) -> Branch:
        """NotFound (a tag or commit is not a branch), Invalid for a malformed name."""
        ...

    def list_branches(self, repo_id: str, *, after: str = "", amount: int | None = 100) -> Page[Branch]: ...


class RefResolver(Protocol):
    """Whether a ref (branch, tag, commit, expression) resolves: a namespace's ref level exists when it does."""

    def resolve(self, repo_id: str, ref: str) -> object:
        """NotFound or InvalidRef when ``ref`` names no branch, tag or commit."""
        ...


class ObjectUses(Protocol):
    """Objects of a ref: stat, read, list; on a branch: upload (conditional), delete, link a file of the store."""

    def stat_object(self, repo_id: str, ref: str, path: str) -> Entry:
        """ObjectNotFound when the ref shows nothing at ``path``."""
        ...

    def read_object(self, repo_id: str, entry: Entry) -> bytes: ...

    def list_objects(
        self, repo_id: str, ref: str, prefix: str = "", delimiter: str = "", after: str = "", amount: int | None = 100
    ) -> Page[ListedObject]: ...

    def upload_object(
        self,
        repo_id: str,
        branch_id: str,
        path: str,
        data: bytes,
        content_type: str = "application/octet-stream",
        *,
        if_absent: bool = False,
        if_match: str | None = None,
    ) -> Entry:
        """PreconditionFailed when ``if_match`` (an ETag) no longer names the object there, or ``if_absent`` and
        one is there."""
        ...

    def delete_object(self, repo_id: str, branch_id: str, path: str) -> None: ...

    def delete_objects(self, repo_id: str, branch_id: str, paths: list[str]) -> list[tuple[str, errors.GravelerError]]:
        """The paths that failed, each with its error."""
        ...

    def new_physical_address(self, repo_id: str) -> str: ...

    def link_object(self, repo_id: str, branch_id: str, path: str, entry: Entry) -> Entry: ...


class ConditionalUploads(Protocol):
    """Several objects in one atomic write, each on its own condition (a transaction's pointers)."""

    def upload_objects_if(self, repo_id: str, branch_id: str, objects: Sequence[ConditionalObject]) -> list[Entry]:
        """All or none, in one atomic write; PreconditionFailed when a condition does not hold (nothing staged)."""
        ...


class ConditionalDeletes(Protocol):
    """A delete while the object is still the one read (a drop's or rename's pointer)."""

    def delete_object_if(self, repo_id: str, branch_id: str, path: str, if_match: str) -> None:
        """PreconditionFailed when the object there no longer has the ETag ``if_match``."""
        ...


class ConditionalWrites(Protocol):
    """The engine's staged writes the catalog uses: conditional uploads and deletes."""

    @property
    def uploads(self) -> ConditionalUploads: ...

    @property
    def deletes(self) -> ConditionalDeletes: ...


class Clock(Protocol):
    """The engine's ports, of which the catalog reads the clock (metadata timestamps, linked entries)."""

    @property
    def clock(self) -> Callable[[], float]:
        """Seconds since the epoch, the engine's own (tests give theirs)."""
        ...


class VersionedObjects(Protocol):
    """What the catalog uses of the versioning engine: its repositories, branches, refs and objects, its
    conditional writes and its clock."""

    @property
    def repositories(self) -> RepositoryUses: ...

    @property
    def branches(self) -> BranchReads: ...

    @property
    def commits(self) -> RefResolver: ...

    @property
    def objects(self) -> ObjectUses: ...

    @property
    def staged(self) -> ConditionalWrites: ...

    @property
    def ports(self) -> Clock: ...


@dataclass(frozen=True, slots=True)
class Vended:
    access_key_id: str
    secret_access_key: str
    session_token: str
    expires_at_ms: int


class Vendor(Protocol):
    """Mints temporary credentials limited to ``policy`` (an IAM policy document)."""

    def vend(self, policy: dict[str, Any], session_name: str) -> Vended: ...

    def client_config(self) -> dict[str, str]:
        """What every engine needs besides the keys: the region, and the S3 endpoint where it is not AWS's."""
        ...
