"""Many small objects staged by one call (Lakelet's batch upload; lakeFS's API has no such operation).

Per object, an upload costs a request, a repository and branch lookup, the write and a staging write with its
seal check. A batch pays the lookups and the seal check once and stages with batch writes, so what remains per
object is the write of its bytes. Everything is checked before the first byte is written, so a bad object (or a
duplicate path) stages nothing; a write that fails also stages nothing (what was written is unreferenced data,
which GC collects). Readers see the staged objects appear as they would after as many single uploads: there is
no atomicity across them, and a commit takes each one or not.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from .. import errors
from ..ports import BlockStore
from ..records import Entry
from ..validation import validate_path
from .addressing import new_data_address
from .object_fields import validate_entry, validate_headers

__all__ = [
    "MAX_BATCH_OBJECTS",
    "NewObject",
    "check_batch",
    "write_objects",
]

MAX_BATCH_OBJECTS = 1000
# How many objects of a batch are written at once (a Lambda container's S3 client keeps 10 connections).
WRITERS = 8
_MD5_HEX = re.compile(r"[0-9a-f]{32}")


@dataclass(frozen=True, slots=True)
class NewObject:
    """One object of a batch: its path, bytes, content type and user metadata, and optionally the MD5 (hex) the
    caller computed, which the stored bytes must match."""

    path: str
    data: bytes
    content_type: str = "application/octet-stream"
    user_metadata: Mapping[str, str] = field(default_factory=dict)
    checksum: str | None = None


def check_batch(objects: Sequence[NewObject]) -> None:
    """Every object's fields, before anything is written. Raises Invalid (HTTP 400)."""
    if not objects:
        raise errors.Invalid("a batch needs at least one object")
    if len(objects) > MAX_BATCH_OBJECTS:
        raise errors.Invalid(f"a batch holds at most {MAX_BATCH_OBJECTS} objects, not {len(objects)}")
    seen: set[str] = set()
    for obj in objects:
        validate_path(obj.path)
        if obj.path in seen:
            raise errors.Invalid(f"path {obj.path!r} appears twice in the batch")
        seen.add(obj.path)
        validate_headers(obj.content_type, obj.user_metadata)
        if obj.checksum is not None and not _MD5_HEX.fullmatch(obj.checksum):
            raise errors.Invalid(f"the checksum of {obj.path!r} must be an MD5 in 32 lowercase hex digits")


def write_objects(blocks: BlockStore, namespace: str, objects: Sequence[NewObject], now: float) -> list[Entry]:
    """Writes each object's bytes to a fresh address under ``namespace``, several at once; returns their entries
    in the order given. Raises Invalid when stored bytes do not match the checksum the caller gave."""

    def write(obj: NewObject) -> Entry:
        address = new_data_address(namespace, now)
        written = blocks.put(address, obj.data)
        if obj.checksum is not None and written.etag != obj.checksum:
            raise errors.Invalid(f"the bytes of {obj.path!r} have MD5 {written.etag}, not {obj.checksum} as claimed")
        entry = Entry(
            physical_address=address,
            size=written.size,
            etag=written.etag,
            mtime=int(now),
            content_type=obj.content_type,
            user_metadata=dict(obj.user_metadata),
        )
        validate_entry(entry)
        return entry

    if len(objects) == 1:
        return [write(objects[0])]
    with ThreadPoolExecutor(min(WRITERS, len(objects)), thread_name_prefix="lakelet-batch") as pool:
        return list(pool.map(write, objects))
