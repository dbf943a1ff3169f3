"""PutObject (PUT /{repo}/{branch}/{path}): the body becomes a staged object on the branch.

If-None-Match: * makes it fail with PreconditionFailed when the path already exists; If-Match (S3's conditional
overwrite) makes it fail with PreconditionFailed unless the branch shows the path with that ETag, atomically, or
with NoSuchKey when it shows no object there, as S3 answers. x-amz-meta-* headers are kept as the object's user
metadata, as the lakeFS API keeps x-lakefs-meta-*.
"""

from __future__ import annotations

from chalicelib.graveler import errors

from ..context import Context, object_arn, user_metadata
from ..errors import S3Error
from ..model import Response
from .common import if_absent, reject_unsupported_headers

__all__ = ["put_object"]


def put_object(ctx: Context) -> Response:
    branch, path = ctx.ref_and_path()
    reject_unsupported_headers(ctx.request)
    exclusive = if_absent(ctx.request, if_match_allowed=True)
    if_match = ctx.request.header("if-match") or None
    if exclusive and if_match is not None:
        raise S3Error("InvalidArgument", "If-Match and If-None-Match cannot be given together")
    ctx.authorize("fs:WriteObject", object_arn(ctx.bucket, path))
    try:
        with ctx.writing():
            entry = ctx.engine.objects.upload_object(
                ctx.bucket,
                branch,
                path,
                ctx.body,
                ctx.request.header("content-type"),
                user_metadata(ctx.request),
                exclusive,
                if_match=if_match,
            )
    except errors.PreconditionFailed:
        # S3 answers a conditional overwrite of a missing key with NoSuchKey (read after the refusal: only the
        # error code depends on it).
        if if_match is not None and not _exists(ctx, branch, path):
            raise S3Error("NoSuchKey", f"{path} does not exist (If-Match)") from None
        raise
    return Response(200, {"ETag": f'"{entry.etag}"'})


def _exists(ctx: Context, branch: str, path: str) -> bool:
    try:
        ctx.engine.objects.stat_object(ctx.bucket, branch, path)
    except errors.ObjectNotFound:
        return False
    return True
