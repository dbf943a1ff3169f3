"""Several conditional uploads to one branch as one write: each object with its own condition (If-Match: replace
only the object with that ETag; If-None-Match: only where nothing is; neither: the path as it was read), all of
them staged by one atomic conditional write (conditional_writes.py: staging.stage_checked over
StagingStore.set_if_all). A reader of the branch sees every object replaced or none, a failed condition or a
racing write of any path refuses all of them, and a crash before the write leaves none staged. The Iceberg
catalog moves the pointers of a multi-table transaction with it.

The checks are the single upload's (objects.upload_object): the path and headers, a read-only repository, branch
protection, the write guarded by the branch's token (a seal in between makes it check again: staging.py)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from .. import errors
from ..branches.protection import BranchProtection, NoProtection
from ..committed import CommittedManager
from ..ports import BlockStore, RefStore, StagingStore
from ..reads.shared import RepositoryForWrite
from ..records import BranchID, Entry, Key, StagedEntry
from ..validation import validate_path
from ..writes.addressing import new_data_address
from ..writes.conditional_writes import expect_on, stage_conditionally
from ..writes.object_fields import validate_entry, validate_headers
from ..writes.preconditions import MAX_ATOMIC_CHANGES, Precondition

__all__ = ["MAX_ATOMIC_CHANGES", "ConditionalObject", "ConditionalUploadParts", "ConditionalUploads"]


@dataclass(frozen=True, slots=True)
class ConditionalObject:
    """One object of an atomic upload and its condition: ``if_match`` an If-Match value (``*``: any object),
    ``if_absent`` If-None-Match: * (never both); with neither, the object replaces whatever was read at the path,
    and a write of the path between that read and the atomic write refuses the whole upload."""

    path: str
    data: bytes
    content_type: str = "application/octet-stream"
    user_metadata: Mapping[str, str] = field(default_factory=dict)
    if_match: str | None = None
    if_absent: bool = False


def check_objects(objects: Sequence[ConditionalObject]) -> None:
    """Raises Invalid, before anything is read or written: no object, more than one atomic write takes, a path
    named twice, a bad path or header, If-Match with If-None-Match."""
    if not objects:
        raise errors.Invalid("an atomic upload needs at least one object")
    if len(objects) > MAX_ATOMIC_CHANGES:
        raise errors.Invalid(f"at most {MAX_ATOMIC_CHANGES} objects are uploaded atomically, not {len(objects)}")
    if len({obj.path for obj in objects}) != len(objects):
        raise errors.Invalid("an atomic upload names each path once")
    for obj in objects:
        validate_path(obj.path)
        validate_headers(obj.content_type or "application/octet-stream", dict(obj.user_metadata))
        if obj.if_absent and obj.if_match is not None:
            raise errors.Invalid("If-Match and If-None-Match cannot be given together")


@dataclass(frozen=True, slots=True)
class ConditionalUploadParts:
    """What a conditional upload uses: the stores (staging and committed for the preconditions), the clock,
    the guard and a repository open for writes."""

    refs: RefStore
    staging: StagingStore
    blocks: BlockStore
    committed: CommittedManager
    clock: Callable[[], float]
    guard: BranchProtection | NoProtection
    repository_for_write: RepositoryForWrite


class ConditionalUploads:
    """The atomic conditional upload use case."""

    def __init__(self, parts: ConditionalUploadParts) -> None:
        self._parts = parts

    def upload_objects_if(self, repo_id: str, branch_id: str, objects: Sequence[ConditionalObject]) -> list[Entry]:
        """Writes each object's bytes to a new address and stages all of them in one atomic conditional write;
        their entries in the order given. Raises PreconditionFailed when a condition does not hold, now or at the
        write (another write of one of the paths came in between), with nothing staged; Invalid (check_objects,
        or rows over the atomic write's size), BranchNotFound, a protected branch's error, ReadOnlyRepository,
        TooManyTries when commits kept sealing the branch's token."""
        check_objects(objects)
        parts = self._parts
        repo = self._parts.repository_for_write(repo_id)
        branch = parts.refs.get_branch(repo.id, BranchID(branch_id))
        parts.guard.refuse_write(repo, branch_id)
        keys = [Key(obj.path) for obj in objects]
        preconditions = [Precondition(obj.if_match, obj.if_absent) for obj in objects]
        # Checked before any byte is written (a refused upload writes nothing), and again in the write.
        first = expect_on(parts, repo, list(zip(keys, preconditions, strict=True)))(branch)
        now = parts.clock()
        entries: list[Entry] = []
        try:
            for obj in objects:
                address = new_data_address(repo.storage_namespace, now)
                written = parts.blocks.put(address, obj.data)
                entries.append(
                    Entry(
                        address,
                        written.size,
                        written.etag,
                        int(now),
                        obj.content_type or "application/octet-stream",
                        dict(obj.user_metadata),
                    )
                )
                validate_entry(entries[-1])
            changes = [StagedEntry(key, entry) for key, entry in zip(keys, entries, strict=True)]
            stage_conditionally(parts, repo, branch, changes, preconditions, first)
        except (errors.PreconditionFailed, errors.Invalid):
            # Nothing was staged. Best effort: bytes left behind are unreferenced objects under data/, which GC
            # collects.
            for entry in entries:
                with contextlib.suppress(errors.GravelerError):
                    parts.blocks.delete(entry.physical_address)
            raise
        return entries
