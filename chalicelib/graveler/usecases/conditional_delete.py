"""Delete with If-Match: hide the object the branch shows only while it is still the one with that ETag, the check
and the tombstone one conditional staging write (conditional_writes.py), as an If-Match upload
replaces one. The Iceberg catalog drops and renames tables with it, so a table commit racing a drop or a rename
is never lost silently: one of them gets PreconditionFailed."""

from __future__ import annotations

from dataclasses import dataclass

from ..branches.protection import BranchProtection, NoProtection
from ..committed import CommittedManager
from ..ports import RefStore, StagingStore
from ..reads.shared import RepositoryForWrite
from ..records import BranchID, Key, StagedEntry
from ..validation import validate_path
from ..writes.conditional_writes import stage_conditionally
from ..writes.preconditions import Precondition

__all__ = ["ConditionalDelete", "ConditionalDeleteParts"]


@dataclass(frozen=True, slots=True)
class ConditionalDeleteParts:
    """What a conditional delete uses: the stores the precondition reads, the guard and a repository open
    for writes."""

    refs: RefStore
    staging: StagingStore
    committed: CommittedManager
    guard: BranchProtection | NoProtection
    repository_for_write: RepositoryForWrite


class ConditionalDelete:
    """The conditional-delete use case."""

    def __init__(self, parts: ConditionalDeleteParts) -> None:
        self._parts = parts

    def delete_object_if(self, repo_id: str, branch_id: str, path: str, if_match: str) -> None:
        """Raises PreconditionFailed when the branch shows no object at ``path``, or one with another ETag, or when
        another write of the path came between the check and the delete; BranchNotFound, a protected branch's
        error, ReadOnlyRepository."""
        validate_path(path)
        parts = self._parts
        repo = self._parts.repository_for_write(repo_id)
        parts.guard.refuse_write(repo, branch_id)
        branch = parts.refs.get_branch(repo.id, BranchID(branch_id))
        stage_conditionally(parts, repo, branch, [StagedEntry(Key(path), None)], [Precondition(if_match=if_match)])
