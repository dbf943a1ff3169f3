"""Small pieces the operations share: XML responses and conditional-request checks."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterable
from email.utils import parsedate_to_datetime

from chalicelib.graveler.records import Entry

from ..errors import S3Error
from ..model import Request, Response
from ..xmlio import document, element


def xml_response(tag: str, children: Iterable[ET.Element], status: int = 200) -> Response:
    return Response(status, {"Content-Type": "application/xml"}, document(tag, children))


def owner(user_id: str) -> ET.Element:
    return element("Owner", children=[element("ID", user_id), element("DisplayName", user_id)])


def _http_time(value: str) -> float | None:
    try:
        return parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError, IndexError):
        return None  # S3 ignores a date it cannot parse


def _etag_matches(condition: str, entry: Entry) -> bool:
    tags = {tag.strip().removeprefix("W/").strip('"') for tag in condition.split(",")}
    return "*" in tags or entry.etag in tags


def check_read_conditions(request: Request, entry: Entry, prefix: str = "if-") -> bool:
    """Applies If-Match / If-Unmodified-Since (412) and If-None-Match / If-Modified-Since (not modified).

    Returns False when the object is "not modified" (the caller answers 304, or for a copy source 412).
    ``prefix`` is ``x-amz-copy-source-if-`` for the copy-source variants. Precedence as RFC 9110 and S3.
    """
    match = request.header(prefix + "match")
    if match and not _etag_matches(match, entry):
        raise S3Error("PreconditionFailed", f"{prefix}match does not match the object's ETag")
    unmodified = request.header(prefix + "unmodified-since")
    if not match and unmodified:
        limit = _http_time(unmodified)
        if limit is not None and entry.mtime > limit:
            raise S3Error("PreconditionFailed", f"the object was modified after {unmodified}")
    none_match = request.header(prefix + "none-match")
    if none_match:
        return not _etag_matches(none_match, entry)
    modified = request.header(prefix + "modified-since")
    if modified:
        limit = _http_time(modified)
        if limit is not None and entry.mtime <= limit:
            return False
    return True


# Request headers asking for features Lakelet does not have: refused clearly rather than silently ignored.
_UNSUPPORTED_PREFIXES = ("x-amz-grant-", "x-amz-object-lock-", "x-amz-server-side-encryption-customer-")
_UNSUPPORTED_HEADERS = {
    "x-amz-tagging": "object tagging",
    "x-amz-website-redirect-location": "website redirects",
    "x-amz-server-side-encryption-aws-kms-key-id": "per-object KMS keys",
}
_ACCEPTED_ACLS = {"", "private", "bucket-owner-full-control"}


def reject_unsupported_headers(request: Request) -> None:
    for name in request.headers:
        if name in _UNSUPPORTED_HEADERS:
            raise S3Error("NotImplemented", f"{_UNSUPPORTED_HEADERS[name]} ({name}) is not supported")
        if name.startswith(_UNSUPPORTED_PREFIXES):
            raise S3Error("NotImplemented", f"{name} is not supported (ACLs, object lock and SSE-C are not)")
    if request.header("x-amz-acl") not in _ACCEPTED_ACLS:
        raise S3Error("NotImplemented", "ACLs are not supported: objects are private to the repository")


def if_absent(request: Request, if_match_allowed: bool = False) -> bool:
    """If-None-Match: * asks for a write that fails when the object exists; nothing else is supported. If-Match
    (a conditional overwrite) only where the caller passes it on (``if_match_allowed``: PutObject)."""
    if request.header("if-match") and not if_match_allowed:
        raise S3Error("NotImplemented", "If-Match on this write is not supported")
    condition = request.header("if-none-match")
    if condition and condition.strip() != "*":
        raise S3Error("NotImplemented", "If-None-Match on writes supports only '*'")
    return bool(condition)
