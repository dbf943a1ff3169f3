"""Presigned multipart uploads (lakeFS's createPresignMultipartUpload, uploadPart, completePresignMultipartUpload,
abortPresignMultipartUpload): the client PUTs each part straight to S3 by a presigned URL, so an object of any
size (up to S3's 10,000 parts) never passes through API Gateway or Lambda.

The address is a fresh one under the repository's ``data/`` (new_physical_address), which the API signs for
(repository, branch, path) as it does for single presigned uploads. Once completed, the upload id is gone, so no
part URL can write the object again: unlike a single presigned PUT, the completed object is staged where it is,
without a copy. The part sizes follow S3's rule (every part but the last at least 5 MiB).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .. import errors
from ..branches.protection import BranchProtection, NoProtection
from ..ports import BlockStore, RefStore
from ..reads.shared import RepositoryForWrite
from ..records import BranchID, Entry
from ..validation import validate_path
from .objects import Objects

__all__ = ["MAX_PARTS", "MultipartParts", "PresignedMultipart", "PresignedParts"]

MAX_PARTS = 10_000
# lakeFS reads a copy range as "bytes=%d-%d": one closed range.
_BYTE_RANGE = re.compile(r"bytes=(\d+)-(\d+)")


@dataclass(frozen=True, slots=True)
class PresignedParts:
    """A started upload: its store id and a presigned PUT per part asked for (part 1 first)."""

    upload_id: str
    part_urls: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class MultipartParts:
    """What presigned multipart uploads use: the block and ref stores, the clock, the guard, a repository
    open for writes, and the object use cases (a completed upload is linked as an object)."""

    refs: RefStore
    blocks: BlockStore
    clock: Callable[[], float]
    guard: BranchProtection | NoProtection
    objects: Objects
    repository_for_write: RepositoryForWrite


class PresignedMultipart:
    """The presigned multipart upload use cases (built on the object use cases: a completed upload is linked)."""

    def __init__(self, parts: MultipartParts) -> None:
        self._parts = parts

    def _upload_address(self, repo_id: str, address: str) -> str:
        repo = self._parts.repository_for_write(repo_id)
        if not address.startswith(repo.storage_namespace.rstrip("/") + "/data/"):
            raise errors.Invalid("the physical address is outside the repository's storage namespace")
        return address

    def start_presigned_multipart(
        self, repo_id: str, branch_id: str, path: str, address: str, parts: int, expires_seconds: int
    ) -> PresignedParts:
        """Starts a multipart upload of ``address`` (from new_physical_address) and presigns ``parts`` part URLs.
        Raises Invalid for a part count outside 0-10000, BranchNotFound, ReadOnlyRepository."""
        validate_path(path)
        if not 0 <= parts <= MAX_PARTS:
            raise errors.Invalid(f"parts can be between 0 and {MAX_PARTS}")
        self._parts.objects.check_upload_branch(repo_id, branch_id)
        target = self._upload_address(repo_id, address)
        upload_id = self._parts.blocks.create_multipart_upload(target)
        urls = tuple(
            self._parts.blocks.presign_upload_part(target, upload_id, number, expires_seconds)
            for number in range(1, parts + 1)
        )
        return PresignedParts(upload_id, urls)

    def presign_part(self, repo_id: str, address: str, upload_id: str, part_number: int, expires_seconds: int) -> str:
        """A presigned PUT for one more part of a started upload. Raises Invalid for a part number outside
        1-10000."""
        if not 1 <= part_number <= MAX_PARTS:
            raise errors.Invalid(f"part number must be between 1 and {MAX_PARTS}")
        target = self._upload_address(repo_id, address)
        return self._parts.blocks.presign_upload_part(target, upload_id, part_number, expires_seconds)

    def copy_part(
        self,
        repo_id: str,
        address: str,
        upload_id: str,
        part_number: int,
        source: tuple[str, str, str],
        byte_range: str | None = None,
    ) -> str:
        """Stores part ``part_number`` of the upload as a copy, inside the store, of the object at ``source``
        (repository, ref, path), whole or ``bytes=start-end`` of it; returns the part's ETag. Raises Invalid (a
        part number outside 1-10000, a malformed or outside range), ObjectNotFound (no such source or upload)."""
        if not 1 <= part_number <= MAX_PARTS:
            raise errors.Invalid(f"part number must be between 1 and {MAX_PARTS}")
        target = self._upload_address(repo_id, address)
        entry = self._parts.objects.stat_object(*source)
        start, end = 0, entry.size - 1
        if byte_range is not None:
            match = _BYTE_RANGE.fullmatch(byte_range.strip())
            if match is None:
                raise errors.Invalid(f"unsupported range {byte_range!r}: expected bytes=start-end")
            start, end = int(match[1]), int(match[2])
            if start > end or end >= entry.size:
                raise errors.Invalid(f"range {byte_range!r} is outside the source's {entry.size} bytes")
        result = self._parts.blocks.upload_part_copy(target, upload_id, part_number, entry.physical_address, start, end)
        return result.etag

    def complete_presigned_multipart(
        self,
        repo_id: str,
        branch_id: str,
        path: str,
        address: str,
        upload_id: str,
        parts: Sequence[tuple[int, str]],
        content_type: str,
        user_metadata: dict[str, str],
    ) -> Entry:
        """Completes the upload from its (part number, ETag) list and stages the object at ``path``. Raises
        Invalid (no parts, a part missing, too small or with a wrong ETag), ObjectNotFound (an unknown upload),
        BranchNotFound, ReadOnlyRepository, a protected branch's error."""
        validate_path(path)
        if not parts:
            raise errors.Invalid("parts are required")
        repo = self._parts.repository_for_write(repo_id)
        self._parts.refs.get_branch(repo.id, BranchID(branch_id))
        self._parts.guard.refuse_write(repo, branch_id)
        target = self._upload_address(repo_id, address)
        written = self._parts.blocks.complete_multipart_upload(target, upload_id, list(parts))
        entry = Entry(
            physical_address=target,
            size=written.size,
            etag=written.etag,
            mtime=int(self._parts.clock()),
            content_type=content_type or "application/octet-stream",
            user_metadata=dict(user_metadata),
        )
        return self._parts.objects.link_object(repo_id, branch_id, path, entry)

    def abort_presigned_multipart(self, repo_id: str, address: str, upload_id: str) -> None:
        """Drops the upload and its parts (idempotent)."""
        self._parts.blocks.abort_multipart_upload(self._upload_address(repo_id, address), upload_id)
