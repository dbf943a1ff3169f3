"""The import's errors, which live in graveler's one error module (errors.py: the tree and its statuses)."""

from __future__ import annotations

from ..errors import ImportCanceled, ImportFinished, ImportNotAllowed, ImportNotFound

__all__ = ["ImportCanceled", "ImportFinished", "ImportNotAllowed", "ImportNotFound"]
