"""The commit workflow's tasks (stepfunctions/commit.asl.json). Each takes the state machine's state (or a
Map item), runs one idempotent step of chalicelib/graveler/commit/steps.py and returns what the state keeps.

The state is {"request": CommitRequest JSON, "max_slices": int, "seal": ..., "plan": ..., "built": [...],
"finish": ...}: bounds, ids and tokens only, never data (the 256 KB limit on a state).
"""

from __future__ import annotations

from dataclasses import replace

from chalicelib.graveler.commit import (
    DEFAULT_MAX_SLICES,
    BuiltSlice,
    CommitPlan,
    CommitRequest,
    CommitSteps,
    Finish,
    Sealed,
    SliceSpec,
)
from chalicelib.graveler.runs.plan_json import Json
from chalicelib.wiring import get_services


def steps() -> CommitSteps:
    """The steps of the container's engine: one per warm Lambda container, whose cache of decoded ranges serves
    the next task the container runs."""
    return get_services().engine.commits.steps


def seal(event: Json) -> Json:
    """Seals, then runs the pre-commit hooks: they judge exactly the sealed changes, which the plan commits (a
    change staged while they run goes to the next commit). A failing hook fails the execution with HookAborted;
    the sealed changes stay staged for the next commit."""
    request = CommitRequest.from_json(event["request"])
    sealed = steps().seal(request)
    pre_run_id = get_services().engine.commits.run_pre_hooks(request)
    return replace(sealed, pre_run_id=pre_run_id).to_json()


def plan(event: Json) -> Json:
    max_slices = int(event.get("max_slices") or DEFAULT_MAX_SLICES)
    request = CommitRequest.from_json(event["request"])
    return steps().plan(request, Sealed.from_json(event["seal"]).sealed_token, max_slices).to_json()


def build_slice(event: Json) -> Json:
    return steps().build_slice(SliceSpec.from_json(event)).to_json()


def finish(event: Json) -> Json:
    plan = CommitPlan.from_json(event["plan"])
    built = [BuiltSlice.from_json(b) for b in event["built"]]
    return steps().finish(CommitRequest.from_json(event["request"]), plan, built).to_json()


def landed(event: Json) -> Json:
    """The step after the branch moved: writes the commit's id onto the pre-commit run (the seal step's), then runs
    the post-commit hooks (once per request however often the step is retried: the run is keyed by the request id).
    It drops nothing: the scheduled sweep drops the sealed tokens once their grace is over
    (chalicelib/graveler/writes/deferred_drop.py). Its failure cannot fail the commit: the state machine catches it and
    ends as landed, and the status route reports a landed commit whatever happened after."""
    commit_id = Finish.from_json(event["finish"]).commit_id or None
    if commit_id:
        request = CommitRequest.from_json(event["request"])
        pre_run_id = Sealed.from_json(event["seal"]).pre_run_id if "seal" in event else ""
        get_services().engine.commits.run_post_hooks(request, commit_id, pre_run_id)
    return {"commit_id": commit_id}


# The Chalice function name of each task, as the ASL file names them ("${commit_seal}", ...).
HANDLERS = {
    "commit_seal": seal,
    "commit_plan": plan,
    "commit_build_slice": build_slice,
    "commit_finish": finish,
    "commit_landed": landed,
}
