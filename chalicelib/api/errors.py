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
from chalicelib.iceberg import errors as iceberg_errors

__all__ = [
    "INTERNAL_ERROR_MESSAGE",
    "RETRY_AFTER_SECONDS",
    "STATUS",
    "UNAUTHORIZED_HEADERS",
    "UnsatisfiableRange",
    "error_response",
    "graveler_error_response",
    "headers_for",
    "iceberg_error_response",
    "iceberg_shape",
    "iceberg_status_for",
    "message_for",
    "oauth_error_response",
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
    errors.DataMissing: 500,  # permanent: no Retry-After (errors.DataMissing)
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


# The Iceberg REST catalog (/iceberg/api): its statuses differ from the lakeFS API's only where the spec says so
# (406 for an unsupported operation), and its body names the spec's exception type.
_ICEBERG_STATUS: Mapping[type, int] = {errors.Unsupported: 406}
_ICEBERG_TYPES: Mapping[type, str] = {
    iceberg_errors.NoSuchNamespace: "NoSuchNamespaceException",
    iceberg_errors.NoSuchTable: "NoSuchTableException",
    iceberg_errors.NamespaceNotEmpty: "NamespaceNotEmptyException",
    iceberg_errors.CommitFailed: "CommitFailedException",
    errors.AlreadyExists: "AlreadyExistsException",
    errors.Conflict: "CommitFailedException",
    errors.Invalid: "BadRequestException",
    errors.NoChanges: "BadRequestException",
    errors.DirtyBranch: "BadRequestException",
    errors.Unauthorized: "NotAuthorizedException",
    errors.Forbidden: "ForbiddenException",
    errors.NotFound: "NotFoundException",
    errors.PreconditionFailed: "CommitFailedException",
    errors.TooManyTries: "CommitStateUnknownException",
    errors.Unsupported: "UnsupportedOperationException",
    errors.StorageError: "ServiceUnavailableException",
}


def iceberg_status_for(error: errors.GravelerError) -> int:
    return next((_ICEBERG_STATUS[c] for c in type(error).__mro__ if c in _ICEBERG_STATUS), status_for(error))


def _iceberg_body(status: int, message: str, kind: str) -> str:
    return json.dumps({"error": {"message": message, "type": kind, "code": status}})


def iceberg_error_response(error: errors.GravelerError | None, with_body: bool = True) -> Response:
    """The spec's IcebergErrorResponse; ``error`` None for a failure with no graveler error (a 500)."""
    if error is None:
        status, message, kind = 500, INTERNAL_ERROR_MESSAGE, "InternalServerError"
    else:
        status = iceberg_status_for(error)
        kind = next((_ICEBERG_TYPES[c] for c in type(error).__mro__ if c in _ICEBERG_TYPES), "InternalServerError")
        message = str(error) if status < 500 else _GENERIC_MESSAGES.get(status, INTERNAL_ERROR_MESSAGE)
    headers: dict[str, str | list[str]] = {"Content-Type": "application/json"}
    if status == 503:
        headers["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return Response(body=_iceberg_body(status, message, kind) if with_body else "", status_code=status, headers=headers)


def iceberg_shape(status: int, message: str) -> dict[str, object]:
    """Chalice's own errors (405, 415) on a catalog path, in the spec's shape."""
    return {"error": {"message": message, "type": "BadRequestException", "code": status}}


def oauth_error_response(error: errors.GravelerError) -> Response:
    """The token endpoint's errors in OAuth 2's shape (RFC 6749, 5.2): 401 invalid_client for bad credentials,
    400 unsupported_grant_type or invalid_request otherwise."""
    if isinstance(error, errors.Unauthorized):
        status, code = 401, "invalid_client"
    elif isinstance(error, errors.Unsupported):
        status, code = 400, "unsupported_grant_type"
    else:
        status, code = 400, "invalid_request"
    body = json.dumps({"error": code, "error_description": str(error) or code})
    return Response(body=body, status_code=status, headers={"Content-Type": "application/json"})
