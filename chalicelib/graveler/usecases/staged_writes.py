"""Writes of staged rows beyond a plain upload (objects.py), as one use case: conditional uploads of many objects in
one atomic write (conditional_uploads.py), a delete with If-Match (conditional_delete.py) and staging an object by
its address (staged_objects.py). Each is one staging write whose condition is checked with it; this object only
names them together."""

from __future__ import annotations

from collections.abc import Sequence

from ..parts import EngineParts
from ..reads import Reads
from ..records import Entry
from .conditional_delete import ConditionalDelete
from .conditional_uploads import ConditionalObject, ConditionalUploads
from .staged_objects import StagedObjects

__all__ = ["StagedWrites"]


class StagedWrites:
    """The conditional upload and delete use cases, and stage-by-address."""

    def __init__(self, parts: EngineParts, reads: Reads) -> None:
        self._uploads = ConditionalUploads(parts, reads)
        self._delete = ConditionalDelete(parts, reads)
        self._stage = StagedObjects(parts, reads)

    def upload_objects_if(self, repo_id: str, branch_id: str, objects: Sequence[ConditionalObject]) -> list[Entry]:
        """Each object written only if its precondition holds, all or none (conditional_uploads.py)."""
        return self._uploads.upload_objects_if(repo_id, branch_id, objects)

    def delete_object_if(self, repo_id: str, branch_id: str, path: str, if_match: str) -> None:
        """Hides the object only while it is still the one with that ETag (conditional_delete.py)."""
        self._delete.delete_object_if(repo_id, branch_id, path, if_match)

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
        """Stages ``claim`` at ``path`` with no bytes moving (staged_objects.py)."""
        return self._stage.stage_object(repo_id, branch_id, path, claim, allowed, setting, force)
