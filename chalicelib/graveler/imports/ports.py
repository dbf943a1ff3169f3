"""The ports an import needs besides graveler's own: a lister of the source object store and a store of the
status records. Adapters live in chalicelib/adapters (S3, and in-memory twins); tests/contract runs one suite
over each pair."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

from .status import ImportRecord


@dataclass(frozen=True, slots=True)
class SourceObject:
    """One listed source object: its key in its bucket, and the size, ETag (unquoted) and mtime (unix seconds)
    that the imported entry keeps."""

    key: str
    size: int
    etag: str
    mtime: int


class SourceLister(Protocol):
    """Lists a source bucket in key order (S3's order: UTF-8 bytes, which is Python's str order)."""

    def pages(self, bucket: str, prefix: str, start_after: str = "") -> Iterator[list[SourceObject]]:
        """The objects under ``prefix`` with key > ``start_after``, one listing page at a time, in key order.
        Raises NotFound for a missing bucket, StorageError when the store fails."""
        ...

    def common_prefixes(self, bucket: str, prefix: str, limit: int) -> list[str]:
        """Up to ``limit`` sorted "directories" right under ``prefix`` (keys ending at the next "/"), for planning
        slices. Raises as ``pages``."""
        ...

    def head(self, bucket: str, key: str) -> SourceObject:
        """One object. Raises ObjectNotFound when it does not exist."""
        ...


class ImportRecords(Protocol):
    """Status records of imports, per repository namespace. Records are small; progress and the cancel mark are
    kept apart from them so that parallel tasks never overwrite each other."""

    def create(self, namespace: str, record: ImportRecord) -> None:
        """Stores a new record. Raises AlreadyExists if one with this id exists."""
        ...

    def get(self, namespace: str, import_id: str) -> ImportRecord:
        """The record. Raises ImportNotFound."""
        ...

    def save(self, namespace: str, record: ImportRecord) -> None:
        """Replaces the record (its state moves forward only: the caller decides)."""
        ...

    def report_progress(self, namespace: str, import_id: str, part: str, count: int) -> None:
        """Sets the count of objects ``part`` (a slice) has ingested so far; a retry of the part overwrites it."""
        ...

    def progress(self, namespace: str, import_id: str) -> int:
        """The sum of every part's count."""
        ...

    def cancel(self, namespace: str, import_id: str) -> None:
        """Marks the import canceled (idempotent)."""
        ...

    def canceled(self, namespace: str, import_id: str) -> bool:
        """Whether ``cancel`` was called."""
        ...

    def decide(self, namespace: str, import_id: str, outcome: str) -> str:
        """Records ``outcome`` (CANCELING or MERGING) as the import's end unless one was recorded already, with a
        conditional create: of a cancel and the final merge racing, exactly one wins. Returns the recorded one
        (``outcome`` when this call won, or when it had won before: a retry)."""
        ...


__all__ = ["ImportRecords", "SourceLister", "SourceObject"]
