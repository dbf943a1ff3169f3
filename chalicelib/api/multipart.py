"""The one multipart/form-data shape the upload route takes: a form whose field ``content`` is the object.

Written by hand rather than with the email package: object bytes must come out exactly as sent (CR, LF and
NUL included), and only the part headers need parsing.
"""

from __future__ import annotations

import re

from chalicelib.graveler import errors

_BOUNDARY = re.compile(r';\s*boundary\s*=\s*("([^"]+)"|[^;\s]+)', re.IGNORECASE)
_NAME = re.compile(r';\s*name\s*=\s*("([^"]*)"|[^;\s]+)', re.IGNORECASE)
DEFAULT_CONTENT_TYPE = "application/octet-stream"


def is_form(content_type: str) -> bool:
    return content_type.strip().lower().startswith("multipart/form-data")


def _boundary(content_type: str) -> bytes:
    match = _BOUNDARY.search(content_type)
    if match is None:
        raise errors.Invalid("multipart/form-data without a boundary")
    return (match[2] or match[1]).encode("latin-1")


def _headers(block: bytes) -> dict[str, str]:
    headers: dict[str, str] = {}
    for line in block.decode("latin-1").split("\r\n"):
        name, colon, value = line.partition(":")
        if colon:
            headers[name.strip().lower()] = value.strip()
    return headers


def form_field(content_type: str, body: bytes, field: str = "content") -> tuple[bytes, str]:
    """(bytes, content type) of the named part. Raises Invalid for a malformed form or a missing field."""
    delimiter = b"--" + _boundary(content_type)
    chunks = body.split(delimiter)
    # chunks[0] is the preamble; the close delimiter ("--B--") leaves a last chunk starting with "--". Without it
    # the body was cut short, and the object would be too.
    if len(chunks) < 3 or not chunks[-1].startswith(b"--"):
        raise errors.Invalid("malformed multipart/form-data body: no closing boundary")
    for chunk in chunks[1:-1]:
        if not chunk.startswith(b"\r\n") or not chunk.endswith(b"\r\n"):
            raise errors.Invalid("malformed multipart/form-data body")
        head, sep, data = chunk[2:-2].partition(b"\r\n\r\n")
        if not sep:
            continue  # a part without headers has no name, so it is not the field asked for
        headers = _headers(head)
        name = _NAME.search(headers.get("content-disposition", ""))
        if name is not None and (name[2] if name[2] is not None else name[1]) == field:
            return data, headers.get("content-type") or DEFAULT_CONTENT_TYPE
    raise errors.Invalid(f"multipart/form-data body has no field {field!r}")
