"""The bounds of an object's stored fields, checked once at the engine's edge by every write path.

Why here: every write (API upload, link of a presigned upload, S3 gateway PUT, copy, multipart) ends in
``engine.objects.upload_object`` or ``engine.objects.link_object``, so a rule stated once holds for all of them. What is
stored is later sent back as response headers (Content-Type, ETag, Last-Modified, x-*-meta-*), hashed into entry
identities, and written to Parquet ranges; a value that breaks any of those must never be stored, or it wedges
every later commit of the branch (a size beyond int64, a lone surrogate) or every read of the object (a date
past year 9999, a CR/LF that splits a header).

The rules follow S3's: a header value has no control characters, a metadata name is an HTTP token, user
metadata is at most 2 KiB (the UTF-8 bytes of every name and value together), an object at most 5 TiB.
"""

from __future__ import annotations

import string
from collections.abc import Mapping

from ..errors import EntityTooLarge, InvalidObjectField, MetadataTooLarge
from ..records import Entry

__all__ = [
    "validate_entry",
    "validate_headers",
    "validate_user_metadata",
]

MAX_OBJECT_SIZE = 5 * 1024**4  # S3's largest object: 5 TiB
MAX_USER_METADATA_BYTES = 2048  # S3: "the user-defined metadata is limited to 2 KB in size"
# Last-Modified must stay a calendar date every reader can format: 1970-01-01 .. 9999-12-31T23:59:59Z.
MIN_MTIME = 0
MAX_MTIME = 253_402_300_799
MAX_CONTENT_TYPE_LENGTH = 1024
MAX_ETAG_LENGTH = 1024
# lakeFS's prefix for the metadata its own clients write (pkg/api/apiutil: LakeFSMetadataPrefix).
LAKEFS_METADATA_PREFIX = "::lakefs::"
# RFC 9110 token characters: what an HTTP header name (x-amz-meta-<name>, x-lakefs-meta-<name>) may hold.
_TOKEN_CHARS = frozenset(string.ascii_letters + string.digits + "!#$%&'*+-.^_`|~")
# Printable US-ASCII and space: what Content-Type and ETag values may hold (no CR, LF, NUL or other control).
_VISIBLE_ASCII = frozenset(chr(c) for c in range(0x20, 0x7F))


def _utf8(value: str, what: str) -> None:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidObjectField(f"{what} is not valid UTF-8 (a lone surrogate)") from None


def validate_content_type(content_type: str) -> None:
    if len(content_type) > MAX_CONTENT_TYPE_LENGTH:
        raise InvalidObjectField(f"content type is longer than {MAX_CONTENT_TYPE_LENGTH} characters")
    if any(c not in _VISIBLE_ASCII for c in content_type):
        raise InvalidObjectField("content type must be printable US-ASCII (no control characters such as CR or LF)")


def validate_user_metadata(metadata: Mapping[str, str]) -> None:
    """S3's rules for x-amz-meta-*: names are header tokens, values carry no control character, 2 KiB in all."""
    total = 0
    for name, value in metadata.items():
        if not isinstance(name, str) or not isinstance(value, str):
            raise InvalidObjectField("user metadata names and values must be strings")
        _utf8(name, "a user metadata name")
        _utf8(value, f"user metadata {name!r}")
        # lakeFS's clients keep their own fields under its reserved prefix (lakectl's upload sends
        # "::lakefs::client-mtime"); such a field is stored, and left out of headers as no header can name it.
        token = name.removeprefix(LAKEFS_METADATA_PREFIX)
        if not token or any(c not in _TOKEN_CHARS for c in token):
            raise InvalidObjectField(
                f"user metadata name {name!r} must be a non-empty HTTP token (letters, digits, !#$%&'*+-.^_`|~)"
            )
        # HTAB is the one control character an HTTP field value may hold.
        if any((ord(c) < 0x20 and c != "\t") or 0x7F <= ord(c) <= 0x9F for c in value):
            raise InvalidObjectField(f"user metadata {name!r} holds a control character (such as CR or LF)")
        total += len(name.encode()) + len(value.encode())
    if total > MAX_USER_METADATA_BYTES:
        raise MetadataTooLarge(
            f"user metadata is {total} bytes: at most {MAX_USER_METADATA_BYTES} (names and values, UTF-8) as in S3"
        )


def validate_checksum(etag: str) -> None:
    if len(etag) > MAX_ETAG_LENGTH:
        raise InvalidObjectField(f"checksum is longer than {MAX_ETAG_LENGTH} characters")
    if any(c not in _VISIBLE_ASCII or c == '"' for c in etag):
        raise InvalidObjectField("checksum must be printable US-ASCII without quotes or control characters")


def validate_size(size: int) -> None:
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        raise InvalidObjectField(f"size must be a non-negative integer, got {size!r}")
    if size > MAX_OBJECT_SIZE:
        raise EntityTooLarge(f"size {size} is over {MAX_OBJECT_SIZE} bytes (5 TiB), the largest S3 object")


def validate_mtime(mtime: int) -> None:
    if isinstance(mtime, bool) or not isinstance(mtime, int) or not MIN_MTIME <= mtime <= MAX_MTIME:
        raise InvalidObjectField(f"mtime must be unix seconds from {MIN_MTIME} to {MAX_MTIME} (years 1970-9999)")


def validate_headers(content_type: str, user_metadata: Mapping[str, str]) -> None:
    """What a write takes from the client before any byte is stored (upload, multipart create)."""
    validate_content_type(content_type)
    validate_user_metadata(user_metadata)


def validate_entry(entry: Entry) -> None:
    """Every stored field of an entry about to be staged. Raises InvalidObjectField (HTTP 400)."""
    validate_headers(entry.content_type, entry.user_metadata)
    validate_checksum(entry.etag)
    validate_size(entry.size)
    validate_mtime(entry.mtime)
