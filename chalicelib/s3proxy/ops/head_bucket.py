"""HeadBucket (HEAD /{repo}): 200 when the repository exists, NoSuchBucket otherwise."""

from __future__ import annotations

from ..context import Context, repository_arn
from ..model import Response

__all__ = ["head_bucket"]


def head_bucket(ctx: Context) -> Response:
    ctx.authorize("fs:ReadRepository", repository_arn(ctx.bucket))
    ctx.engine.repositories.get_repository(ctx.bucket)
    # The region the client signed for: telling it so keeps SDKs from "redirecting" to another region.
    return Response(200, {"x-amz-bucket-region": ctx.identity.region})
