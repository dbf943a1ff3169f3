"""The merge workflow's tasks (stepfunctions/merge.asl.json). Each takes the state machine's state (or a Map
item), runs one idempotent step of chalicelib/graveler/merge/steps.py and returns what the state keeps.

The state is {"request": MergeRequest JSON, "max_slices": int, "plan": ..., "built": [...], "finish": ...}:
bounds, ids and tokens only, never data (the 256 KB limit on a state).
"""

from __future__ import annotations

from chalicelib.graveler.commit import Finish
from chalicelib.graveler.merge import (
    DEFAULT_MAX_SLICES,
    MergedSlice,
    MergePlan,
    MergeRequest,
    MergeSliceSpec,
    MergeSteps,
)
from chalicelib.graveler.runs.plan_json import Json
from chalicelib.wiring import get_services


def steps() -> MergeSteps:
    """The steps of the container's engine: one per warm Lambda container, whose cache of decoded ranges serves
    the next task the container runs."""
    return get_services().engine.merges.steps


def plan(event: Json) -> Json:
    max_slices = int(event.get("max_slices") or DEFAULT_MAX_SLICES)
    return steps().plan(MergeRequest.from_json(event["request"]), max_slices).to_json()


def build_slice(event: Json) -> Json:
    return steps().build_slice(MergeSliceSpec.from_json(event)).to_json()


def finish(event: Json) -> Json:
    plan = MergePlan.from_json(event["plan"])
    built = [MergedSlice.from_json(b) for b in event["built"]]
    return steps().finish(MergeRequest.from_json(event["request"]), plan, built).to_json()


def landed(event: Json) -> Json:
    """The step after the branch moved: runs the post-merge hooks (once per request however often the step is
    retried: the run is keyed by the request id). It drops nothing (the scheduled sweep does, after the grace);
    its failure ends the execution as landed all the same."""
    request = MergeRequest.from_json(event["request"])
    commit_id = Finish.from_json(event["finish"]).commit_id
    get_services().engine.merges.run_post_hooks(request, commit_id)
    return {"commit_id": commit_id}


# The Chalice function name of each task, as the ASL file names them ("${merge_plan}", ...).
HANDLERS = {
    "merge_plan": plan,
    "merge_build_slice": build_slice,
    "merge_finish": finish,
    "merge_landed": landed,
}
