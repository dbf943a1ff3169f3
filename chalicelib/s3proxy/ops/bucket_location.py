"""GetBucketLocation (GET /{repo}?location): the region the client signs for (empty means us-east-1, as S3)."""

from __future__ import annotations

from ..context import Context, repository_arn
from ..model import Response
from ..xmlio import S3_NAMESPACE, element, render

__all__ = ["bucket_location"]


def bucket_location(ctx: Context) -> Response:
    ctx.authorize("fs:ReadRepository", repository_arn(ctx.bucket))
    ctx.engine.repositories.get_repository(ctx.bucket)
    region = "" if ctx.identity.region == "us-east-1" else ctx.identity.region
    root = element("LocationConstraint", region)
    root.set("xmlns", S3_NAMESPACE)
    return Response(200, {"Content-Type": "application/xml"}, render(root))
