"""Presigned multipart uploads, in lakeFS's shapes: POST .../staging/pmpu?path=&parts=N (PresignMultipartUpload,
201), PUT .../staging/pmpu/{uploadId}/parts/{n}?path= (UploadTo: one more part URL), PUT .../staging/pmpu/{id}
?path= (CompletePresignMultipartUpload -> ObjectStats) and DELETE .../staging/pmpu/{id}?path= (abort, 204).

The physical address handed out is signed for (repository, branch, path) like staging/backing's, and every later
call must present it for the same three (400 otherwise), so an upload cannot be completed onto another path or
branch than it was started for. graveler/usecases/presigned_multipart.py has the rest."""

from __future__ import annotations

from chalice import Blueprint, Response

from chalicelib.graveler import errors
from chalicelib.graveler.validation import validate_path

from . import names, serializers
from .endpoint import json_response, no_content, route, services
from .objects import DEFAULT_CONTENT_TYPE
from .params import JsonBody, Query

__all__ = ["bp"]

bp = Blueprint(__name__)

PMPU = "/repositories/{repository}/branches/{branch}/staging/pmpu"


def _path() -> str:
    if not services().settings.pre_sign_support:
        # lakeFS answers 501 where its block store cannot presign.
        raise errors.Unsupported("presign multipart upload API is not supported")
    path = Query(bp.current_request.query_params).required_string("path")
    validate_path(path)
    return path


def _verified(repository: str, branch: str, path: str, body: JsonBody) -> str:
    signed = body.required_string("physical_address")
    return services().auth.address_signer().verify(repository, branch, path, signed)


@route(bp, PMPU, ["POST"])
def create_presign_multipart_upload(repository: str, branch: str) -> Response:
    path = _path()
    parts = Query(bp.current_request.query_params).integer("parts", 0) or 0
    svc = services()
    repo, branch_id = names.repository(repository), names.branch(branch)
    address = svc.auth.address_signer().sign(repo, branch_id, path, svc.engine.objects.new_physical_address(repo))
    started = svc.engine.multipart.start_presigned_multipart(
        repo, branch_id, path, address, parts, svc.settings.presign_expiry_seconds
    )
    body: dict[str, object] = {"upload_id": started.upload_id, "physical_address": address}
    if started.part_urls:
        body["presigned_urls"] = list(started.part_urls)
    return json_response(body, 201)


@route(bp, PMPU + "/{upload_id}/parts/{part_number}", ["PUT"])
def upload_part(repository: str, branch: str, upload_id: str, part_number: str) -> Response:
    path = _path()
    if not part_number.isdigit():
        raise errors.Invalid(f"part number must be an integer, got {part_number!r}")
    body = JsonBody.parse(bp.current_request.raw_body)
    svc = services()
    address = _verified(repository, branch, path, body)
    url = svc.engine.multipart.presign_part(
        names.repository(repository), address, upload_id, int(part_number), svc.settings.presign_expiry_seconds
    )
    return json_response({"presigned_url": url})


@route(bp, PMPU + "/{upload_id}/parts/{part_number}/copy", ["PUT"])
def upload_part_copy(repository: str, branch: str, upload_id: str, part_number: str) -> Response:
    """lakeFS's uploadPartCopy (UploadPartCopyFrom): a part copied inside the store from an object of any
    repository the caller may read; 204 with the part's ETag header."""
    path = _path()
    if not part_number.isdigit():
        raise errors.Invalid(f"part number must be an integer, got {part_number!r}")
    body = JsonBody.parse(bp.current_request.raw_body)
    address = _verified(repository, branch, path, body)
    source = body.nested("copy_source")
    if source is None:
        raise errors.Invalid("field copy_source is required")
    etag = services().engine.multipart.copy_part(
        names.repository(repository),
        address,
        upload_id,
        int(part_number),
        (
            names.repository(source.required_string("repository")),
            names.ref(source.required_string("ref")),
            source.required_string("path"),
        ),
        source.string("range"),
    )
    return Response(body=b"", status_code=204, headers={"ETag": f'"{etag}"'})


@route(bp, PMPU + "/{upload_id}", ["PUT"])
def complete_presign_multipart_upload(repository: str, branch: str, upload_id: str) -> Response:
    path = _path()
    body = JsonBody.parse(bp.current_request.raw_body)
    address = _verified(repository, branch, path, body)
    parts = _parts(body.raw("parts"))
    entry = services().engine.multipart.complete_presigned_multipart(
        names.repository(repository),
        names.branch(branch),
        path,
        address,
        upload_id,
        parts,
        body.string("content_type") or DEFAULT_CONTENT_TYPE,
        body.str_map("user_metadata"),
    )
    return json_response(serializers.object_stats(path, entry))


@route(bp, PMPU + "/{upload_id}", ["DELETE"])
def abort_presign_multipart_upload(repository: str, branch: str, upload_id: str) -> Response:
    path = _path()
    address = _verified(repository, branch, path, JsonBody.parse(bp.current_request.raw_body))
    services().engine.multipart.abort_presigned_multipart(names.repository(repository), address, upload_id)
    return no_content()


def _parts(raw: object) -> list[tuple[int, str]]:
    """[{part_number, etag}, ...] as (number, ETag without quotes): S3 answers a part's ETag quoted."""
    if not isinstance(raw, list) or not raw:
        raise errors.Invalid("parts are required: a list of {part_number, etag}")
    parts: list[tuple[int, str]] = []
    for item in raw:
        if not isinstance(item, dict):
            raise errors.Invalid("each part must be an object {part_number, etag}")
        fields = JsonBody(item)
        number = fields.integer("part_number", 1, 10_000)
        if number is None:
            raise errors.Invalid("field part_number is required")
        parts.append((number, fields.required_string("etag").strip().strip('"')))
    return parts
