"""lakeFS's stageObject (PUT .../branches/{b}/objects): stage an object whose data already sits somewhere in the
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
from .imports import OBJECT, ImportLocation, check_allowed
from .linking import check_claim
from .object_fields import validate_entry
from .parts import EngineParts
from .reads import Reads
from .records import BranchID, Entry, Key, StagedEntry
from .staging import stage
from .validation import validate_path

__all__ = ["StagedObjects"]


class StagedObjects:
    """The stage-by-address use case."""

    def __init__(self, parts: EngineParts, reads: Reads) -> None:
        self._parts = parts
        self._reads = reads

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
