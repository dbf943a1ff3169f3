"""The one table from graveler errors to HTTP statuses, and the lakeFS error shape ``{"message": "..."}``.

Lookup walks the error's class hierarchy, so a leaf (BranchNotFound) takes its family's status (NotFound)
unless the table names the leaf itself.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

from chalice import Response

from chalicelib.graveler import errors

__all__ = [
    "INTERNAL_ERROR_MESSAGE",
    "RETRY_AFTER_SECONDS",
    "STATUS",
    "UNAUTHORIZED_HEADERS",
    "UnsatisfiableRange",
    "error_response",
    "graveler_error_response",
    "headers_for",
    "message_for",
    "status_for",
]

# Keys are GravelerError classes; typed as plain ``type`` so a lookup by any class of an error's MRO type-checks.
STATUS: Mapping[type, int] = {
    errors.Invalid: 400,
    errors.DirtyBranch: 400,
    errors.NoChanges: 400,
    errors.Unauthorized: 401,
    errors.Forbidden: 403,
    errors.NotFound: 404,
    errors.AlreadyExists: 409,
    errors.Conflict: 409,
    errors.Gone: 410,
    errors.PreconditionFailed: 412,
    errors.RangeNotSatisfiable: 416,
    errors.TooManyTries: 429,
    errors.Unsupported: 501,
    errors.StorageError: 503,
}

INTERNAL_ERROR_MESSAGE = "internal server error"
UNAUTHORIZED_HEADERS = {"WWW-Authenticate": 'Basic realm="lakelet", charset="UTF-8"'}
# What a 5xx says to the caller: the details (table names, buckets, driver messages) stay in the log.
_GENERIC_MESSAGES = {
    # lakeFS's body for the operations its OSS edition does not serve: http.StatusText(501).
    501: "Not Implemented",
    503: "storage temporarily unavailable, retry later",
}
# A 503 (a store throttled or unreachable) says when to come back; invalid requests are 400s, never 503s.
RETRY_AFTER_SECONDS = 1


class UnsatisfiableRange(errors.RangeNotSatisfiable):
    """A Range header outside the object: the 416 must say the object's size (``Content-Range: bytes */N``)."""

    def __init__(self, message: str, size: int) -> None:
        super().__init__(message)
        self.size = size


def status_for(error: errors.GravelerError) -> int:
    return next((STATUS[cls] for cls in type(error).__mro__ if cls in STATUS), 500)


def message_for(error: errors.GravelerError) -> str:
    """lakeFS's words for the error, then the error's own message after a colon ("branch already exists: dev");
    clients match on lakeFS's words. An error lakeFS has no words for says its own message, and a bare identifier
    its kind in words first."""
    status = status_for(error)
    if status >= 500:
        return _GENERIC_MESSAGES.get(status, INTERNAL_ERROR_MESSAGE)
    detail = str(error).strip()
    words = error.lakefs_message
    if words:
        return detail if detail.startswith(words) else f"{words}: {detail}" if detail else words
    kind = re.sub(r"(?<!^)(?=[A-Z])", " ", type(error).__name__).lower()
    if not detail:
        return kind
    return detail if " " in detail else f"{kind}: {detail}"


def error_response(
    status: int, message: str, headers: Mapping[str, str] | None = None, with_body: bool = True
) -> Response:
    """A lakeFS error. ``with_body`` False for HEAD requests, whose responses carry headers only."""
    all_headers: dict[str, str | list[str]] = {"Content-Type": "application/json", **(headers or {})}
    body = json.dumps({"message": message}) if with_body else ""
    return Response(body=body, status_code=status, headers=all_headers)


def headers_for(error: errors.GravelerError) -> dict[str, str]:
    if isinstance(error, UnsatisfiableRange):
        return {"Content-Range": f"bytes */{error.size}"}
    if isinstance(error, errors.Unauthorized):
        return dict(UNAUTHORIZED_HEADERS)
    if status_for(error) == 503:
        return {"Retry-After": str(RETRY_AFTER_SECONDS)}
    return {}


def graveler_error_response(error: errors.GravelerError, with_body: bool = True) -> Response:
    return error_response(status_for(error), message_for(error), headers_for(error), with_body)
