"""Multipart uploads of the gateway: their records, their parts, and how parts become one object.

An upload writes one fresh physical address of the repository (graveler's new_physical_address), through a
real multipart upload of the block store at that address. Its record (branch, path, content type, metadata)
is a small JSON file under ``<namespace>/_lakefs/multipart/<upload id>.json``; Lakelet has no table for it and
needs none: the upload id comes back with every request, next to the repository that names the namespace.

Parts come in two sizes. S3 wants every part but the last to hold at least 5 MiB, while a Lambda request
carries at most 6 MB including base64, about 4.5 MB of binary body. So:
- a part of 5 MiB or more goes straight into the block store's multipart upload, under its own number;
- a smaller part is kept as a blob of its own, ``<address>_parts/<number>-<md5>``, under data/ so that garbage
  collection removes the parts of an abandoned upload once they are older than its minimum age.
On completion (:func:`plan`) consecutive small parts are joined into store parts of at least 5 MiB: a lone
small part is copied inside the store, several are read and uploaded as one (at most ~15 MiB at a time).
Clients that follow S3's rule therefore get a plain S3 multipart upload with no copy at all; clients held to
the Lambda limit pay one more pass of their small parts through the gateway, at completion.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field

from chalicelib.graveler import errors
from chalicelib.graveler.storage.namespace_files import NamespaceFiles
from chalicelib.graveler.writes.addressing import metadata_address

from .errors import S3Error

MIN_PART_SIZE = 5 * 1024 * 1024
MAX_PART_NUMBER = 10_000
RECORDS = "multipart/"
_SMALL_PART = re.compile(r"_parts/(\d{5})-([0-9a-f]{32})$")


@dataclass(frozen=True, slots=True)
class Upload:
    upload_id: str
    repository: str
    branch: str
    path: str
    address: str  # the physical address the completed object will have
    store_upload_id: str
    content_type: str
    user_metadata: dict[str, str] = field(default_factory=dict)
    initiated: int = 0
    initiator: str = ""

    @property
    def key(self) -> str:
        return f"{self.branch}/{self.path}"


@dataclass(frozen=True, slots=True)
class Part:
    number: int
    size: int
    etag: str  # what the client was given and gives back on completion
    blob: str | None = None  # a small part's own blob; None for a part inside the store's multipart upload


@dataclass(frozen=True, slots=True)
class Group:
    """Consecutive small parts that become store part ``number`` on completion."""

    number: int
    parts: tuple[Part, ...]

    @property
    def size(self) -> int:
        return sum(part.size for part in self.parts)


def multipart_etag(etags: list[str]) -> str:
    """S3's ETag of a multipart object: md5 of the parts' binary md5s, then ``-<count>``."""
    digests = b""
    for etag in etags:
        try:
            digests += bytes.fromhex(etag)
        except ValueError:
            digests += hashlib.md5(etag.encode()).digest()  # a store etag that is not an md5 (SSE-KMS)
    return f"{hashlib.md5(digests).hexdigest()}-{len(etags)}"


def plan(parts: list[Part]) -> list[Part | Group]:
    """How the client's parts become store parts: a part already in the store stays as it is; runs of small
    parts are grouped so that every store part but the last holds at least MIN_PART_SIZE. Raises EntityTooSmall
    when small parts before a large one add up to less than that (S3 refuses those too)."""
    result: list[Part | Group] = []
    run: list[Part] = []

    def close_run(final: bool) -> None:
        groups: list[list[Part]] = []
        for part in run:
            if not groups or sum(p.size for p in groups[-1]) >= MIN_PART_SIZE:
                groups.append([])
            groups[-1].append(part)
        if groups and not final and sum(p.size for p in groups[-1]) < MIN_PART_SIZE:
            if len(groups) == 1:
                raise S3Error(
                    "EntityTooSmall",
                    f"parts {run[0].number}-{run[-1].number} hold less than "
                    f"{MIN_PART_SIZE} bytes and are followed by another part",
                )
            groups[-2].extend(groups.pop())
        result.extend(Group(g[0].number, tuple(g)) for g in groups)
        run.clear()

    for part in parts:
        if part.blob is None:
            close_run(final=False)
            result.append(part)
        else:
            run.append(part)
    close_run(final=True)
    return result


class Uploads:
    """The uploads of one repository (one storage namespace)."""

    def __init__(self, files: NamespaceFiles) -> None:
        self._blocks = files
        self._namespace = files.namespace

    def _record(self, upload_id: str) -> str:
        return metadata_address(self._namespace, f"{RECORDS}{upload_id}.json")

    def create(self, upload: Upload) -> None:
        self._blocks.put(self._record(upload.upload_id), json.dumps(asdict(upload)).encode())

    def _read(self, address: str) -> Upload:
        return Upload(**json.loads(self._blocks.get(address)))

    def get(self, upload_id: str, branch: str, path: str) -> Upload:
        """The upload, which must be for this branch and path. Raises NoSuchUpload."""
        if not re.fullmatch(r"[0-9a-f]{32}", upload_id):
            raise S3Error("NoSuchUpload")
        try:
            upload = self._read(self._record(upload_id))
        except errors.ObjectNotFound:
            raise S3Error("NoSuchUpload") from None
        if (upload.branch, upload.path) != (branch, path):
            raise S3Error("NoSuchUpload", "the upload id belongs to another key")
        return upload

    def all(self) -> Iterator[Upload]:
        for address, _ in self._blocks.list_blobs(metadata_address(self._namespace, RECORDS)):
            try:
                yield self._read(address)
            except errors.ObjectNotFound:
                continue  # completed or aborted while listing

    def _small_blobs(self, upload: Upload, number: int | None = None) -> list[tuple[int, str, str, int]]:
        """(number, md5, address, size) of the upload's small parts (of one number, when given)."""
        prefix = f"{upload.address}_parts/" + ("" if number is None else f"{number:05d}-")
        found = []
        for address, size in self._blocks.list_blobs(prefix):
            match = _SMALL_PART.search(address)
            if match is not None:
                found.append((int(match[1]), match[2], address, size))
        return found

    def put_part(self, upload: Upload, number: int, data: bytes) -> Part:
        check_part_number(number)
        if len(data) >= MIN_PART_SIZE:
            with _store_upload():
                stored = self._blocks.upload_part(upload.address, upload.store_upload_id, number, data)
            self._drop_small(upload, number)
            return Part(number, len(data), stored.etag)
        md5 = hashlib.md5(data).hexdigest()
        blob = f"{upload.address}_parts/{number:05d}-{md5}"
        self._blocks.put(blob, data)
        self._drop_small(upload, number, keep=blob)
        return Part(number, len(data), md5, blob)

    def copy_part(self, upload: Upload, number: int, source: str, start: int, end: int) -> Part:
        """Bytes [start, end] of blob ``source`` as part ``number``. A small range is read and stored as a small
        part; a large one is copied inside the store."""
        check_part_number(number)
        if end - start + 1 >= MIN_PART_SIZE:
            # A missing source surfaces as ObjectNotFound too; the caller tells which by checking the source first.
            stored = self._blocks.upload_part_copy(upload.address, upload.store_upload_id, number, source, start, end)
            self._drop_small(upload, number)
            return Part(number, end - start + 1, stored.etag)
        return self.put_part(upload, number, self._blocks.get(source, start, end))

    def _drop_small(self, upload: Upload, number: int, keep: str = "") -> None:
        for _, _, address, _ in self._small_blobs(upload, number):
            if address != keep:
                self._blocks.delete(address)

    def parts(self, upload: Upload) -> dict[int, list[Part]]:
        """Every stored version of each part number: small parts first (a small part uploaded after a large
        one of the same number replaces it, and the store cannot forget the large one)."""
        found: dict[int, list[Part]] = {}
        for number, md5, address, size in self._small_blobs(upload):
            found.setdefault(number, []).append(Part(number, size, md5, address))
        with _store_upload():
            listed = self._blocks.list_parts(upload.address, upload.store_upload_id)
        for number, stored in listed:
            found.setdefault(number, []).append(Part(number, stored.size, stored.etag))
        return dict(sorted(found.items()))

    def assemble(self, upload: Upload, chosen: list[Part]) -> int:
        """Completes the store's upload from the chosen parts (see :func:`plan`); returns the object's size."""
        store_parts: list[tuple[int, str]] = []
        for item in plan(chosen):
            if isinstance(item, Part):
                store_parts.append((item.number, item.etag))
                continue
            if len(item.parts) == 1 and item.size > 0:
                (part,) = item.parts
                assert part.blob is not None
                stored = self._blocks.upload_part_copy(
                    upload.address, upload.store_upload_id, item.number, part.blob, 0, part.size - 1
                )
            else:
                data = b"".join(self._blocks.get(part.blob) for part in item.parts if part.blob is not None)
                stored = self._blocks.upload_part(upload.address, upload.store_upload_id, item.number, data)
            store_parts.append((item.number, stored.etag))
        try:
            result = self._blocks.complete_multipart_upload(upload.address, upload.store_upload_id, store_parts)
        except errors.Invalid as e:
            raise S3Error("InvalidPart", str(e)) from e
        return result.size

    def discard(self, upload: Upload, abort: bool) -> None:
        """Forgets the upload: its small parts, its record, and (``abort``) the store's multipart upload."""
        if abort:
            self._blocks.abort_multipart_upload(upload.address, upload.store_upload_id)
        for _, _, address, _ in self._small_blobs(upload):
            self._blocks.delete(address)
        self._blocks.delete(self._record(upload.upload_id))


@contextmanager
def _store_upload() -> Iterator[None]:
    """The store's upload is gone (completed, aborted, or expired by a lifecycle rule): so is ours."""
    try:
        yield
    except errors.ObjectNotFound as e:
        raise S3Error("NoSuchUpload", "the multipart upload no longer exists in the store") from e


def check_part_number(number: int) -> None:
    if not 1 <= number <= MAX_PART_NUMBER:
        raise S3Error("InvalidArgument", f"Part number must be an integer between 1 and {MAX_PART_NUMBER}")
