"""The import workflow's tasks (stepfunctions/import.asl.json), and the Importer over the container's services.

The state is {"request": ImportRequest JSON, "max_slices": int, "plan": ..., "built": [...], "commit": ...,
"merge": ...}: bounds, ids and locations only, never listings (the 256 KB limit on a state). Every task is one
idempotent step of chalicelib/graveler/imports/steps.py; a failure or a cancel goes to ``fail``, which records it
in the status record.
"""

from __future__ import annotations

import json

from chalicelib.graveler.imports import Importer, ImportPlan, ImportRequest, ImportSlice, ImportSteps
from chalicelib.graveler.plan_json import Json
from chalicelib.settings import ENV_IMPORT_ALLOWED_LOCATIONS
from chalicelib.wiring import Services, get_services


def importer(services: Services | None = None) -> Importer:
    """The Importer over the container's services (its engine, lister, records and allowed locations)."""
    found = services or get_services()
    assert found.source_lister is not None and found.import_records is not None, "imports are not wired"
    settings = found.settings
    return Importer(
        found.graveler,
        found.source_lister,
        found.import_records,
        settings.import_allowed_locations,
        ENV_IMPORT_ALLOWED_LOCATIONS,
        runner=found.import_workflow,
        inline_threshold=settings.import_inline_threshold,
        max_slices=settings.import_max_slices,
    )


def _steps() -> ImportSteps:
    return importer().steps


def _request(event: Json) -> ImportRequest:
    return ImportRequest.from_json(event["request"])


# ---- the tasks ------------------------------------------------------------------------------------------------


def plan(event: Json) -> Json:
    return _steps().plan(_request(event), int(event.get("max_slices") or 1)).to_json()


def build_slice(event: Json) -> Json:
    return _steps().build_slice(ImportSlice.from_task(event))


def commit(event: Json) -> Json:
    return _steps().commit(_request(event), ImportPlan.from_json(event["plan"]), list(event["built"]))


def merge(event: Json) -> Json:
    return _steps().merge(_request(event), event["commit"])


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
    return _steps().fail(_request(event), message)


# The Chalice function name of each task, as the ASL file names them ("${import_plan}", ...).
HANDLERS = {
    "import_plan": plan,
    "import_build_slice": build_slice,
    "import_commit": commit,
    "import_merge": merge,
    "import_fail": fail,
}
