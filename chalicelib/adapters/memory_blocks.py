"""The BlockStore twin: blobs in a dict, with S3's ETags, multipart uploads and storage classes, the behaviour
the contract suite holds the S3 adapter to."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterator

from chalicelib.graveler import errors
from chalicelib.graveler.ports import PutResult

__all__ = ["MemoryBlockStore"]


class MemoryBlockStore:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.blobs: dict[str, bytes] = {}
        # The ETag S3 would give each blob: the MD5 of its bytes, or for a multipart upload the MD5 of the
        # parts' MD5s with the part count (only those are kept here).
        self._multipart_etags: dict[str, str] = {}
        # upload id -> (address, part number -> bytes)
        self._uploads: dict[str, tuple[str, dict[int, bytes]]] = {}
        self._upload_count = 0
        # A blob's storage class when a test set one (S3 lifecycle rules move objects to others); else STANDARD.
        self.storage_classes: dict[str, str] = {}

    def put(self, address: str, data: bytes) -> PutResult:
        with self._lock:
            self.blobs[address] = bytes(data)
            self._multipart_etags.pop(address, None)
        return PutResult(size=len(data), etag=hashlib.md5(data).hexdigest())

    def put_if_absent(self, address: str, data: bytes) -> bool:
        with self._lock:
            if address in self.blobs:
                return False
            self.blobs[address] = bytes(data)
        return True

    def get(self, address: str, start: int | None = None, end: int | None = None) -> bytes:
        try:
            data = self.blobs[address]
        except KeyError:
            raise errors.ObjectNotFound(address) from None
        if start is None:
            return data
        return data[start : (len(data) if end is None else end + 1)]

    def exists(self, address: str) -> bool:
        return address in self.blobs

    def stat(self, address: str) -> PutResult:
        with self._lock:
            data = self.blobs.get(address)
            etag = self._multipart_etags.get(address)
        if data is None:
            raise errors.ObjectNotFound(address)
        return PutResult(len(data), etag or hashlib.md5(data).hexdigest())

    def storage_class(self, address: str) -> str:
        with self._lock:
            if address not in self.blobs:
                raise errors.ObjectNotFound(address)
            return self.storage_classes.get(address, "STANDARD")

    def presign_get(self, address: str, expires_seconds: int) -> str:
        return f"https://memory.invalid/{address.removeprefix('s3://')}?expires={expires_seconds}"

    def presign_put(self, address: str, expires_seconds: int, if_none_match: bool = False) -> str:
        condition = "&if-none-match" if if_none_match else ""
        return f"https://memory.invalid/{address.removeprefix('s3://')}?upload{condition}&expires={expires_seconds}"

    def delete(self, address: str) -> None:
        with self._lock:
            self.blobs.pop(address, None)
            self._multipart_etags.pop(address, None)

    # S3's rule for every part of a multipart upload but the last.
    MIN_PART_SIZE = 5 * 1024 * 1024

    def list_blobs(self, prefix: str) -> Iterator[tuple[str, int]]:
        with self._lock:
            found = sorted((a, len(d)) for a, d in self.blobs.items() if a.startswith(prefix))
        yield from found

    def copy(self, source: str, destination: str) -> PutResult:
        return self.put(destination, self.get(source))

    def presign_upload_part(self, address: str, upload_id: str, part_number: int, expires_seconds: int) -> str:
        self._parts(address, upload_id)  # an unknown upload is ObjectNotFound, as S3 would answer the PUT
        where = address.removeprefix("s3://")
        return f"https://memory.invalid/{where}?uploadId={upload_id}&partNumber={part_number}&expires={expires_seconds}"

    def create_multipart_upload(self, address: str) -> str:
        with self._lock:
            self._upload_count += 1
            upload_id = f"memory-upload-{self._upload_count}"
            self._uploads[upload_id] = (address, {})
        return upload_id

    def _parts(self, address: str, upload_id: str) -> dict[int, bytes]:
        upload = self._uploads.get(upload_id)
        if upload is None or upload[0] != address:
            raise errors.ObjectNotFound(f"no multipart upload {upload_id} for {address}")
        return upload[1]

    def upload_part(self, address: str, upload_id: str, part_number: int, data: bytes) -> PutResult:
        if not 1 <= part_number <= 10_000:
            raise errors.Invalid(f"part number {part_number} is outside 1-10000")
        with self._lock:
            self._parts(address, upload_id)[part_number] = bytes(data)
        return PutResult(len(data), hashlib.md5(data).hexdigest())

    def upload_part_copy(
        self, address: str, upload_id: str, part_number: int, source: str, start: int, end: int
    ) -> PutResult:
        data = self.get(source)
        if not 0 <= start <= end < len(data):
            raise errors.Invalid(f"range {start}-{end} is outside the {len(data)} bytes of {source}")
        return self.upload_part(address, upload_id, part_number, data[start : end + 1])

    def list_parts(self, address: str, upload_id: str) -> list[tuple[int, PutResult]]:
        with self._lock:
            parts = dict(self._parts(address, upload_id))
        return [(n, PutResult(len(d), hashlib.md5(d).hexdigest())) for n, d in sorted(parts.items())]

    def complete_multipart_upload(self, address: str, upload_id: str, parts: list[tuple[int, str]]) -> PutResult:
        with self._lock:
            stored = self._parts(address, upload_id)
            if not parts:
                raise errors.Invalid("a multipart upload needs at least one part")
            chosen: list[bytes] = []
            previous = 0
            for index, (number, etag) in enumerate(parts):
                data = stored.get(number)
                if number <= previous:
                    raise errors.Invalid("parts must be listed in ascending order")
                if data is None or hashlib.md5(data).hexdigest() != etag.strip('"'):
                    raise errors.Invalid(f"part {number} is missing or its etag does not match")
                if index < len(parts) - 1 and len(data) < self.MIN_PART_SIZE:
                    raise errors.Invalid(f"part {number} is smaller than {self.MIN_PART_SIZE} bytes")
                chosen.append(data)
                previous = number
            whole = b"".join(chosen)
            digest = hashlib.md5(b"".join(hashlib.md5(d).digest() for d in chosen)).hexdigest()
            self.blobs[address] = whole
            self._multipart_etags[address] = f"{digest}-{len(chosen)}"
            del self._uploads[upload_id]
        return PutResult(len(whole), self._multipart_etags[address])

    def abort_multipart_upload(self, address: str, upload_id: str) -> None:
        with self._lock:
            upload = self._uploads.get(upload_id)
            if upload is not None and upload[0] == address:
                del self._uploads[upload_id]
