"""The body of Lakelet's batch upload (``POST .../branches/{branch}/objects/batch``, an extension).

The body is a manifest, JSON on one line ended by a newline, then the objects' bytes back to back in the
manifest's order:

    {"objects": [{"path": "a.csv", "size_bytes": 3, "content_type": "text/csv", "user_metadata": {"k": "v"},
                  "checksum": "<MD5 of the bytes, 32 hex digits>"}, ...]}\\n
    <the 3 bytes of a.csv><the bytes of the next object>...

``path`` and ``size_bytes`` are required. The sizes must add up to exactly the bytes after the newline, and
those to at most MAX_BATCH_BYTES (what a deployed API's Lambda takes in one request). Every failure is an
Invalid (HTTP 400) naming the field, raised before anything is written.
"""

from __future__ import annotations

from chalicelib.graveler import errors
from chalicelib.graveler.writes.batch_upload import MAX_BATCH_OBJECTS, NewObject

from .multipart import DEFAULT_CONTENT_TYPE
from .params import JsonBody

MAX_MANIFEST_BYTES = 1024 * 1024
MAX_BATCH_BYTES = 4 * 1024 * 1024


def _split(raw: bytes | str | None) -> tuple[bytes, bytes]:
    body = raw.encode() if isinstance(raw, str) else (raw or b"")
    end = body.find(b"\n", 0, MAX_MANIFEST_BYTES + 1)
    if end < 0:
        if len(body) > MAX_MANIFEST_BYTES:
            raise errors.Invalid(f"the manifest (the body's first line) is longer than {MAX_MANIFEST_BYTES} bytes")
        return body, b""
    return body[:end], body[end + 1 :]


def _items(manifest: bytes) -> list[JsonBody]:
    items = JsonBody.parse(manifest).raw("objects")
    if not isinstance(items, list) or not all(isinstance(item, dict) for item in items):
        raise errors.Invalid("field objects must be a list of objects")
    if not 1 <= len(items) <= MAX_BATCH_OBJECTS:
        raise errors.Invalid(f"field objects must list 1 to {MAX_BATCH_OBJECTS} objects, not {len(items)}")
    return [JsonBody(item) for item in items]


def paths(raw: bytes | str | None) -> list[str]:
    """The manifest's paths (what the permission check needs), without reading the data."""
    return [item.required_string("path") for item in _items(_split(raw)[0])]


def parse(raw: bytes | str | None) -> list[NewObject]:
    manifest, data = _split(raw)
    items = _items(manifest)
    sizes = [_size(item) for item in items]
    if sum(sizes) != len(data):
        raise errors.Invalid(f"the manifest's sizes add up to {sum(sizes)} bytes, but {len(data)} follow it")
    if len(data) > MAX_BATCH_BYTES:
        raise errors.Invalid(f"a batch carries at most {MAX_BATCH_BYTES} bytes of data, not {len(data)}")
    objects, offset = [], 0
    for item, size in zip(items, sizes, strict=True):
        objects.append(
            NewObject(
                path=item.required_string("path"),
                data=data[offset : offset + size],
                content_type=item.string("content_type") or DEFAULT_CONTENT_TYPE,
                user_metadata=item.str_map("user_metadata"),
                checksum=item.string("checksum"),
            )
        )
        offset += size
    return objects


def _size(item: JsonBody) -> int:
    size = item.integer("size_bytes", minimum=0, maximum=MAX_BATCH_BYTES)
    if size is None:
        raise errors.Invalid("field size_bytes is required for every object")
    return size
