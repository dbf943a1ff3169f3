"""The import workflow's tasks (stepfunctions/import.asl.json), over the steps of the container's engine.

The state is {"request": ImportRequest JSON, "max_slices": int, "plan": ..., "built": [...], "commit": ...,
"merge": ...}: bounds, ids and locations only, never listings (the 256 KB limit on a state). Every task is one
idempotent step of chalicelib/graveler/imports/steps.py; a failure or a cancel goes to ``fail``, which records it
in the status record.
"""

from __future__ import annotations

import json

from chalicelib.graveler.imports import (
    ImportCommitted,
    ImportedSlice,
    ImportPlan,
    ImportRequest,
    ImportSlice,
    ImportSteps,
)
from chalicelib.graveler.runs.plan_json import Json
from chalicelib.wiring import get_services


def _steps() -> ImportSteps:
    """The import's steps of the container's engine (wired in wiring.py, as commit's and merge's)."""
    return get_services().engine.imports.steps


def _request(event: Json) -> ImportRequest:
    return ImportRequest.from_json(event["request"])


# ---- the tasks ------------------------------------------------------------------------------------------------


def plan(event: Json) -> Json:
    return _steps().plan(_request(event), int(event.get("max_slices") or 1)).to_json()


def build_slice(event: Json) -> Json:
    return _steps().build_slice(ImportSlice.from_task(event)).to_json()


def commit(event: Json) -> Json:
    built = [ImportedSlice.from_json(b) for b in event["built"]]
    return _steps().commit(_request(event), ImportPlan.from_json(event["plan"]), built).to_json()


def merge(event: Json) -> Json:
    return _steps().merge(_request(event), ImportCommitted.from_json(event["commit"])).to_json()


def fail(event: Json) -> Json:
    """Records the error the Catch passed on ({"Error", "Cause"}: a Lambda's cause is JSON with errorMessage)."""
    error = event.get("error") or {}
    message = str(error.get("Cause") or error.get("Error") or "the import workflow failed")
    try:
        cause = json.loads(message)
        if isinstance(cause, dict) and cause.get("errorMessage"):
            message = str(cause["errorMessage"])
    except ValueError:
        pass
    return _steps().fail(_request(event), message).to_json()


# The Chalice function name of each task, as the ASL file names them ("${import_plan}", ...).
HANDLERS = {
    "import_plan": plan,
    "import_build_slice": build_slice,
    "import_commit": commit,
    "import_merge": merge,
    "import_fail": fail,
}
