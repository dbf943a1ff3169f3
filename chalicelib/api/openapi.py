"""GET /api/v1/openapi.json: the OpenAPI document of what this API serves, as lakeFS serves its own at
/openapi.json: lakeFS's operations as lakefs-sdk describes them, and each operation beyond those marked
``x-lakelet`` (a lakeFS operation the SDK lacks, or Lakelet's extension). tests/conformance/build_spec.py writes
openapi.json beside this module, and a conformance test keeps it equal to the routes app.py serves. Public, as
lakeFS's: it describes the API, never data."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from chalice import Blueprint, Response

from .endpoint import route

__all__ = ["bp"]

bp = Blueprint(__name__)

DOCUMENT = Path(__file__).with_name("openapi.json")


@cache
def _document() -> bytes:
    return DOCUMENT.read_bytes()


@route(bp, "/openapi.json", ["GET"], public=True)
def get_openapi() -> Response:
    return Response(body=_document(), status_code=200, headers={"Content-Type": "application/json"})
