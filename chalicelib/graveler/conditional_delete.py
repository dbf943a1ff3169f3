"""Delete with If-Match: hide the object the branch shows only while it is still the one with that ETag, the check
and the tombstone one conditional staging write (preconditions.py, staging.stage_if), as an If-Match upload
replaces one. The Iceberg catalog drops and renames tables with it, so a table commit racing a drop or a rename
is never lost silently: one of them gets PreconditionFailed."""

from __future__ import annotations

from .objects import Objects
from .preconditions import expected_row
from .records import BranchID, Key, StagedEntry
from .staging import stage_if
from .validation import validate_path

__all__ = ["ConditionalDelete"]


class ConditionalDelete(Objects):
    def delete_object_if(self, repo_id: str, branch_id: str, path: str, if_match: str) -> None:
        """Raises PreconditionFailed when the branch shows no object at ``path``, or one with another ETag, or when
        another write of the path came between the check and the delete; BranchNotFound, a protected branch's
        error, ReadOnlyRepository."""
        validate_path(path)
        repo = self._writable_repository(repo_id)
        self.guard.refuse_write(repo, branch_id)
        branch = self.refs.get_branch(repo.id, BranchID(branch_id))
        head = self.refs.get_commit(repo.id, branch.commit_id)
        key = Key(path)
        expected = expected_row(
            self.staging, self.committed, repo.storage_namespace, head.meta_range_id, branch, key, if_match
        )
        stage_if(self.refs, self.staging, repo.id, branch, StagedEntry(key, None), expected)
