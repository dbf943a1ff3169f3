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


def test_the_json_form_is_plain_json_and_checks_what_it_reads() -> None:
    item = MergeSliceSpec("s3://b/r", "b", "s", "d", None, (("a/*", "dest-wins"),), "req", "k", None)
    data = item.to_json()
    # Tuples travel as lists, nested records as objects, None as null: what the state machine can read.
    assert data["path_strategies"] == [["a/*", "dest-wins"]] and data["hi"] is None and data["strategy"] is None
    assert CommitPlan(True, head="c9").to_json() == {"done": True, "base": None, "slices": [], "head": "c9"}
    # A field without a default must be there; one with a default may be left out.
    with pytest.raises(KeyError, match="namespace"):
        SliceSpec.from_json({"base_metarange": "mr", "tokens": [], "lo": "", "hi": None})
    assert CommitPlan.from_json({"done": True}) == CommitPlan(True)
    # Values are read as the declared type: a generation sent as a string is an int again.
    base = CommitBase.from_json(
        {"commit_id": "c", "generation": "7", "staging_token": "t", "tokens": ["x"], "namespace": "n"}
    )
    assert base.generation == 7 and base.tokens == ("x",)
    # A fixed-size tuple of the wrong size is refused instead of cut short.
    with pytest.raises(ValueError):
        MergeSliceSpec.from_json({**data, "path_strategies": [["a/*", "dest-wins", "extra"]]})
