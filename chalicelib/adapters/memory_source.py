"""The import's source lister over the in-memory block store: the objects tests put at s3://bucket/key are the
sources, and the block store reads them back for the imported entries, as S3 does for the real lister."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from chalicelib.graveler import errors
from chalicelib.graveler.imports.ports import SourceObject

from .memory_blocks import MemoryBlockStore

__all__ = ["MemorySourceLister"]


class MemorySourceLister:
    """``mtime(address)`` gives each object's mtime (the memory store keeps none); ``before_page`` runs before
    each page is returned, for tests that change the world in the middle of a listing."""

    def __init__(
        self,
        blocks: MemoryBlockStore,
        page_size: int = 1000,
        mtime: Callable[[str], int] | None = None,
        before_page: Callable[[], None] | None = None,
    ) -> None:
        self._blocks = blocks
        self.page_size = page_size
        self._mtime = mtime or (lambda address: 1_700_000_000)
        self.before_page = before_page

    def _object(self, bucket: str, key: str) -> SourceObject:
        address = f"s3://{bucket}/{key}"
        stat = self._blocks.stat(address)
        return SourceObject(key, stat.size, stat.etag, self._mtime(address))

    def _keys(self, bucket: str, prefix: str) -> list[str]:
        root = f"s3://{bucket}/"
        return [address[len(root) :] for address, _ in self._blocks.list_blobs(root + prefix)]

    def pages(self, bucket: str, prefix: str, start_after: str = "") -> Iterator[list[SourceObject]]:
        keys = [k for k in self._keys(bucket, prefix) if k > start_after]
        for start in range(0, len(keys), self.page_size):
            if self.before_page is not None:
                self.before_page()
            page = []
            for key in keys[start : start + self.page_size]:
                try:
                    page.append(self._object(bucket, key))
                except errors.ObjectNotFound:
                    continue  # deleted since the listing began, as S3 may show it
            yield page

    def common_prefixes(self, bucket: str, prefix: str, limit: int) -> list[str]:
        found = set()
        for key in self._keys(bucket, prefix):
            head, slash, _ = key[len(prefix) :].partition("/")
            if slash:
                found.add(prefix + head + "/")
        return sorted(found)[:limit]

    def head(self, bucket: str, key: str) -> SourceObject:
        try:
            return self._object(bucket, key)
        except errors.ObjectNotFound:
            raise errors.ObjectNotFound(f"source object s3://{bucket}/{key} not found") from None
