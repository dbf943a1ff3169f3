"""Lakelet's own range and metarange files, as lakeFS's getMetaRange, getRange and getMetadataObject hand them
out: GET /repositories/{r}/metadata/meta_range/{id} and .../metadata/range/{id} answer the file's location
(StorageURI, and a Location header), GET .../metadata/object/{type}/{id} its bytes, or with ``presign=true`` a
302 to a presigned GET. Lakelet's files are Parquet, not lakeFS's SSTables: docs/api.md describes their
columns. Ranges and metaranges share ``<namespace>/_lakefs/<id>``, so the type names what the caller expects and
the id alone decides the file."""

from __future__ import annotations

from chalice import Blueprint, Response

from chalicelib.graveler import errors

from . import names
from .endpoint import json_response, route, services
from .params import Query

__all__ = ["bp"]

bp = Blueprint(__name__)

_TYPES = ("meta_range", "range")


def _location(repository: str, object_id: str) -> Response:
    address = services().engine.repositories.metadata_file(names.repository(repository), object_id)
    return json_response({"location": address}, headers={"Location": address})


@route(bp, "/repositories/{repository}/metadata/meta_range/{meta_range}", ["GET"])
def get_meta_range(repository: str, meta_range: str) -> Response:
    return _location(repository, meta_range)


@route(bp, "/repositories/{repository}/metadata/range/{range_id}", ["GET"])
def get_range(repository: str, range_id: str) -> Response:
    return _location(repository, range_id)


@route(bp, "/repositories/{repository}/metadata/object/{object_type}/{object_id}", ["GET"])
def get_metadata_object(repository: str, object_type: str, object_id: str) -> Response:
    if object_type not in _TYPES:
        raise errors.Invalid(f"unknown metadata object type {object_type!r}: expected meta_range or range")
    svc = services()
    repo = names.repository(repository)
    if Query(bp.current_request.query_params).boolean("presign"):
        url = svc.engine.repositories.presign_metadata_file(repo, object_id, svc.settings.presign_expiry_seconds)
        return Response(body=b"", status_code=302, headers={"Location": url})
    data = svc.engine.repositories.read_metadata_file(repo, object_id)
    return Response(body=data, status_code=200, headers={"Content-Type": "application/octet-stream"})
