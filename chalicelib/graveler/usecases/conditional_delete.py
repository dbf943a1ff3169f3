"""Delete with If-Match: hide the object the branch shows only while it is still the one with that ETag, the check
and the tombstone one conditional staging write (conditional_writes.py), as an If-Match upload
replaces one. The Iceberg catalog drops and renames tables with it, so a table commit racing a drop or a rename
is never lost silently: one of them gets PreconditionFailed."""

from __future__ import annotations

from ..parts import EngineParts
from ..reads.shared import Reads
from ..records import BranchID, Key, StagedEntry
from ..validation import validate_path
from ..writes.conditional_writes import stage_conditionally
from ..writes.preconditions import Precondition

__all__ = ["ConditionalDelete"]


class ConditionalDelete:
    """The conditional-delete use case."""

    def __init__(self, parts: EngineParts, reads: Reads) -> None:
        self._parts = parts
        self._reads = reads

    def delete_object_if(self, repo_id: str, branch_id: str, path: str, if_match: str) -> None:
        """Raises PreconditionFailed when the branch shows no object at ``path``, or one with another ETag, or when
        another write of the path came between the check and the delete; BranchNotFound, a protected branch's
        error, ReadOnlyRepository."""
        validate_path(path)
        parts = self._parts
        repo = self._reads.repository_for_write(repo_id)
        parts.guard.refuse_write(repo, branch_id)
        branch = parts.refs.get_branch(repo.id, BranchID(branch_id))
        stage_conditionally(parts, repo, branch, [StagedEntry(Key(path), None)], [Precondition(if_match=if_match)])
