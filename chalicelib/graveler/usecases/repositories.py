"""Repositories: creation (the namespace claimed, then the first commit and the default branch, the record
last), listing and deletion (their staging areas dropped, then their pull requests), and the repository's storage
namespace as code outside graveler uses it (namespace_files.py)."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from .. import errors
from ..branches.branch_moves import new_staging_token, retired_tokens
from ..committed import CommittedManager
from ..identity import new_commit
from ..ports import BlockStore, RefStore, StagingStore
from ..reads.shared import RepositoryForWrite, page_by_id
from ..records import (
    EMPTY_METARANGE,
    Branch,
    BranchID,
    Page,
    Repository,
    RepositoryID,
    RepositoryState,
)
from ..storage import namespaces
from ..storage.namespace_files import CONTENT_ID, NamespaceFiles
from ..validation import (
    normalize_storage_namespace,
    validate_branch_id,
    validate_repository_id,
)
from ..writes.addressing import metadata_address
from ..writes.staging import branch_tokens, drop_tokens

__all__ = ["INITIAL_COMMIT_MESSAGE", "Repositories", "RepositoryParts"]

INITIAL_COMMIT_MESSAGE = "Repository created"
_PAGE = 1000


@dataclass(frozen=True, slots=True)
class RepositoryParts:
    """What the repository use cases use: the stores, the clock, where repositories may live, two shared
    reads, and ``forget``: what else is kept under a deleted repository's generation goes (its pull requests)."""

    refs: RefStore
    staging: StagingStore
    blocks: BlockStore
    committed: CommittedManager
    clock: Callable[[], float]
    namespace_prefix: str | None
    get_repository: Callable[[str], Repository]
    repository_for_write: RepositoryForWrite
    forget: Callable[[Repository], object]


class Repositories:
    """The repository use cases."""

    def __init__(self, parts: RepositoryParts) -> None:
        self._parts = parts

    def get_repository(self, repo_id: str) -> Repository:
        """The live repository. Raises RepositoryNotFound."""
        return self._parts.get_repository(repo_id)

    def repository_for_write(self, repo_id: str, force: bool = False) -> Repository:
        """The repository; a read-only one only with ``force``, else ReadOnlyRepository (403)."""
        return self._parts.repository_for_write(repo_id, force)

    def create_repository(
        self, repo_id: str, storage_namespace: str, default_branch: str = "main", read_only: bool = False
    ) -> Repository:
        validate_repository_id(repo_id)
        validate_branch_id(default_branch)
        namespace = normalize_storage_namespace(storage_namespace)
        namespaces.check_allowed(namespace + "/", self._parts.namespace_prefix)
        rid = RepositoryID(repo_id)
        self.refuse_existing_repository(repo_id)
        namespaces.refuse_live_overlap(namespace, self.live_namespaces())
        namespaces.claim(self._parts.blocks, namespace)
        try:
            return self._create_repository_records(rid, namespace, default_branch, read_only)
        except errors.RepositoryExists:
            # Another creation of this id won: the namespace was claimed for nothing.
            namespaces.release(self._parts.blocks, namespace)
            raise

    def create_bare_repository(
        self, repo_id: str, storage_namespace: str, default_branch: str = "main", read_only: bool = False
    ) -> Repository:
        """lakeFS's bare repository, the target of a refs restore: the repository record alone (no initial commit,
        no default branch). Its namespace is usually one whose ``_lakefs/`` was copied from the repository being
        restored, or that repository's own after it was deleted, so an existing marker is no refusal (as in
        lakeFS, the namespace of a repository that exists is allowed too: a restore's copy; GC then refuses both
        while they share it, chalicelib/gc/prepare.py). A namespace inside another repository's, or holding one,
        is refused: GC of the outer one would delete the inner one's data. The marker is put if missing, so no
        repository is created on this namespace afterwards."""
        validate_repository_id(repo_id)
        validate_branch_id(default_branch)
        namespace = normalize_storage_namespace(storage_namespace)
        namespaces.check_allowed(namespace + "/", self._parts.namespace_prefix)
        self.refuse_existing_repository(repo_id)
        namespaces.refuse_live_overlap(namespace, self.live_namespaces(), allow_same=True)
        namespaces.mark(self._parts.blocks, namespace)
        repo = Repository(
            RepositoryID(repo_id),
            namespace,
            BranchID(default_branch),
            int(self._parts.clock()),
            RepositoryState.ACTIVE,
            read_only,
            uuid.uuid4().hex,
            self._parts.committed.current_format,
        )
        self._parts.refs.create_repository(repo)
        return repo

    def _create_repository_records(
        self, rid: RepositoryID, namespace: str, default_branch: str, read_only: bool
    ) -> Repository:
        repo_id = str(rid)
        now = self._parts.clock()
        # As lakeFS does: the initial commit and the default branch first, the repository record last, so a
        # repository that exists is always complete.
        initial = new_commit("", INITIAL_COMMIT_MESSAGE, EMPTY_METARANGE, now, {}, (), 1)
        self._parts.refs.add_commit(rid, initial)
        try:
            self._parts.refs.create_branch(
                rid, Branch(BranchID(default_branch), initial.id, new_staging_token(repo_id, default_branch))
            )
        except errors.BranchExists as e:
            raise errors.RepositoryExists(f"repository {repo_id} is being created concurrently") from e
        repo = Repository(
            rid,
            namespace,
            BranchID(default_branch),
            int(now),
            RepositoryState.ACTIVE,
            read_only,
            uuid.uuid4().hex,
            self._parts.committed.current_format,
        )
        self._parts.refs.create_repository(repo)
        return repo

    def live_namespaces(self) -> Iterator[tuple[str, str]]:
        """(id, storage namespace) of every repository, those being deleted included."""
        after = ""
        while True:
            page = self._parts.refs.list_repositories(after, _PAGE)
            yield from ((str(repo.id), repo.storage_namespace) for repo in page)
            if len(page) < _PAGE:
                return
            after = page[-1].id

    def refuse_existing_repository(self, repo_id: str) -> None:
        """Raises RepositoryExists when the id is taken (also by a repository being deleted). An id that is not
        a valid repository id cannot be taken: creation refuses it later."""
        try:
            validate_repository_id(repo_id)
        except errors.Invalid:
            return
        try:
            self._parts.refs.get_repository(RepositoryID(repo_id))
        except errors.RepositoryNotFound:
            return
        raise errors.RepositoryExists(repo_id)

    def list_repositories(
        self, prefix: str = "", after: str = "", amount: int | None = 100, search: str = ""
    ) -> Page[Repository]:
        """A page of repositories by id; ``search`` keeps those whose id contains it (lakeFS: a case-sensitive
        substring match, combined with ``prefix``)."""
        keep = (lambda repo: search in repo.id) if search else None
        return page_by_id(self._parts.refs.list_repositories, prefix, after, amount, keep)

    def delete_repository(self, repo_id: str, force: bool = False) -> Repository:
        """Deletes the repository's records and staging; a read-only one only with ``force`` (as lakeFS), then
        what else was kept under its generation (pull requests). They are kept per repository generation, so should
        this stop between the two, the rows left are unreachable: a repository created again under the name has
        another generation and sees none of them. Returns the record deleted."""
        rid = RepositoryID(repo_id)
        repo = self._parts.refs.get_repository(rid)
        if repo.read_only and not force:
            raise errors.ReadOnlyRepository(repo_id)
        branches = self._parts.refs.list_branches(rid, "", 1_000_000)
        self._parts.refs.delete_repository(rid)
        for branch in branches:
            drop_tokens(self._parts.staging, [*branch_tokens(branch), *retired_tokens(branch)])
        self._parts.forget(repo)
        return repo

    # ---- the repository's storage namespace, as code outside graveler may use it (namespace_files.py) ----------

    def namespace_files(self, storage_namespace: str) -> NamespaceFiles:
        """The files of a storage namespace (a repository's, as the caller read it: no store is read here)."""
        return NamespaceFiles(self._parts.blocks, storage_namespace)

    def metadata_file(self, repo_id: str, object_id: str) -> str:
        """The address of one of the repository's range or metarange files (``<namespace>/_lakefs/<id>``, Parquet:
        docs/api.md). Raises Invalid for an id that is not a content hash, NotFound when no such file exists."""
        if not CONTENT_ID.fullmatch(object_id):
            raise errors.Invalid(f"invalid range or metarange id {object_id!r}: expected 64 hex digits")
        address = metadata_address(self._parts.get_repository(repo_id).storage_namespace, object_id)
        if not self._parts.blocks.exists(address):
            raise errors.NotFound(f"no range or metarange {object_id} in repository {repo_id}")
        return address

    def presign_metadata_file(self, repo_id: str, object_id: str, expires_seconds: int) -> str:
        """A presigned GET of metadata_file's address."""
        return self._parts.blocks.presign_get(self.metadata_file(repo_id, object_id), expires_seconds)

    def read_metadata_file(self, repo_id: str, object_id: str) -> bytes:
        """The bytes of metadata_file's file (a Parquet file of a few MiB at most: committed/params.py)."""
        return self._parts.blocks.get(self.metadata_file(repo_id, object_id))

    def presign_upload(self, address: str, expires_seconds: int, write_once: bool = False) -> str:
        """A presigned PUT of an address from new_physical_address (lakeFS's staging/backing with presign). Only a
        data address can be handed out: never one of the ranges, markers or records under ``_lakefs/``.
        ``write_once``: the URL only creates the object (``If-None-Match: *``)."""
        if "/data/" not in address or "/_lakefs/" in address:
            raise errors.Invalid("only a repository's data addresses can be presigned for upload")
        return self._parts.blocks.presign_put(address, expires_seconds, if_none_match=write_once)
