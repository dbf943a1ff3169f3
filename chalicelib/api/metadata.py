"""Repository metadata: GET|POST|DELETE /repositories/{repository}/metadata (lakeFS's key/value pairs)."""

from __future__ import annotations

from chalice import Blueprint, Response

from chalicelib.graveler import errors
from chalicelib.repository_metadata import RepositoryMetadata

from . import names
from .endpoint import json_response, no_content, route, services
from .params import JsonBody

bp = Blueprint(__name__)

METADATA = "/repositories/{repository}/metadata"


def _metadata() -> RepositoryMetadata:
    svc = services()
    if svc.repository_metadata is None:
        raise errors.StorageError("no repository metadata store is configured")
    return RepositoryMetadata(svc.engine, svc.repository_metadata)


@route(bp, METADATA, ["GET"])
def get_repository_metadata(repository: str) -> Response:
    return json_response(_metadata().get(names.repository(repository)))


@route(bp, METADATA, ["POST"])
def set_repository_metadata(repository: str) -> Response:
    values = JsonBody.parse(bp.current_request.raw_body).str_map("metadata")
    _metadata().set(names.repository(repository), values)
    return no_content()


@route(bp, METADATA, ["DELETE"])
def delete_repository_metadata(repository: str) -> Response:
    keys = JsonBody.parse(bp.current_request.raw_body).str_list("keys")
    _metadata().delete(names.repository(repository), keys)
    return no_content()
