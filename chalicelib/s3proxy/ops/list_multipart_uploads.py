"""ListMultipartUploads (GET /{repo}?uploads): uploads in progress, by key then initiation, paginated."""

from __future__ import annotations

from ..context import Context, repository_arn
from ..errors import S3Error
from ..model import Response
from ..uploads import Upload, Uploads
from ..xmlio import element, iso8601
from .common import owner, xml_response

__all__ = ["list_multipart_uploads"]

MAX_UPLOADS = 1000


def list_multipart_uploads(ctx: Context) -> Response:
    request = ctx.request
    ctx.authorize("fs:ListObjects", repository_arn(ctx.bucket))
    repository = ctx.engine.repositories.get_repository(ctx.bucket)
    prefix, delimiter = request.param("prefix"), request.param("delimiter")
    key_marker, id_marker = request.param("key-marker"), request.param("upload-id-marker")
    text = request.param("max-uploads")
    if text and not text.isdigit():
        raise S3Error("InvalidArgument", "max-uploads must be a non-negative integer")
    max_uploads = min(int(text), MAX_UPLOADS) if text else MAX_UPLOADS
    in_progress = Uploads(ctx.engine.repositories.namespace_files(repository.storage_namespace))
    ordered = sorted(
        (u for u in in_progress.all() if u.key.startswith(prefix)),
        key=lambda u: (u.key, u.initiated, u.upload_id),
    )
    rows: list[Upload | str] = []
    for upload in ordered:
        if key_marker and (
            upload.key < key_marker or (upload.key == key_marker and (not id_marker or upload.upload_id <= id_marker))
        ):
            continue
        cut = upload.key.find(delimiter, len(prefix)) if delimiter else -1
        if cut >= 0:
            common = upload.key[: cut + len(delimiter)]
            if common not in rows and common > key_marker:
                rows.append(common)
            continue
        rows.append(upload)
    page, truncated = rows[:max_uploads], len(rows) > max_uploads
    last = page[-1] if page else None
    head = [
        element("Bucket", ctx.bucket),
        element("KeyMarker", key_marker),
        element("UploadIdMarker", id_marker),
        element("NextKeyMarker", last if isinstance(last, str) else last.key if last else ""),
        element("NextUploadIdMarker", last.upload_id if isinstance(last, Upload) else ""),
        element("MaxUploads", max_uploads),
        element("IsTruncated", "true" if truncated else "false"),
    ]
    if prefix:
        head.append(element("Prefix", prefix))
    if delimiter:
        head.append(element("Delimiter", delimiter))
    uploads = [
        element(
            "Upload",
            children=[
                element("Key", u.key),
                element("UploadId", u.upload_id),
                element("Initiator", children=[element("ID", u.initiator), element("DisplayName", u.initiator)]),
                owner(u.initiator),
                element("StorageClass", "STANDARD"),
                element("Initiated", iso8601(u.initiated)),
            ],
        )
        for u in page
        if isinstance(u, Upload)
    ]
    prefixes = [element("CommonPrefixes", children=[element("Prefix", p)]) for p in page if isinstance(p, str)]
    return xml_response("ListMultipartUploadsResult", [*head, *uploads, *prefixes])
