"""DeleteObject (DELETE /{repo}/{branch}/{path}): hides the path on the branch; a missing path is fine (204)."""

from __future__ import annotations

from ..context import Context, object_arn
from ..errors import S3Error
from ..model import Response

__all__ = ["delete_object"]


def delete_object(ctx: Context) -> Response:
    branch, path = ctx.ref_and_path()
    if ctx.request.has_param("versionId"):
        raise S3Error("NotImplemented", "object versions are not supported")
    ctx.authorize("fs:DeleteObject", object_arn(ctx.bucket, path))
    with ctx.writing():
        ctx.engine.objects.delete_object(ctx.bucket, branch, path)
    return Response(204)
