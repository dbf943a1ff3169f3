"""The import workflow's tasks (stepfunctions/import.asl.json) and how an import starts: inline in the API Lambda
when the sources are small, else as the state machine when one is configured.

The state is {"request": ImportRequest JSON, "max_slices": int, "plan": ..., "built": [...], "commit": ...,
"merge": ...}: bounds, ids and locations only, never listings (the 256 KB limit on a state). Every task is one
idempotent step of chalicelib/graveler/imports/steps.py; a failure or a cancel goes to ``fail``, which records it
in the status record.
"""

from __future__ import annotations

import json
from typing import Any

from chalicelib.graveler.imports import ImportPlan, ImportRequest, Importer, ImportSlice, ImportSteps
from chalicelib.settings import ENV_IMPORT_ALLOWED_LOCATIONS
from chalicelib.wiring import Services, get_services

Json = dict[str, Any]

EXECUTION_PREFIX = "import-"


def importer(services: Services | None = None) -> Importer:
    """The Importer over the container's services (its engine, lister, records and allowed locations)."""
    found = services or get_services()
    assert found.source_lister is not None and found.import_records is not None, "imports are not wired"
    return Importer(found.graveler, found.source_lister, found.import_records,
                    found.settings.import_allowed_locations, ENV_IMPORT_ALLOWED_LOCATIONS)


def _steps() -> ImportSteps:
    return importer().steps


def _request(event: Json) -> ImportRequest:
    return ImportRequest.from_json(event["request"])


# ---- starting -------------------------------------------------------------------------------------------------


def _at_least(found: Importer, request: ImportRequest, count: int) -> bool:
    """Whether the sources hold at least ``count`` objects; lists at most about that many."""
    seen = 0
    for loc in request.locations:
        if loc.type != "common_prefix":
            seen += 1
            continue
        for page in found.steps.lister.pages(loc.bucket, loc.key):
            seen += len(page)
            if seen >= count:
                return True
    return seen >= count


def launch(services: Services, found: Importer, request: ImportRequest) -> None:
    """Runs the import inline when it is small or no state machine is configured; otherwise starts the workflow
    (named after the import id, so a repeated start is refused rather than run twice)."""
    settings = services.settings
    arn = settings.import_state_machine_arn
    if not arn or not _at_least(found, request, settings.import_inline_threshold + 1):
        found.run(request, max_slices=1)
        return
    from chalicelib.adapters.stepfunctions import StepFunctionsWorkflows

    workflows = StepFunctionsWorkflows(arn, settings.region, settings.endpoint_url)
    workflows.start(EXECUTION_PREFIX + request.import_id,
                    {"request": request.to_json(), "max_slices": settings.import_max_slices})


# ---- the tasks ------------------------------------------------------------------------------------------------


def plan(event: Json) -> Json:
    return _steps().plan(_request(event), int(event.get("max_slices") or 1)).to_json()


def build_slice(event: Json) -> Json:
    return _steps().build_slice(ImportSlice.from_json(event))


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
