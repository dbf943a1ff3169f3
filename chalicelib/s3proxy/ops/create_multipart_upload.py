"""CreateMultipartUpload (POST /{repo}/{branch}/{path}?uploads): a fresh physical address and an upload id."""

from __future__ import annotations

import uuid

from chalicelib.graveler.writes.object_fields import validate_headers

from ..context import Context, object_arn, user_metadata
from ..model import Response
from ..uploads import Upload, Uploads
from ..xmlio import element
from .common import reject_unsupported_headers, xml_response

__all__ = ["create_multipart_upload"]


def create_multipart_upload(ctx: Context) -> Response:
    branch, path = ctx.ref_and_path()
    reject_unsupported_headers(ctx.request)
    ctx.authorize("fs:WriteObject", object_arn(ctx.bucket, path))
    content_type = ctx.request.header("content-type") or "application/octet-stream"
    metadata = user_metadata(ctx.request)
    # Checked now, not only when CompleteMultipartUpload links the object: a client should not upload gigabytes
    # of parts for an object whose metadata can never be stored.
    validate_headers(content_type, metadata)
    with ctx.writing():
        ctx.engine.branches.get_branch(ctx.bucket, branch)
    repository = ctx.engine.repositories.get_repository(ctx.bucket)
    files = ctx.engine.repositories.namespace_files(repository.storage_namespace)
    address = ctx.engine.objects.new_physical_address(ctx.bucket)
    upload = Upload(
        upload_id=uuid.uuid4().hex,
        repository=ctx.bucket,
        branch=branch,
        path=path,
        address=address,
        store_upload_id=files.create_multipart_upload(address),
        content_type=content_type,
        user_metadata=metadata,
        initiated=int(ctx.clock()),
        initiator=ctx.user_id,
    )
    Uploads(files).create(upload)
    return xml_response(
        "InitiateMultipartUploadResult",
        [element("Bucket", ctx.bucket), element("Key", ctx.key), element("UploadId", upload.upload_id)],
    )
