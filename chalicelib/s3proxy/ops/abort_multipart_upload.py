"""AbortMultipartUpload (DELETE /{repo}/{branch}/{path}?uploadId=U): drops the upload and every part."""

from __future__ import annotations

from ..context import Context
from ..model import Response
from .upload_part import uploads_and_upload

__all__ = ["abort_multipart_upload"]


def abort_multipart_upload(ctx: Context) -> Response:
    uploads, upload = uploads_and_upload(ctx)
    uploads.discard(upload, abort=True)
    return Response(204)
