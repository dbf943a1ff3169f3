"""Writes of staged rows beyond plain uploads (objects.py): conditional uploads and deletes, and staging an object
by its address.

Delete with If-Match: hide the object the branch shows only while it is still the one with that ETag, the check
and the tombstone one conditional staging write (preconditions.py, staging.stage_if), as an If-Match upload
replaces one. The Iceberg catalog drops and renames tables with it, so a table commit racing a drop or a rename
is never lost silently: one of them gets PreconditionFailed. Conditional uploads of many objects at once are
conditional_uploads.py's.

lakeFS's stageObject (PUT .../branches/{b}/objects): stage an object whose data already sits somewhere in the
store, by its address, with no bytes moving: a one-object zero-copy import.

lakeFS links any address its block adapter accepts. Lakelet holds it to what an import may read: the address must
lie under one of the deployment's allowed import locations (else ImportNotAllowed, 403, the same check and setting
as imports), so nobody can stage, and then read through the API, an object the deployment never meant to share.
The object must exist with the claimed size (and MD5 checksum, where the store's ETag is one), as a link's claim
is checked, so an entry never names data that is not there. Like imported objects, it lies outside the
repository's namespace, so garbage collection never deletes it.
"""

from __future__ import annotations

from collections.abc import Sequence

from . import errors
from .conditional_uploads import ConditionalObject, ConditionalUploads
from .imports import OBJECT, ImportLocation, check_allowed
from .linking import check_claim
from .object_fields import validate_entry
from .parts import EngineParts
from .preconditions import expected_row
from .reads import Reads
from .records import BranchID, Entry, Key, StagedEntry
from .staging import stage, stage_if
from .validation import validate_path

__all__ = ["StagedWrites"]


class StagedWrites:
    """The conditional upload and delete use cases, and stage-by-address."""

    def __init__(self, parts: EngineParts, reads: Reads) -> None:
        self._parts = parts
        self._reads = reads
        self._uploads = ConditionalUploads(parts, reads)

    def upload_objects_if(self, repo_id: str, branch_id: str, objects: Sequence[ConditionalObject]) -> list[Entry]:
        """Each object written only if its precondition holds, all or none (conditional_uploads.py)."""
        return self._uploads.upload_objects_if(repo_id, branch_id, objects)

    def delete_object_if(self, repo_id: str, branch_id: str, path: str, if_match: str) -> None:
        """Raises PreconditionFailed when the branch shows no object at ``path``, or one with another ETag, or when
        another write of the path came between the check and the delete; BranchNotFound, a protected branch's
        error, ReadOnlyRepository."""
        validate_path(path)
        parts = self._parts
        repo = self._reads.repository_for_write(repo_id)
        parts.guard.refuse_write(repo, branch_id)
        branch = parts.refs.get_branch(repo.id, BranchID(branch_id))
        head = parts.refs.get_commit(repo.id, branch.commit_id)
        key = Key(path)
        expected = expected_row(
            parts.staging, parts.committed, repo.storage_namespace, head.meta_range_id, branch, key, if_match
        )
        stage_if(parts.refs, parts.staging, repo.id, branch, StagedEntry(key, None), expected)

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
        ImportNotAllowed (an address outside ``allowed``), Invalid (a malformed path or entry, no object at the
        address, a size or checksum it contradicts), BranchNotFound, ReadOnlyRepository (without ``force``), a
        protected branch's error."""
        validate_path(path)
        validate_entry(claim)
        if not claim.physical_address.startswith("s3://"):
            raise errors.Invalid("physical_address must be an s3:// address")
        check_allowed([ImportLocation(OBJECT, claim.physical_address, path)], allowed, setting)
        repo = self._reads.repository_for_write(repo_id, force)
        branch = self._parts.refs.get_branch(repo.id, BranchID(branch_id))
        self._parts.guard.refuse_write(repo, branch_id)
        try:
            check_claim(self._parts.blocks.stat(claim.physical_address), claim)
        except errors.ObjectNotFound:
            raise errors.Invalid(f"no object at {claim.physical_address}") from None
        stage(
            self._parts.refs, self._parts.staging, repo.id, BranchID(branch_id), StagedEntry(Key(path), claim), branch
        )
        return claim
