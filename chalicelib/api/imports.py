"""lakeFS's import API: POST (importStart), GET (importStatus) and DELETE (importCancel) on
/repositories/{repository}/branches/{branch}/import. The work is the engine's import use case
(chalicelib/graveler/imports); small imports run inline before the 202, larger ones as the import workflow
(chalicelib/workflows/imports.py), as graveler/runs/workflow_runner.py decides."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from chalice import Blueprint, Response

from chalicelib.graveler import errors
from chalicelib.graveler.imports import ImportLocation, ImportStatus

from . import names, serializers
from .endpoint import current_user, json_response, route, services
from .params import JsonBody, Query

bp = Blueprint(__name__)

IMPORT = "/repositories/{repository}/branches/{branch}/import"
# As commits: a date must be a calendar date (api/commits.py).
MAX_DATE = 253_402_300_799


def _locations(body: JsonBody) -> list[ImportLocation]:
    paths = body.raw("paths")
    if not isinstance(paths, list) or not paths:
        raise errors.Invalid("field paths must be a non-empty list of import locations")
    found = []
    for item in paths:
        if not isinstance(item, dict):
            raise errors.Invalid("field paths must hold objects with type, path and destination")
        location = JsonBody(item)
        found.append(
            ImportLocation(
                location.required_string("type"),
                location.required_string("path"),
                location.string("destination", default="") or "",
            )
        )
    return found


def status_body(status: ImportStatus) -> dict[str, Any]:
    """lakeFS's ImportStatus."""
    record = status.record
    body: dict[str, Any] = {
        "completed": status.commit is not None,
        "update_time": datetime.fromtimestamp(record.update_time, UTC).isoformat().replace("+00:00", "Z"),
        "ingested_objects": status.ingested,
    }
    if status.commit is not None:
        body["commit"] = serializers.commit(status.commit)
        body["metarange_id"] = record.metarange_id
    if record.error:
        body["error"] = {"message": record.error}
    return body


@route(bp, IMPORT, ["POST"])
def import_start(repository: str, branch: str) -> Response:
    """202 ImportCreationResponse {"id"}; a 403 naming the setting for a source outside the allowed locations."""
    body = JsonBody.parse(bp.current_request.raw_body)
    commit = body.nested("commit") or JsonBody({})
    request = services().engine.imports.submit(
        names.repository(repository),
        names.branch(branch),
        _locations(body),
        current_user().id,
        commit.string("message", default="") or "",
        commit.str_map("metadata"),
        commit.integer("date", minimum=0, maximum=MAX_DATE),
        body.boolean("force"),
    )
    return json_response({"id": request.import_id}, 202)


@route(bp, IMPORT, ["GET"])
def import_status(repository: str, branch: str) -> Response:
    import_id = Query(bp.current_request.query_params).required_string("id")
    status = services().engine.imports.status(names.repository(repository), names.branch(branch), import_id)
    return json_response(status_body(status))


@route(bp, IMPORT, ["DELETE"])
def import_cancel(repository: str, branch: str) -> Response:
    """204; 409 when the import already ended."""
    import_id = Query(bp.current_request.query_params).required_string("id")
    services().engine.imports.cancel(names.repository(repository), names.branch(branch), import_id)
    return Response(body="", status_code=204)
