"""Refs dump and restore (lakeFS's dumpRefs, restoreRefs) and the repository dump and restore tasks (dumpSubmit,
dumpStatus, restoreSubmit, restoreStatus). The use cases are graveler/usecases/dump_tasks.py: small tasks run
inline, large ones as the dump and restore workflows; their status is recorded in the repository's namespace.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from chalice import Blueprint, Response

from chalicelib.graveler.dumps.refs_dump import RefsDump
from chalicelib.graveler.usecases.dump_tasks import DUMP_TASK, RESTORE_TASK, DumpTask

from . import names
from .endpoint import json_response, route, services
from .params import JsonBody, Query

bp = Blueprint(__name__)


def _restore_body() -> tuple[RefsDump, bool]:
    body = JsonBody.parse(bp.current_request.raw_body)
    dump = RefsDump(
        body.required_string("commits_meta_range_id"),
        body.required_string("branches_meta_range_id"),
        body.required_string("tags_meta_range_id"),
    )
    return dump, body.boolean("force")


def _status(task: DumpTask) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": task.id,
        "done": task.done,
        "update_time": datetime.fromtimestamp(task.update_time, UTC).isoformat().replace("+00:00", "Z"),
    }
    if task.error:
        out["error"] = task.error
    if task.dumped is not None:
        out["refs"] = task.dumped.to_json()
    return out


@route(bp, "/repositories/{repository}/refs/dump", ["PUT"])
def dump_refs(repository: str) -> Response:
    return json_response(services().engine.dumps.dump(names.repository(repository)).to_json(), 201)


@route(bp, "/repositories/{repository}/refs/restore", ["PUT"])
def restore_refs(repository: str) -> Response:
    dump, force = _restore_body()
    services().engine.dumps.restore(names.repository(repository), dump, force)
    # lakeFS answers 200 with no body.
    return Response(body=b"", status_code=200, headers={})


@route(bp, "/repositories/{repository}/dump", ["POST"])
def dump_submit(repository: str) -> Response:
    return json_response({"id": services().engine.dumps.submit_dump(names.repository(repository)).id}, 202)


@route(bp, "/repositories/{repository}/dump", ["GET"])
def dump_status(repository: str) -> Response:
    task_id = Query(bp.current_request.query_params).required_string("task_id")
    return json_response(_status(services().engine.dumps.status(names.repository(repository), DUMP_TASK, task_id)))


@route(bp, "/repositories/{repository}/restore", ["POST"])
def restore_submit(repository: str) -> Response:
    dump, force = _restore_body()
    return json_response(
        {"id": services().engine.dumps.submit_restore(names.repository(repository), dump, force).id}, 202
    )


@route(bp, "/repositories/{repository}/restore", ["GET"])
def restore_status(repository: str) -> Response:
    task_id = Query(bp.current_request.query_params).required_string("task_id")
    return json_response(_status(services().engine.dumps.status(names.repository(repository), RESTORE_TASK, task_id)))
