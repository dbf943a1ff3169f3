"""Sorted views over staged and committed data, and the one paginator every listing uses.

A view is a function ``from_key -> iterator of items in key order``: restarting it at a later key is how a
listing seeks past a common prefix without reading what is under it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from itertools import islice
from typing import Protocol

from .records import EntryRecord, Page, StagedEntry

__all__ = ["DEFAULT_AMOUNT", "MAX_AMOUNT"]

MAX_AMOUNT = 1000
DEFAULT_AMOUNT = 100


class _Keyed(Protocol):
    @property
    def key(self) -> str: ...


def clamp_amount(amount: int | None) -> int:
    if amount is None or amount <= 0:
        return DEFAULT_AMOUNT
    return min(amount, MAX_AMOUNT)


def successor(key: str) -> str:
    """The smallest key greater than ``key``."""
    return key + "\x00"


def prefix_end(prefix: str) -> str:
    """The smallest key greater than every key starting with ``prefix``."""
    return prefix[:-1] + chr(ord(prefix[-1]) + 1)


def overlay(staged: Iterator[StagedEntry], committed: Iterator[EntryRecord]) -> Iterator[EntryRecord]:
    """Committed records with staged changes on top: a staged value replaces, a tombstone hides."""
    s = next(staged, None)
    c = next(committed, None)
    while s is not None or c is not None:
        if c is None or (s is not None and s.key <= c.key):
            assert s is not None
            if c is not None and s.key == c.key:
                c = next(committed, None)
            if s.value is not None:
                yield EntryRecord(s.key, s.value)
            s = next(staged, None)
        else:
            yield c
            c = next(committed, None)


def paginate[T: _Keyed](
    view: Callable[[str], Iterator[T]],
    make_common_prefix: Callable[[str], T],
    prefix: str = "",
    delimiter: str = "",
    after: str = "",
    amount: int | None = DEFAULT_AMOUNT,
) -> Page[T]:
    """One page of ``view`` under ``prefix`` after ``after`` (exclusive), folding keys into common prefixes."""
    limit = clamp_amount(amount)
    start = max(prefix, successor(after)) if after else prefix
    results: list[T] = []
    items = view(start)
    if not delimiter:
        # Nothing to fold: a plain run of the view, cut at the first key outside the prefix.
        for entry in islice(items, limit + 1):
            if not entry.key.startswith(prefix):
                break
            results.append(entry)
    while delimiter and len(results) <= limit:
        item = next(items, None)
        if item is None or not item.key.startswith(prefix):
            break
        cut = item.key.find(delimiter, len(prefix)) if delimiter else -1
        if cut < 0:
            results.append(item)
            continue
        common = item.key[: cut + len(delimiter)]
        if common > after:
            results.append(make_common_prefix(common))
        items = view(prefix_end(common))
    has_more = len(results) > limit
    results = results[:limit]
    return Page(results, has_more, results[-1].key if has_more else "")
