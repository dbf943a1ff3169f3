"""Writes of staged rows beyond a plain upload (objects.py), as one field of the engine: conditional uploads of many
objects in one atomic write (conditional_uploads.py), a delete with If-Match (conditional_delete.py) and staging an
object by its address (staged_objects.py). Each is one staging write whose condition is checked with it; this
record only names the three use cases together (``engine.staged.uploads.upload_objects_if(...)``)."""

from __future__ import annotations

from dataclasses import dataclass

from .conditional_delete import ConditionalDelete
from .conditional_uploads import ConditionalUploads
from .staged_objects import StagedObjects

__all__ = ["StagedWrites"]


@dataclass(frozen=True, slots=True)
class StagedWrites:
    """The conditional upload and delete use cases, and stage-by-address."""

    uploads: ConditionalUploads
    deletes: ConditionalDelete
    by_address: StagedObjects
