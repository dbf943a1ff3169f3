"""CompleteMultipartUpload (POST /{repo}/{branch}/{path}?uploadId=U): the object is assembled at the upload's
physical address and staged on the branch (graveler's link_object), like any upload.

The parts named must be listed in ascending order with the ETags UploadPart returned. The object's ETag is
S3's for a multipart upload (md5 of the parts' md5s, ``-<count>``), computed from the client's parts.
"""

from __future__ import annotations

from itertools import pairwise

from chalicelib.graveler import errors
from chalicelib.graveler.records import Entry

from ..context import Context
from ..errors import S3Error
from ..model import Response
from ..uploads import Part, check_part_number, multipart_etag
from ..xmlio import MalformedXml, child_text, children, element, parse
from .common import if_absent, xml_response
from .upload_part import uploads_and_upload

__all__ = ["complete_multipart_upload"]


def _requested_parts(body: bytes) -> list[tuple[int, str]]:
    try:
        root = parse(body, "CompleteMultipartUpload")
    except MalformedXml as e:
        raise S3Error("MalformedXML", str(e)) from e
    requested: list[tuple[int, str]] = []
    for node in children(root, "Part"):
        number_text = (child_text(node, "PartNumber") or "").strip()
        etag = (child_text(node, "ETag") or "").strip().strip('"').lower()
        if not number_text.isdigit() or not etag:
            raise S3Error("MalformedXML", "every Part needs a PartNumber and an ETag")
        check_part_number(int(number_text))
        requested.append((int(number_text), etag))
    if not requested:
        raise S3Error("MalformedXML", "the part list is empty")
    if any(b[0] <= a[0] for a, b in pairwise(requested)):
        raise S3Error("InvalidPartOrder")
    return requested


def complete_multipart_upload(ctx: Context) -> Response:
    requested = _requested_parts(ctx.body)
    exclusive = if_absent(ctx.request)
    uploads, upload = uploads_and_upload(ctx)
    with ctx.writing():
        ctx.engine.branches.get_branch(ctx.bucket, upload.branch)
    if exclusive:
        try:
            ctx.engine.objects.stat_object(ctx.bucket, upload.branch, upload.path)
            raise S3Error("PreconditionFailed", f"{ctx.key} already exists")
        except errors.ObjectNotFound:
            pass
    stored = uploads.parts(upload)
    chosen: list[Part] = []
    for number, etag in requested:
        part = next((p for p in stored.get(number, []) if p.etag.lower() == etag), None)
        if part is None:
            raise S3Error("InvalidPart", f"part {number} with ETag {etag} was not uploaded")
        chosen.append(part)
    size = uploads.assemble(upload, chosen)
    entry = Entry(
        physical_address=upload.address,
        size=size,
        etag=multipart_etag([part.etag for part in chosen]),
        mtime=int(ctx.clock()),
        content_type=upload.content_type,
        user_metadata=dict(upload.user_metadata),
    )
    try:
        with ctx.writing():
            ctx.engine.objects.link_object(ctx.bucket, upload.branch, upload.path, entry, exclusive)
    finally:
        # Once assembled the store's upload is spent, linked or not: an object left unlinked (the branch went
        # away meanwhile, or the path appeared under If-None-Match) is garbage that GC collects.
        uploads.discard(upload, abort=False)
    return xml_response(
        "CompleteMultipartUploadResult",
        [
            element("Location", f"/{ctx.bucket}/{ctx.key}"),
            element("Bucket", ctx.bucket),
            element("Key", ctx.key),
            element("ETag", f'"{entry.etag}"'),
        ],
    )
