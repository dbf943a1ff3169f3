"""Sorted views over staged and committed data, the paginator of diffs and the column-wise one of object listings.

A view is a function ``from_key -> iterator of items in key order``: restarting it at a later key is how a
listing seeks past a common prefix without reading what is under it.

An object listing never builds a Python object per committed row: :func:`paginate_objects` copies runs of rows
out of the cached ranges column by column (the block's ``listing_columns``, a few Arrow conversions per page) into
:class:`ListedRows`, and an entry is built only when a caller reads that row as a ``ListedObject``. Staged changes
and common prefixes are the only rows handled one by one.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from itertools import islice
from typing import Protocol, overload

from ..records import Entry, EntryRecord, Key, ListedObject, Page, StagedEntry

__all__ = [
    "DEFAULT_AMOUNT",
    "MAX_AMOUNT",
    "ListedRows",
    "RowBlock",
    "StagedView",
    "clamp_amount",
    "overlay",
    "paginate",
    "paginate_objects",
    "prefix_end",
    "user_metadata",
]

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


# Keys scanned at a time for a delimiter: a page, give or take, so a folded prefix costs no more than that.
_SCAN = 1024
_EMPTY_METADATA = "{}"

# A run of listed rows as columns: keys, physical addresses, sizes, etags, mtimes, content types, user metadata
# (canonical JSON text for committed rows, a map for staged ones). A common prefix has address None.
RowColumns = tuple[list[str], list[str], list[int], list[str], list[int], list[str], list[str]]


class RowBlock(Protocol):
    """Committed rows in key order (a cached range), read a run of rows at a time."""

    def __len__(self) -> int: ...

    def key_at(self, index: int) -> str: ...

    def lower_bound(self, key: str, low: int = 0) -> int: ...

    def keys_between(self, start: int, stop: int) -> list[str]: ...

    def listing_columns(self, start: int, stop: int) -> RowColumns: ...


Blocks = Callable[[str], Iterator[tuple[RowBlock, int]]]
StagedView = Callable[[str], Iterator[StagedEntry]]


class ListedRows(Sequence[ListedObject]):
    """The rows of an object listing page, kept as columns of plain values.

    Reads as a sequence of ``ListedObject`` (built on access, with a fresh metadata map each time, so nothing a
    caller mutates reaches a cache); serializers read the columns directly. Equal to any sequence of the same
    ``ListedObject``s, a list included.
    """

    __slots__ = ("addresses", "content_types", "etags", "keys", "metadata", "mtimes", "sizes")

    def __init__(self) -> None:
        self.keys: list[str] = []
        self.addresses: list[str | None] = []
        self.sizes: list[int] = []
        self.etags: list[str] = []
        self.mtimes: list[int] = []
        self.content_types: list[str] = []
        self.metadata: list[str | dict[str, str]] = []

    def extend(self, columns: RowColumns) -> None:
        keys, addresses, sizes, etags, mtimes, content_types, metadata = columns
        self.keys += keys
        self.addresses += addresses
        self.sizes += sizes
        self.etags += etags
        self.mtimes += mtimes
        self.content_types += content_types
        self.metadata += metadata

    def append(self, key: str, entry: Entry | None) -> None:
        """One staged entry, or (entry None) a common prefix."""
        self.keys.append(key)
        if entry is None:
            self.addresses.append(None)
            self.sizes.append(0)
            self.etags.append("")
            self.mtimes.append(0)
            self.content_types.append("")
            self.metadata.append(_EMPTY_METADATA)
            return
        self.addresses.append(entry.physical_address)
        self.sizes.append(entry.size)
        self.etags.append(entry.etag)
        self.mtimes.append(entry.mtime)
        self.content_types.append(entry.content_type)
        self.metadata.append(dict(entry.user_metadata))

    def truncate(self, length: int) -> None:
        for column in (
            self.keys,
            self.addresses,
            self.sizes,
            self.etags,
            self.mtimes,
            self.content_types,
            self.metadata,
        ):
            del column[length:]

    def __len__(self) -> int:
        return len(self.keys)

    def entry_at(self, index: int) -> Entry | None:
        address = self.addresses[index]
        if address is None:
            return None
        return Entry(
            address,
            self.sizes[index],
            self.etags[index],
            self.mtimes[index],
            self.content_types[index],
            user_metadata(self.metadata[index]),
        )

    @overload
    def __getitem__(self, index: int) -> ListedObject: ...

    @overload
    def __getitem__(self, index: slice) -> list[ListedObject]: ...

    def __getitem__(self, index: int | slice) -> ListedObject | list[ListedObject]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError("listed row out of range")
        return ListedObject(Key(self.keys[index]), self.entry_at(index))

    def __iter__(self) -> Iterator[ListedObject]:
        for index in range(len(self.keys)):
            yield ListedObject(Key(self.keys[index]), self.entry_at(index))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ListedRows | list | tuple):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"ListedRows({list(self)!r})"


def user_metadata(value: str | dict[str, str]) -> dict[str, str]:
    """A row's user metadata as a fresh map, from the stored canonical JSON or a staged entry's map."""
    if isinstance(value, dict):
        return dict(value)
    if value == _EMPTY_METADATA:
        return {}
    loaded: dict[str, str] = json.loads(value)
    return loaded


def _runs(blocks: Blocks, staged: StagedView | None, start: str) -> Iterator[tuple[RowBlock, int, int] | StagedEntry]:
    """The rows from ``start`` on, committed with staged changes on top, as runs of committed rows (block, first,
    stop) no staged key falls inside, and staged entries (a staged value replaces the committed row of its key, a
    tombstone hides it and is not yielded)."""
    pending = staged(start) if staged is not None else iter(())
    change = next(pending, None)
    for block, begin in blocks(start):
        size, first = len(block), begin
        while first < size:
            if change is None:
                yield block, first, size
                break
            stop = block.lower_bound(change.key, first)
            if stop > first:
                yield block, first, stop
                first = stop
            if first == size:
                break
            if block.key_at(first) == change.key:
                first += 1
            if change.value is not None:
                yield change
            change = next(pending, None)
    while change is not None:
        if change.value is not None:
            yield change
        change = next(pending, None)


def paginate_objects(
    blocks: Blocks,
    staged: StagedView | None,
    prefix: str = "",
    delimiter: str = "",
    after: str = "",
    amount: int | None = DEFAULT_AMOUNT,
) -> Page[ListedObject]:
    """One page of objects under ``prefix`` after ``after`` (exclusive), keys folded into common prefixes at
    ``delimiter``: the same page as :func:`paginate` over the overlay of ``staged`` on ``blocks``."""
    limit = clamp_amount(amount)
    rows = ListedRows()
    start: str | None = max(prefix, successor(after)) if after else prefix
    end = prefix_end(prefix) if prefix else None
    while start is not None and len(rows) <= limit:
        start = _fill(rows, _runs(blocks, staged, start), limit + 1, prefix, delimiter, after, end)
    has_more = len(rows) > limit
    rows.truncate(limit)
    return Page(rows, has_more, rows.keys[-1] if has_more else "")


def _fill(
    rows: ListedRows,
    runs: Iterator[tuple[RowBlock, int, int] | StagedEntry],
    need: int,
    prefix: str,
    delimiter: str,
    after: str,
    end: str | None,
) -> str | None:
    """Adds rows until ``need`` are listed, the prefix ends or the rows do; returns the key to continue from
    after a common prefix, or None when the page is done."""
    for run in runs:
        if isinstance(run, StagedEntry):
            key = run.key
            if end is not None and key >= end:
                return None
            if delimiter:
                cut = key.find(delimiter, len(prefix))
                if cut >= 0:
                    return _common_prefix(rows, key[: cut + len(delimiter)], after)
            rows.append(key, run.value)
            if len(rows) >= need:
                return None
            continue
        block, first, stop = run
        last = False
        if end is not None and block.key_at(stop - 1) >= end:
            stop, last = block.lower_bound(end, first), True
        if not delimiter:
            rows.extend(block.listing_columns(first, min(stop, first + need - len(rows))))
            if last or len(rows) >= need:
                return None
            continue
        while first < stop:
            scan = min(stop, first + _SCAN)
            for offset, name in enumerate(block.keys_between(first, scan)):
                cut = name.find(delimiter, len(prefix))
                if cut >= 0:
                    plain = first + offset
                    rows.extend(block.listing_columns(first, min(plain, first + need - len(rows))))
                    if len(rows) >= need:
                        return None
                    return _common_prefix(rows, name[: cut + len(delimiter)], after)
            rows.extend(block.listing_columns(first, min(scan, first + need - len(rows))))
            if len(rows) >= need:
                return None
            first = scan
        if last:
            return None
    return None


def _common_prefix(rows: ListedRows, common: str, after: str) -> str:
    if common > after:
        rows.append(common, None)
    return prefix_end(common)
