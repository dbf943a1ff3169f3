"""GetObject and HeadObject (GET|HEAD /{repo}/{ref}/{path}): any ref expression, one byte range, conditions.

Reading an object whose data garbage collection removed answers NoSuchVersion. A deployed gateway returns at
most ``max_response_bytes`` of body (the Lambda payload limit): a larger read is refused up front with a message
saying how to read it instead (ranges, or a presigned URL from the lakeFS API). Every answer that carries the
object's headers is inert in a browser: a sandboxing CSP, ``nosniff`` and ``attachment`` unless the client asked
``response-content-disposition=inline`` for an inert type (http_headers.object_headers).
"""

from __future__ import annotations

import re

from chalicelib import http_headers
from chalicelib.graveler import errors

from ..context import Context, entry_headers, object_arn
from ..errors import S3Error
from ..model import Response
from .common import check_read_conditions

__all__ = ["get_object"]

_RANGE = re.compile(r"bytes=(\d*)-(\d*)")
# response-* query parameters of a (usually presigned) GET override these response headers, as in S3.
_OVERRIDES = {
    "response-content-type": "Content-Type",
    "response-content-language": "Content-Language",
    "response-expires": "Expires",
    "response-cache-control": "Cache-Control",
    "response-content-disposition": "Content-Disposition",
    "response-content-encoding": "Content-Encoding",
}


def parse_range(header: str, size: int) -> tuple[int, int] | None:
    """The inclusive range [start, end] of a ``bytes=`` Range header; None for none or one S3 would ignore.
    Raises InvalidRange (416) for a range that starts beyond the object."""
    match = _RANGE.fullmatch(header.strip().replace(" ", "")) if header else None
    if match is None or not (match[1] or match[2]):
        return None  # absent, malformed or several ranges: S3 answers with the whole object
    if match[1]:
        start = int(match[1])
        end = int(match[2]) if match[2] else max(start, size - 1)
        if end < start:
            return None  # S3 ignores an inverted range
    else:
        suffix = int(match[2])
        if suffix == 0:
            start, end = size, size  # never satisfiable
        else:
            start, end = max(0, size - suffix), size - 1
    if start >= size:
        raise S3Error(
            "InvalidRange",
            headers={"Content-Range": f"bytes */{size}"},
            details={"RangeRequested": header, "ActualObjectSize": str(size)},
        )
    return start, min(end, size - 1)


def get_object(ctx: Context) -> Response:
    request = ctx.request
    ref, _, path = ctx.key.partition("/")
    if ref and not path:
        # A ref with no path (``main``, ``main/``) names no object, and S3A's getFileStatus asks exactly that of
        # the parent of every path it writes under a branch: lakeFS answers NoSuchKey, so S3A sees a directory.
        ctx.authorize("fs:ReadObject", object_arn(ctx.bucket, path))
        raise S3Error("NoSuchKey", f"{ctx.key!r} names a ref, not an object: keys are <ref>/<path>")
    ref, path = ctx.ref_and_path()
    if request.has_param("versionId"):
        raise S3Error(
            "NotImplemented",
            "object versions are not supported: read older data through a ref "
            "(a commit id, a tag or main~1) in the key",
        )
    if request.has_param("partNumber"):
        raise S3Error("NotImplemented", "reading by part number is not supported: use a Range")
    ctx.authorize("fs:ReadObject", object_arn(ctx.bucket, path))
    if request.method == "HEAD":
        # A HEAD reads no data: ask whether GC collected it, so it cannot answer 200 for data that is gone.
        entry, collected = ctx.engine.objects.stat_readable(ctx.bucket, ref, path)
        if collected:
            raise errors.Gone("the data of this object was garbage collected")
    else:
        entry = ctx.engine.objects.stat_object(ctx.bucket, ref, path)  # reading collected data answers NoSuchVersion
    headers = entry_headers(entry)
    for param, header in _OVERRIDES.items():
        if request.has_param(param):
            value = request.param(param)
            if not http_headers.is_safe_value(value):
                # A presigned URL is handed around: its override must not write the response's headers.
                raise S3Error(
                    "InvalidArgument",
                    f"{param} must be printable ASCII without CR or LF",
                    details={"ArgumentName": param},
                )
            headers[header] = value
    # After the overrides: response-content-type=text/html must not make the bytes a page, and an asked
    # inline disposition stands only for an inert type.
    headers.update(http_headers.object_headers(headers["Content-Type"], path, headers.get("Content-Disposition")))
    if not check_read_conditions(request, entry):
        return Response(304, {"ETag": headers["ETag"], "Last-Modified": headers["Last-Modified"]})
    byte_range = parse_range(request.header("range"), entry.size)
    status, start, end = (200, 0, entry.size - 1) if byte_range is None else (206, *byte_range)
    if byte_range is not None:
        headers["Content-Range"] = f"bytes {start}-{end}/{entry.size}"
    length = end - start + 1
    headers["Content-Length"] = str(length)
    if request.method == "HEAD":
        return Response(status, headers)
    if ctx.max_response_bytes is not None and length > ctx.max_response_bytes:
        raise S3Error(
            "InvalidRequest",
            f"this read would return {length} bytes, more than the {ctx.max_response_bytes} a gateway response "
            "can carry (Lambda's payload limit): read it in ranges of at most that size (aws cli: "
            "multipart_chunksize), or get a presigned URL from the lakeFS API (stat or get with presign=true)",
        )
    # A whole read asks for no range at all: an S3 range of an empty object does not exist.
    data = (
        ctx.engine.objects.read_object(ctx.bucket, entry, start, end)
        if byte_range
        else ctx.engine.objects.read_object(ctx.bucket, entry)
    )
    return Response(status, headers, data)
