"""ListParts (GET /{repo}/{branch}/{path}?uploadId=U): the parts uploaded so far, by number, paginated."""

from __future__ import annotations

from ..context import Context
from ..errors import S3Error
from ..model import Response
from ..xmlio import element, iso8601
from .common import owner, xml_response
from .upload_part import uploads_and_upload

__all__ = ["list_parts"]

MAX_PARTS = 1000


def _int_param(ctx: Context, name: str, default: int) -> int:
    text = ctx.request.param(name)
    if not text:
        return default
    if not text.isdigit():
        raise S3Error("InvalidArgument", f"{name} must be a non-negative integer")
    return int(text)


def list_parts(ctx: Context) -> Response:
    uploads, upload = uploads_and_upload(ctx)
    marker = _int_param(ctx, "part-number-marker", 0)
    max_parts = min(_int_param(ctx, "max-parts", MAX_PARTS), MAX_PARTS)
    # The newest version of each number: a small part shadows a large one of the same number (see uploads.py).
    parts = [versions[0] for number, versions in uploads.parts(upload).items() if number > marker]
    page, truncated = parts[:max_parts], len(parts) > max_parts
    head = [
        element("Bucket", ctx.bucket),
        element("Key", ctx.key),
        element("UploadId", upload.upload_id),
        element("PartNumberMarker", marker),
        element("NextPartNumberMarker", page[-1].number if page else marker),
        element("MaxParts", max_parts),
        element("IsTruncated", "true" if truncated else "false"),
        element("Initiator", children=[element("ID", upload.initiator), element("DisplayName", upload.initiator)]),
        owner(upload.initiator),
        element("StorageClass", "STANDARD"),
    ]
    rows = [
        element(
            "Part",
            children=[
                element("PartNumber", p.number),
                element("LastModified", iso8601(upload.initiated)),
                element("ETag", f'"{p.etag}"'),
                element("Size", p.size),
            ],
        )
        for p in page
    ]
    return xml_response("ListPartsResult", [*head, *rows])
