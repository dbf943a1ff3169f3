"""UploadPartCopy (UploadPart with x-amz-copy-source[-range]): a part copied from any readable object.

A range of 5 MiB or more is copied inside the store; a smaller one is read and kept as a small part.
"""

from __future__ import annotations

import re

from chalicelib.graveler import errors

from ..context import Context, object_arn, parse_copy_source
from ..errors import S3Error
from ..model import Response
from ..xmlio import element, iso8601
from .common import check_read_conditions, xml_response
from .upload_part import part_number, uploads_and_upload

__all__ = ["upload_part_copy"]

_COPY_RANGE = re.compile(r"bytes=(\d+)-(\d+)")


def upload_part_copy(ctx: Context) -> Response:
    number = part_number(ctx)
    uploads, upload = uploads_and_upload(ctx)
    src_repo, src_ref, src_path = parse_copy_source(ctx.request.header("x-amz-copy-source"))
    ctx.authorize("fs:ReadObject", object_arn(src_repo, src_path))
    source = ctx.engine.objects.stat_object(src_repo, src_ref, src_path)
    if not check_read_conditions(ctx.request, source, "x-amz-copy-source-if-"):
        raise S3Error("PreconditionFailed", "the copy source did not meet the x-amz-copy-source-if-* conditions")
    range_header = ctx.request.header("x-amz-copy-source-range")
    if range_header:
        match = _COPY_RANGE.fullmatch(range_header.strip())
        if match is None or int(match[2]) < int(match[1]):
            raise S3Error(
                "InvalidArgument",
                "The x-amz-copy-source-range value must be of the form "
                "bytes=first-last where first and last are the zero-based offsets",
            )
        start, end = int(match[1]), int(match[2])
        if end >= source.size:
            raise S3Error("InvalidRange", f"the range ends beyond the {source.size} bytes of the source")
    else:
        start, end = 0, source.size - 1
    if end < start:  # an empty source
        part = uploads.put_part(upload, number, b"")
    else:
        try:
            part = uploads.copy_part(upload, number, source.physical_address, start, end)
        except errors.ObjectNotFound as e:
            raise errors.Gone(f"the data of {src_repo}/{src_ref}/{src_path} was garbage collected") from e
    return xml_response(
        "CopyPartResult", [element("LastModified", iso8601(ctx.clock())), element("ETag", f'"{part.etag}"')]
    )
