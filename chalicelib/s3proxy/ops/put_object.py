"""PutObject (PUT /{repo}/{branch}/{path}): the body becomes a staged object on the branch.

If-None-Match: * makes it fail with PreconditionFailed when the path already exists; x-amz-meta-* headers are
kept as the object's user metadata, as the lakeFS API keeps x-lakefs-meta-*.
"""

from __future__ import annotations

from ..context import Context, object_arn, user_metadata
from ..model import Response
from .common import if_absent, reject_unsupported_headers

__all__ = ["put_object"]


def put_object(ctx: Context) -> Response:
    branch, path = ctx.ref_and_path()
    reject_unsupported_headers(ctx.request)
    exclusive = if_absent(ctx.request)
    ctx.authorize("fs:WriteObject", object_arn(ctx.bucket, path))
    with ctx.writing():
        entry = ctx.graveler.upload_object(
            ctx.bucket,
            branch,
            path,
            ctx.body,
            ctx.request.header("content-type"),
            user_metadata(ctx.request),
            exclusive,
        )
    return Response(200, {"ETag": f'"{entry.etag}"'})
