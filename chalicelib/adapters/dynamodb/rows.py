"""A staged row decoded straight from DynamoDB's JSON (the low-level client's AttributeValues), the engine's
StagedEntry out of it without PynamoDB's model layer: the reads of staged changes (a commit reads every one) spend
their CPU here. The layout is models.StagedRow's; a row damaged by hand (a field of the wrong type, user metadata
that is not JSON) is a StorageError naming it, and fields a row from an older release lacks take their defaults,
as PynamoDB's reading gave them. And the other way, a staged entry's attributes as PynamoDB's model writes them
(:func:`attributes`: building the model and serializing it was a tenth of the CPU of an upload's staged row)."""

from __future__ import annotations

import json
from typing import Any

from chalicelib.graveler import errors
from chalicelib.graveler.records import Entry, Key, StagedEntry

DEFAULT_CONTENT_TYPE = "application/octet-stream"
Item = dict[str, dict[str, Any]]


class _Damaged(ValueError):
    pass


def _value(item: Item, name: str, kind: str) -> Any:
    """The attribute's value of type ``kind`` (S, N, BOOL), None when absent or NULL."""
    attribute = item.get(name)
    if attribute is None or attribute.get("NULL"):
        return None
    value = attribute.get(kind)
    if value is None:
        raise _Damaged(f"{name} is not of type {kind}")
    return value


def _number(item: Item, name: str) -> int:
    text = _value(item, name, "N")
    if text is None:
        return 0
    try:
        return int(text)
    except ValueError:
        return int(json.loads(text))  # "1.0", "1e3": what PynamoDB's NumberAttribute read


def staged_item(item: Item) -> StagedEntry:
    """The staged change of one row of the staging table: the row as the adapter writes it decoded directly, and any
    other (an older row with NULLs or floats, a damaged one) the careful way."""
    try:
        return _as_written(item)
    except (KeyError, TypeError, ValueError, AttributeError):
        return _careful(item)


def _as_written(item: Item) -> StagedEntry:
    """Raises KeyError, TypeError, ValueError or AttributeError for any row not in the written layout."""
    key = Key(item["key"]["S"])
    tombstone = item.get("tombstone")
    if tombstone is not None and tombstone["BOOL"]:
        return StagedEntry(key, None)
    get = item.get
    address, size, etag, mtime, content_type, metadata = (
        get("physical_address"),
        get("size"),
        get("etag"),
        get("mtime"),
        get("content_type"),
        get("user_metadata"),
    )
    user_metadata: dict[str, str] = {}
    if metadata is not None and metadata["S"] != "{}":
        user_metadata = {str(k): str(v) for k, v in json.loads(metadata["S"]).items()}
    return StagedEntry(
        key,
        Entry(
            address["S"] if address is not None else "",
            int(size["N"]) if size is not None else 0,
            etag["S"] if etag is not None else "",
            int(mtime["N"]) if mtime is not None else 0,
            content_type["S"] if content_type is not None else DEFAULT_CONTENT_TYPE,
            user_metadata,
        ),
    )


def _careful(item: Item) -> StagedEntry:
    try:
        key = Key(item["key"]["S"])
    except (KeyError, TypeError) as e:
        raise errors.StorageError(f"DynamoDB: an item does not parse: a staged row without a key: {e}") from e
    try:
        if _value(item, "tombstone", "BOOL"):
            return StagedEntry(key=key, value=None)
        metadata = _value(item, "user_metadata", "S")
        user_metadata = json.loads(metadata) if metadata is not None else None
        content_type = _value(item, "content_type", "S")
        entry = Entry(
            physical_address=_value(item, "physical_address", "S") or "",
            size=_number(item, "size"),
            etag=_value(item, "etag", "S") or "",
            mtime=_number(item, "mtime"),
            content_type=content_type if content_type is not None else DEFAULT_CONTENT_TYPE,
            user_metadata={str(k): str(v) for k, v in (user_metadata or {}).items()},
        )
    except (_Damaged, AttributeError, TypeError, ValueError) as e:
        raise errors.StorageError(f"DynamoDB: an item does not parse: the staged row of {key!r} is damaged: {e}") from e
    return StagedEntry(key=key, value=entry)


#: What PynamoDB's ``StagedRow`` writes besides the key for a row of its key alone (a sketch item): the tombstone's
#: default.
KEY_ONLY: Item = {"tombstone": {"BOOL": False}}


def attributes(entry: Entry | None) -> Item:
    """The attributes besides the key that PynamoDB's ``StagedRow`` writes for a staged change (``None``: a
    tombstone): by name, a None left out, numbers and the user metadata as its NumberAttribute and JSONAttribute
    write them. tests/unit/test_dynamodb_wire.py compares them with the model's own."""
    if entry is None:
        return {"tombstone": {"BOOL": True}}
    written: Item = {}
    for name, kind, value in (
        ("content_type", "S", entry.content_type),
        ("etag", "S", entry.etag),
        ("mtime", "N", entry.mtime),
        ("physical_address", "S", entry.physical_address),
        ("size", "N", entry.size),
        ("tombstone", "BOOL", False),
        ("user_metadata", "S", entry.user_metadata),
    ):
        if value is not None:
            written[name] = {kind: value if kind != "N" and name != "user_metadata" else json.dumps(value)}
    return written
