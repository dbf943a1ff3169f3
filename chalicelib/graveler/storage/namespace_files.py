"""A repository's storage namespace as code outside graveler may use it: GC's rules and job files, the S3
gateway's multipart records and parts, presigned reads of those files, copies into the namespace, and presigned
uploads of the addresses new_physical_address hands out.

The engine's block store stays inside graveler; what leaves it is this view of one namespace, where every write,
copy destination, multipart upload and presigned URL must lie inside that namespace. Code holding one
repository's files can therefore never write into another repository's data. Reads are not confined: a copy or a
part copy across repositories reads the source repository's data at an address graveler itself handed out
(stat_object), and a read never changes anything.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from .. import errors
from ..ports import BlockStore, PutResult

__all__ = ["CONTENT_ID", "NamespaceFiles"]

# Range and metarange ids are SHA-256 hex digests of their content (committed/ids.py).
CONTENT_ID = re.compile(r"[0-9a-f]{64}")


class NamespaceFiles:
    """The blobs of one storage namespace (``s3://bucket/prefix``, as Repository.storage_namespace spells it)."""

    def __init__(self, blocks: BlockStore, namespace: str) -> None:
        self._blocks = blocks
        self._namespace = namespace.rstrip("/")

    @property
    def namespace(self) -> str:
        return self._namespace

    def _inside(self, address: str) -> str:
        if not address.startswith(self._namespace + "/"):
            raise errors.Invalid(f"address {address!r} is outside the storage namespace {self._namespace}")
        return address

    def get(self, address: str, start: int | None = None, end: int | None = None) -> bytes:
        """The blob, or bytes [start, end] inclusive. Raises ObjectNotFound."""
        return self._blocks.get(address, start, end)

    def stat(self, address: str) -> PutResult:
        """The blob's size and the store's ETag (ObjectNotFound when missing): a read, so not confined."""
        return self._blocks.stat(address)

    def put(self, address: str, data: bytes) -> PutResult:
        return self._blocks.put(self._inside(address), data)

    def delete(self, address: str) -> None:
        self._blocks.delete(self._inside(address))

    def list_blobs(self, prefix: str) -> Iterator[tuple[str, int]]:
        """(address, size) of the namespace's blobs under ``prefix``, in address order."""
        return self._blocks.list_blobs(self._inside(prefix))

    def presign_get(self, address: str, expires_seconds: int) -> str:
        return self._blocks.presign_get(self._inside(address), expires_seconds)

    def copy(self, source: str, destination: str) -> PutResult:
        """Copies ``source`` (anywhere) to ``destination`` (inside) within the store. Raises ObjectNotFound."""
        return self._blocks.copy(source, self._inside(destination))

    def create_multipart_upload(self, address: str) -> str:
        return self._blocks.create_multipart_upload(self._inside(address))

    def upload_part(self, address: str, upload_id: str, part_number: int, data: bytes) -> PutResult:
        return self._blocks.upload_part(self._inside(address), upload_id, part_number, data)

    def upload_part_copy(
        self, address: str, upload_id: str, part_number: int, source: str, start: int, end: int
    ) -> PutResult:
        return self._blocks.upload_part_copy(self._inside(address), upload_id, part_number, source, start, end)

    def list_parts(self, address: str, upload_id: str) -> list[tuple[int, PutResult]]:
        return self._blocks.list_parts(self._inside(address), upload_id)

    def complete_multipart_upload(self, address: str, upload_id: str, parts: list[tuple[int, str]]) -> PutResult:
        return self._blocks.complete_multipart_upload(self._inside(address), upload_id, parts)

    def abort_multipart_upload(self, address: str, upload_id: str) -> None:
        self._blocks.abort_multipart_upload(self._inside(address), upload_id)
