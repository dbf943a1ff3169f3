"""Asynchronous commits: POST .../branches/{branch}/commits/async -> {id}, GET .../commits/status?id=...

The answers take lakeFS's shapes: TaskCreation ({"id"}) and CommitAsyncStatus ({"task_id", "completed",
"update_time", "result": Commit, "error": {"message"}}). Small commits complete inline before the answer; large
ones run as the commit workflow (chalicelib/workflows/launch.py).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from chalice import Blueprint, Response

from chalicelib.workflows.launch import commit_status, new_request, start_commit

from . import names, serializers
from .endpoint import current_user, json_response, route, services
from .params import JsonBody, Query

bp = Blueprint(__name__)


@route(bp, "/repositories/{repository}/branches/{branch}/commits/async", ["POST"])
def commit_async(repository: str, branch: str) -> Response:
    body = JsonBody.parse(bp.current_request.raw_body)
    request = new_request(
        names.repository(repository),
        names.branch(branch),
        current_user().id,
        body.required_str("message"),
        body.str_map("metadata"),
        body.int("date"),
        body.bool("allow_empty"),
    )
    return json_response({"id": start_commit(services(), request)}, 202)


@route(bp, "/repositories/{repository}/branches/{branch}/commits/status", ["GET"])
def commit_async_status(repository: str, branch: str) -> Response:
    task_id = Query(bp.current_request.query_params).required_str("id")
    status = commit_status(services(), names.repository(repository), task_id)
    answer: dict[str, Any] = {
        "task_id": status.task_id,
        "completed": status.completed,
        "update_time": datetime.fromtimestamp(status.update_time, UTC).isoformat().replace("+00:00", "Z"),
    }
    if status.result is not None:
        answer["result"] = serializers.commit(status.result)
    if status.error:
        answer["error"] = {"message": status.error}
    return json_response(answer)
