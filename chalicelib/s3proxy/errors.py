"""The one table of S3 error codes the gateway answers with, and how an error becomes an S3 XML response.

Operations raise :class:`S3Error` with a code from :data:`CODES`, or let a graveler error through; the gateway
turns either into ``<Error><Code>...`` with the code's status, in :func:`error_response` only. Graveler errors
are mapped by :data:`GRAVELER_CODES`, walking the error's class hierarchy so a leaf takes its family's code.
"""

from __future__ import annotations

from collections.abc import Mapping

from chalicelib.graveler import errors

from .model import Response
from .xmlio import element, render

__all__ = ["CODES", "GRAVELER_CODES", "S3Error", "code_for", "error_response", "from_graveler"]

# code -> (HTTP status, default message). Names and statuses are S3's, so every S3 client knows them.
CODES: Mapping[str, tuple[int, str]] = {
    # authentication
    "AccessDenied": (403, "Access Denied"),
    "InvalidAccessKeyId": (403, "The AWS access key Id you provided does not exist in our records."),
    "SignatureDoesNotMatch": (
        403,
        (
            "The request signature we calculated does not match the signature you provided. "
            "Check your key and signing method."
        ),
    ),
    "RequestTimeTooSkewed": (403, "The difference between the request time and the current time is too large."),
    "RequestExpired": (403, "Request has expired"),
    "AuthorizationHeaderMalformed": (400, "The authorization header is malformed."),
    "AuthorizationQueryParametersError": (400, "The presigned URL's authorization parameters are malformed."),
    "MissingSecurityHeader": (400, "Your request is missing a required header."),
    # request shape
    "InvalidArgument": (400, "Invalid Argument"),
    "InvalidRequest": (400, "Invalid Request"),
    "InvalidBucketName": (400, "The specified bucket is not valid."),
    "KeyTooLongError": (400, "Your key is too long."),
    "MalformedXML": (400, "The XML you provided was not well-formed or did not validate against our schema."),
    "MissingContentLength": (411, "You must provide the Content-Length HTTP header."),
    "IncompleteBody": (400, "You did not provide the number of bytes specified by the Content-Length HTTP header."),
    "XAmzContentSHA256Mismatch": (400, "The provided 'x-amz-content-sha256' header does not match what was computed."),
    "BadDigest": (400, "The Content-MD5 or checksum you specified did not match what we received."),
    "InvalidDigest": (400, "The Content-MD5 or checksum you specified is not valid."),
    "EntityTooLarge": (400, "Your proposed upload exceeds the maximum allowed size."),
    "MetadataTooLarge": (400, "Your metadata headers exceed the maximum allowed metadata size."),
    "EntityTooSmall": (400, "Your proposed upload is smaller than the minimum allowed object size."),
    "InvalidPart": (400, "One or more of the specified parts could not be found."),
    "InvalidPartOrder": (400, "The list of parts was not in ascending order."),
    "MethodNotAllowed": (405, "The specified method is not allowed against this resource."),
    # state
    "NoSuchBucket": (404, "The specified bucket does not exist"),
    "NoSuchKey": (404, "The specified key does not exist."),
    "NoSuchUpload": (404, "The specified multipart upload does not exist."),
    "NoSuchVersion": (404, "The data of this object is no longer stored (garbage collected)."),
    "NoSuchBranch": (404, "Writes need an existing branch: the ref in the key is not one."),
    "PreconditionFailed": (412, "At least one of the preconditions you specified did not hold."),
    "InvalidRange": (416, "The requested range is not satisfiable"),
    "OperationAborted": (409, "A conflicting operation is in progress against this resource. Please try again."),
    "NotImplemented": (501, "A header or operation you provided implies functionality that is not implemented."),
    # service
    "InternalError": (500, "We encountered an internal error. Please try again."),
    "ServiceUnavailable": (503, "Please reduce your request rate."),
    "SlowDown": (503, "Please reduce your request rate."),
}

# Keys are GravelerError classes (typed as plain ``type`` so a lookup by any class of an error's MRO type-checks).
GRAVELER_CODES: Mapping[type, str] = {
    errors.RepositoryNotFound: "NoSuchBucket",
    errors.NotFound: "NoSuchKey",
    errors.Gone: "NoSuchVersion",
    errors.PreconditionFailed: "PreconditionFailed",
    errors.RangeNotSatisfiable: "InvalidRange",
    errors.Forbidden: "AccessDenied",
    errors.Unauthorized: "AccessDenied",
    errors.Invalid: "InvalidArgument",
    errors.MetadataTooLarge: "MetadataTooLarge",
    errors.EntityTooLarge: "EntityTooLarge",
    errors.NoChanges: "InvalidRequest",
    errors.DirtyBranch: "InvalidRequest",
    errors.AlreadyExists: "OperationAborted",
    errors.Conflict: "OperationAborted",
    errors.TooManyTries: "SlowDown",
    errors.StorageError: "ServiceUnavailable",
    errors.Unsupported: "NotImplemented",
}


class S3Error(Exception):
    """An S3 error answer: ``code`` from CODES, an optional message, extra headers and extra XML elements."""

    def __init__(
        self,
        code: str,
        message: str = "",
        *,
        headers: Mapping[str, str] | None = None,
        details: Mapping[str, str] | None = None,
    ) -> None:
        if code not in CODES:
            raise ValueError(f"unknown S3 error code {code!r}")  # a typo here must fail loudly in tests
        super().__init__(message or CODES[code][1])
        self.code = code
        self.status = CODES[code][0]
        self.message = message or CODES[code][1]
        self.headers = dict(headers or {})
        self.details = dict(details or {})


def code_for(error: errors.GravelerError) -> str:
    return next((GRAVELER_CODES[cls] for cls in type(error).__mro__ if cls in GRAVELER_CODES), "InternalError")


def from_graveler(error: errors.GravelerError) -> S3Error:
    code = code_for(error)
    status = CODES[code][0]
    # A 5xx says nothing about tables, buckets or drivers; the details stay in the log.
    message = "" if status >= 500 else str(error)
    headers: dict[str, str] = {}
    size = getattr(error, "size", None)
    if isinstance(error, errors.RangeNotSatisfiable) and isinstance(size, int):
        headers["Content-Range"] = f"bytes */{size}"
    return S3Error(code, message, headers=headers)


def error_response(error: S3Error, resource: str, request_id: str) -> Response:
    """The S3 XML error document for ``error``, with the request id S3 clients log."""
    children = [
        element("Code", error.code),
        element("Message", error.message),
        element("Resource", resource),
        element("RequestId", request_id),
    ]
    children.extend(element(name, value) for name, value in error.details.items())
    body = render(element("Error", children=children))
    headers = {"Content-Type": "application/xml", "x-amz-request-id": request_id, **error.headers}
    return Response(error.status, headers, body)
