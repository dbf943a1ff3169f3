"""Paging as the DynamoDB adapters page: items in key order after a cursor, up to a limit. Shared by the twins."""

from __future__ import annotations

__all__ = ["page"]


def page(items: dict[str, object], after: str, limit: int) -> list:  # type: ignore[type-arg]
    return [items[k] for k in sorted(items) if k > after][:limit]
