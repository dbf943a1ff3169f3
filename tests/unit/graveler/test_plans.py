"""Plans are frozen records, and their JSON form (what the workflow state carries) reads back to the same plan."""

from __future__ import annotations

import dataclasses
import json

import pytest

from chalicelib.graveler.commit import CommitBase, CommitPlan, SliceSpec
from chalicelib.graveler.merge import MergeFixed, MergePlan, MergeSliceSpec


def _through_json(data: dict) -> dict:  # type: ignore[type-arg]
    return json.loads(json.dumps(data))


def test_commit_plans_round_trip_and_are_frozen() -> None:
    slices = (
        SliceSpec("s3://b/r", "mr1", ("t1", "t2"), "", "k"),
        SliceSpec("s3://b/r", "mr1", ("t1", "t2"), "k", None),
    )
    plan = CommitPlan(False, CommitBase("c1", 3, "t0", ("t1", "t2"), "s3://b/r"), slices)
    assert CommitPlan.from_json(_through_json(plan.to_json())) == plan
    done = CommitPlan(True, head="c9")
    assert CommitPlan.from_json(_through_json(done.to_json())) == done
    # The state machine's Choice reads $.plan.done and maps over $.plan.slices.
    assert plan.to_json()["done"] is False and len(plan.to_json()["slices"]) == 2
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.done = True  # type: ignore[misc]


def test_merge_plans_round_trip_and_are_frozen() -> None:
    item = MergeSliceSpec("s3://b/r", "b", "s", "d", "source-wins", (("a/*", "dest-wins"),), "req", "", None)
    plan = MergePlan(MergeFixed("s3://b/r", "c1", 4, 2, ("t1",), None), (item,), 120)
    assert MergePlan.from_json(_through_json(plan.to_json())) == plan
    trivial = MergePlan(MergeFixed("s3://b/r", "c1", 4, 2, (), "mr"), (), 0)
    assert MergePlan.from_json(_through_json(trivial.to_json())) == trivial
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.size = 0  # type: ignore[misc]
