"""A slice's changes: the sources listed page by page and mapped to destination keys, merged with the base's keys
under each destination, which become tombstones when the source no longer holds them (a re-import replaces the
destination). Memory stays bounded: one listing page and one base range at a time.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from ..records import Entry, Key, StagedEntry
from .errors import ImportNotAllowed
from .internal import internal_key
from .ports import SourceLister, SourceObject
from .request import OBJECT, ImportLocation

# The highest code point: no key continues a string past it, so "<k[:-1]><k[-1]-1><MAX>" is a key just below k
# for every key S3 would list (S3 has no inclusive StartAfter).
_MAX_CHAR = "\U0010ffff"

OnPage = Callable[[int], None]


def just_below(key: str) -> str:
    """A string below ``key`` with no listable key in between: StartAfter for a listing that must include ``key``."""
    if not key:
        return ""
    last = key[-1]
    if last == "\x00":
        return key[:-1]
    return key[:-1] + chr(ord(last) - 1) + _MAX_CHAR


def source_entry(bucket: str, found: SourceObject) -> Entry:
    """The imported entry: it points at the source object itself (zero copy), with its size, ETag and mtime."""
    return Entry(f"s3://{bucket}/{found.key}", found.size, found.etag, found.mtime)


def _window(loc: ImportLocation, lo: str, hi: str | None) -> tuple[str, str | None] | None:
    """[start, stop) of destination keys of ``loc`` inside [lo, hi), or None when they do not meet."""
    d = loc.destination
    start = max(lo, d)
    if start != d and not start.startswith(d):
        return None  # start is past every key under d
    if loc.type == OBJECT and start != d:
        return None
    if hi is not None and hi <= start:
        return None
    return start, hi


def _sources(
    lister: SourceLister, loc: ImportLocation, start: str, stop: str | None, on_page: OnPage
) -> Iterator[tuple[str, Entry]]:
    """(destination key, entry) of the sources landing in [start, stop), in key order."""
    if loc.type == OBJECT:
        found = lister.head(loc.bucket, loc.key)
        on_page(1)
        yield loc.destination, source_entry(loc.bucket, found)
        return
    first = loc.source_key(start)
    for page in lister.pages(loc.bucket, loc.key, just_below(first)):
        landed = 0
        for found in page:
            if found.key < first:
                continue
            if internal_key(found.key):
                # A namespace inside the source (its marker is under _lakefs/): never imported (internal.py).
                raise ImportNotAllowed(
                    f"import from s3://{loc.bucket}/{loc.key} is not allowed: it holds s3://{loc.bucket}/{found.key},"
                    " a repository's metadata, so it contains a storage namespace"
                )
            key = loc.destination_key(found.key)
            if stop is not None and key >= stop:
                on_page(landed)
                return
            if key:  # a marker object named exactly like the prefix has no path of its own when importing to ""
                landed += 1
                yield key, source_entry(loc.bucket, found)
        on_page(landed)


def _replace(sources: Iterator[tuple[str, Entry]], base: Iterator[str]) -> Iterator[StagedEntry]:
    """The sources, plus a tombstone for every base key they no longer hold, in key order."""
    source = next(sources, None)
    existing = next(base, None)
    while source is not None or existing is not None:
        if existing is not None and (source is None or existing < source[0]):
            yield StagedEntry(Key(existing), None)
            existing = next(base, None)
            continue
        assert source is not None
        if existing == source[0]:
            existing = next(base, None)
        yield StagedEntry(Key(source[0]), source[1])
        source = next(sources, None)


def slice_changes(
    lister: SourceLister,
    base_keys: Callable[[str], Iterator[str]],
    locations: tuple[ImportLocation, ...],
    lo: str,
    hi: str | None,
    on_page: OnPage,
) -> Iterator[StagedEntry]:
    """Every change of the slice [lo, hi), in key order. ``base_keys(start)`` iterates the base's keys >= start;
    ``on_page(n)`` runs after each listing page, n the objects of it that landed in the slice (progress, and the
    cancel check)."""
    for loc in locations:  # in destination order: their intervals are disjoint, so this is key order
        window = _window(loc, lo, hi)
        if window is None:
            continue
        start, stop = window

        def under(first: str = start, end: str | None = stop, where: ImportLocation = loc) -> Iterator[str]:
            for key in base_keys(first):
                if not where.covers(key) or (end is not None and key >= end):
                    return
                yield key

        yield from _replace(_sources(lister, loc, start, stop, on_page), under())


__all__ = ["just_below", "slice_changes", "source_entry"]
