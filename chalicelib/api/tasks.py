"""The shapes of commits and merges that run as tasks (chalicelib/graveler/runs/workflow_runner.py): lakeFS's
TaskCreation ({"id"}) for work that goes on in the background, and CommitAsyncStatus / MergeAsyncStatus ({"task_id",
"completed", "update_time", "result", "error": {"message"}, "status_code"}) for its status.

A synchronous commit or merge that is still running when its wait ends answers 202 Accepted with TaskCreation,
a message and a Location header naming the status URL. The official clients expect 201/200 there and return
None; the body says what to poll.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from chalice import Response

from chalicelib.graveler.records import Commit
from chalicelib.graveler.runs.workflow_runner import TaskStatus

from .endpoint import json_response
from .errors import message_for, status_for


def accepted(task_id: str, status_url: str) -> Response:
    """202: the work goes on as task ``task_id``; poll ``status_url``."""
    body = {"id": task_id, "message": f"still running as task {task_id}: poll GET {status_url}"}
    return json_response(body, 202, {"Location": status_url})


def status_body(status: TaskStatus, result: Callable[[Commit], dict[str, Any]]) -> dict[str, Any]:
    answer: dict[str, Any] = {
        "task_id": status.task_id,
        "completed": status.completed,
        "update_time": datetime.fromtimestamp(status.update_time, UTC).isoformat().replace("+00:00", "Z"),
    }
    if status.result is not None:
        answer["result"] = result(status.result)
    if status.error is not None:
        answer["error"] = {
            "message": message_for(status.error) if status_for(status.error) < 500 else str(status.error)
        }
        answer["status_code"] = status_for(status.error)
    return answer
