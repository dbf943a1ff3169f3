"""CopyObject (PUT /{repo}/{branch}/{path} with x-amz-copy-source): within a repository, across branches or
across repositories.

Within a repository the copy is shallow: the new path points at the same physical object and no byte moves.
Across repositories it is not, on purpose: a shared object would belong to two storage namespaces, and garbage
collection of the source repository could delete data the destination still references. So the object is copied
inside S3 into the destination's namespace (bytes never pass through the gateway) and linked there.
"""

from __future__ import annotations

from chalicelib.graveler import errors
from chalicelib.graveler.records import Entry

from ..context import Context, object_arn, parse_copy_source, user_metadata
from ..errors import S3Error
from ..model import Response
from ..xmlio import element, iso8601
from .common import (
    check_read_conditions,
    if_absent,
    reject_unsupported_headers,
    xml_response,
)

__all__ = ["copy_object"]


def copy_object(ctx: Context) -> Response:
    request = ctx.request
    branch, path = ctx.ref_and_path()
    reject_unsupported_headers(request)
    src_repo, src_ref, src_path = parse_copy_source(request.header("x-amz-copy-source"))
    directive = request.header("x-amz-metadata-directive", "COPY").upper()
    if directive not in ("COPY", "REPLACE"):
        raise S3Error("InvalidArgument", "x-amz-metadata-directive must be COPY or REPLACE")
    exclusive = if_absent(request)
    ctx.authorize("fs:ReadObject", object_arn(src_repo, src_path))
    ctx.authorize("fs:WriteObject", object_arn(ctx.bucket, path))
    source = ctx.engine.objects.stat_object(src_repo, src_ref, src_path)
    if not check_read_conditions(request, source, "x-amz-copy-source-if-"):
        raise S3Error(
            "PreconditionFailed",
            "the copy source matches x-amz-copy-source-if-none-match or was "
            "not modified since x-amz-copy-source-if-modified-since",
        )
    if directive == "COPY" and (src_repo, src_ref, src_path) == (ctx.bucket, branch, path):
        raise S3Error(
            "InvalidRequest",
            "This copy request is illegal because it is trying to copy an object to "
            "itself without changing the object's metadata.",
        )
    replace = directive == "REPLACE"
    content_type = (request.header("content-type") or "application/octet-stream") if replace else source.content_type
    metadata = user_metadata(request) if replace else dict(source.user_metadata)
    repository = ctx.engine.repositories.get_repository(ctx.bucket)
    with ctx.writing():
        if src_repo == ctx.bucket and source.physical_address.startswith(repository.storage_namespace + "/"):
            if replace:
                entry = Entry(
                    source.physical_address, source.size, source.etag, int(ctx.clock()), content_type, metadata
                )
                entry = ctx.engine.objects.link_object(ctx.bucket, branch, path, entry, exclusive)
            else:
                entry = ctx.engine.objects.copy_object(ctx.bucket, src_ref, src_path, branch, path, exclusive)
        else:
            ctx.engine.branches.get_branch(ctx.bucket, branch)  # before copying any byte
            address = ctx.engine.objects.new_physical_address(ctx.bucket)
            try:
                ctx.engine.repositories.namespace_files(repository.storage_namespace).copy(
                    source.physical_address, address
                )
            except errors.ObjectNotFound as e:
                raise errors.Gone(f"the data of {src_repo}/{src_ref}/{src_path} was garbage collected") from e
            entry = Entry(address, source.size, source.etag, int(ctx.clock()), content_type, metadata)
            entry = ctx.engine.objects.link_object(ctx.bucket, branch, path, entry, exclusive)
    return xml_response(
        "CopyObjectResult", [element("LastModified", iso8601(entry.mtime)), element("ETag", f'"{entry.etag}"')]
    )
