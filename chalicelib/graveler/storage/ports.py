"""The port of the storage package's caches: what tells a cache that the records it holds are still current."""

from __future__ import annotations

from typing import Protocol

__all__ = ["ChangeWitness"]


class ChangeWitness(Protocol):
    """Whether a table may have been written since a mark. ``mark()`` is taken before a read; while
    ``unchanged_since(mark)`` holds, no write of the table has completed since, so what the read returned is
    still what the table holds (a write still in flight may be ordered after any read). A write must count only
    once its change is visible, never before."""

    def mark(self) -> object: ...

    def unchanged_since(self, mark: object) -> bool: ...
