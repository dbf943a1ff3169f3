"""lakeFS's stageObject (PUT .../branches/{b}/objects): stage an object whose data already sits somewhere in the
store, by its address, with no bytes moving: a one-object zero-copy import, or a zero-copy copy.

lakeFS links any address its block adapter accepts. Lakelet accepts two kinds:

- an address under the repository's own ``<namespace>/data/`` (the physical address of one of its objects, for
  instance): the same bytes at another path, as lakeFS keeps such an address relative to the namespace. Garbage
  collection keeps the object while any entry names it, as for every object of the namespace. The namespace's
  ``_lakefs/`` (ranges, run logs, markers) is not object data and stays refused. An upload address whose presigned
  URL may still rewrite it is refused by the API before this (auth/addresses.py), so committed bytes never change;
- an address under one of the deployment's allowed import locations (else ImportNotAllowed, 403, the same check
  and setting as imports), so nobody can stage, and then read through the API, an object the deployment never
  meant to share; and never one inside another repository's namespace or Lakelet's own files, whatever the
  setting lists (imports/internal.py). Like imported objects, it lies outside the repository's namespace, so
  garbage collection never deletes it.

The object must exist with the claimed size (and MD5 checksum, where the store's ETag is one), as a link's claim
is checked, so an entry never names data that is not there.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from .. import errors
from ..branches.protection import BranchProtection, NoProtection
from ..imports import OBJECT, ImportLocation, check_allowed, check_not_internal
from ..ports import BlockStore, RefStore, StagingStore
from ..reads.shared import RepositoryForWrite
from ..records import BranchID, Entry, Key, Repository, StagedEntry
from ..validation import METADATA_DIRECTORY, validate_path
from ..writes.linking import check_claim
from ..writes.object_fields import validate_entry
from ..writes.staging import stage

__all__ = ["StagedObjectParts", "StagedObjects"]


@dataclass(frozen=True, slots=True)
class StagedObjectParts:
    """What staging by address uses: the stores, the guard, where repositories may live, and a repository
    open for writes."""

    refs: RefStore
    staging: StagingStore
    blocks: BlockStore
    guard: BranchProtection | NoProtection
    namespace_prefix: str | None
    repository_for_write: RepositoryForWrite


class StagedObjects:
    """The stage-by-address use case."""

    def __init__(self, parts: StagedObjectParts) -> None:
        self._parts = parts

    def stage_object(
        self,
        repo_id: str,
        branch_id: str,
        path: str,
        claim: Entry,
        allowed: Sequence[str],
        setting: str,
        force: bool = False,
    ) -> Entry:
        """Stages ``claim`` (its physical address, size, checksum and metadata) at ``path``. Raises
        ImportNotAllowed (an address outside the repository's ``data/`` and ``allowed``, or inside another
        repository's namespace), Invalid (a malformed path or entry, no object at the address, a size or checksum
        it contradicts), BranchNotFound, ReadOnlyRepository (without ``force``), a protected branch's error."""
        validate_path(path)
        validate_entry(claim)
        address = claim.physical_address
        if not address.startswith("s3://"):
            raise errors.Invalid("physical_address must be an s3:// address")
        repo = self._parts.repository_for_write(repo_id, force)
        if not _in_own_data(repo, address):
            self._check_foreign(address, path, allowed, setting)
        branch = self._parts.refs.get_branch(repo.id, BranchID(branch_id))
        self._parts.guard.refuse_write(repo, branch_id)
        try:
            check_claim(self._parts.blocks.stat(address), claim)
        except errors.ObjectNotFound:
            raise errors.Invalid(f"no object at {address}") from None
        stage(
            self._parts.refs, self._parts.staging, repo.id, BranchID(branch_id), StagedEntry(Key(path), claim), branch
        )
        return claim

    def _check_foreign(self, address: str, path: str, allowed: Sequence[str], setting: str) -> None:
        """An address outside the repository's data: under an allowed location, and in no repository's namespace
        nor Lakelet's own files even there."""
        location = ImportLocation(OBJECT, address, path)
        check_allowed([location], allowed, setting)
        prefix = self._parts.namespace_prefix
        own_bucket = prefix.removeprefix("s3://").partition("/")[0] if prefix else None
        # Namespaces live only in the deployment's bucket (when it has one): elsewhere there is none to list.
        same_bucket = own_bucket is None or location.bucket.lower() == own_bucket.lower()
        repositories = self._repositories() if same_bucket else iter(())
        check_not_internal([location], repositories, own_bucket, self._parts.blocks.exists)

    def _repositories(self) -> Iterator[Repository]:
        after = ""
        while True:
            page = self._parts.refs.list_repositories(after, 1000)
            yield from page
            if len(page) < 1000:
                return
            after = page[-1].id


def _in_own_data(repo: Repository, address: str) -> bool:
    """Whether the address names object data of the repository's own namespace: under its ``data/``, every
    segment plain (no empty, ``.`` or ``..`` one a reader might resolve elsewhere) and none a ``_lakefs``."""
    data = repo.storage_namespace.rstrip("/") + "/data/"
    if not address.startswith(data):
        return False
    segments = address[len(data) :].split("/")
    return all(s not in ("", ".", "..", METADATA_DIRECTORY) for s in segments)
