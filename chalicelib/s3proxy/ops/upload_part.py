"""UploadPart (PUT /{repo}/{branch}/{path}?partNumber=N&uploadId=U): any size, see uploads.py for why."""

from __future__ import annotations

from ..context import Context, object_arn
from ..errors import S3Error
from ..model import Response
from ..uploads import Upload, Uploads

__all__ = ["upload_part"]


def part_number(ctx: Context) -> int:
    text = ctx.request.param("partNumber")
    if not text.isdigit():
        raise S3Error("InvalidArgument", "partNumber must be an integer between 1 and 10000")
    return int(text)


def uploads_and_upload(ctx: Context) -> tuple[Uploads, Upload]:
    branch, path = ctx.ref_and_path()
    ctx.authorize("fs:WriteObject", object_arn(ctx.bucket, path))
    repository = ctx.engine.repositories.get_repository(ctx.bucket)
    uploads = Uploads(ctx.engine.repositories.namespace_files(repository.storage_namespace))
    return uploads, uploads.get(ctx.request.param("uploadId"), branch, path)


def upload_part(ctx: Context) -> Response:
    number = part_number(ctx)
    uploads, upload = uploads_and_upload(ctx)
    part = uploads.put_part(upload, number, ctx.body)
    return Response(200, {"ETag": f'"{part.etag}"'})
