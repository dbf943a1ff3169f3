"""engine.commits.commit and engine.merges.merge are the one entry: they run small work inline and hand work above the
thresholds to the WorkflowRunner port (here its memory twin), wait for it, and report how it ended."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from chalicelib.adapters.memory import MemoryWorkflowRunner
from chalicelib.graveler import errors
from chalicelib.graveler.commit import COMMITTED, CommitRequest, Finish
from chalicelib.graveler.engine import Engine, build_engine
from chalicelib.graveler.merge import MergeRequest
from chalicelib.graveler.runs.workflow_runner import INLINE_COUNT, Workflows
from chalicelib.graveler.writes.batch_upload import NewObject
from chalicelib.graveler.writes.staging_shards import sketch_rank


def _with(g: Engine, workflows: Workflows) -> Engine:
    """The engine over the same stores, with these workflows (an engine's parts are fixed when it is built)."""
    return build_engine(dataclasses.replace(g.ports, workflows=workflows))


def _commit_workflow(g: Engine) -> MemoryWorkflowRunner:
    def execute(payload: dict[str, Any]) -> dict[str, Any]:
        made = g.commits.steps.run(CommitRequest.from_json(payload["request"]), 2)
        return {"finish": Finish(COMMITTED, made.id).to_json()}

    return MemoryWorkflowRunner(execute)


def _merge_workflow(g: Engine) -> MemoryWorkflowRunner:
    def execute(payload: dict[str, Any]) -> dict[str, Any]:
        made = g.merges.steps.run(MergeRequest.from_json(payload["request"]), 2)
        return {"finish": Finish(COMMITTED, made.id).to_json()}

    return MemoryWorkflowRunner(execute)


def _upload(g: Engine, branch: str, count: int) -> None:
    for i in range(count):
        g.objects.upload_object("repo", branch, f"{branch}/f{i}", b"%d" % i)


def test_a_commit_above_the_threshold_runs_as_a_workflow(g: Engine, repo: object) -> None:
    runner = _commit_workflow(g)
    g = _with(g, Workflows(commit=runner, commit_threshold=3))
    _upload(g, "main", 3)
    small = g.commits.commit("repo", "main", "alice", "small")
    assert runner.describe("w-anything") is None and g.branches.get_branch("repo", "main").commit_id == small.id
    _upload(g, "main", 4)
    large = g.commits.commit("repo", "main", "alice", "large", {"k": "v"})
    assert (large.message, large.metadata, large.parents) == ("large", {"k": "v"}, (small.id,))
    assert g.branches.get_branch("repo", "main").commit_id == large.id
    assert len(g.objects.list_objects("repo", "main", amount=100).results) == 4  # f0..f3 rewritten, the same keys
    # The execution is named by the request and started with it.
    (name,) = runner._executions
    assert name.startswith("w-") and runner.describe(name).input["request"]["message"] == "large"  # type: ignore[union-attr]
    status = g.commits.commit_status("repo", "main", name)
    assert status.completed and status.result == large


class _CountingStaging:
    """The engine's staging store, recording the bound of every count a commit asks for."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.counts: list[int] = []

    def count(self, token: str, up_to: int) -> int:
        self.counts.append(up_to)
        return int(self._inner.count(token, up_to))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def _counting(g: Engine, workflows: Workflows) -> tuple[Engine, _CountingStaging]:
    staging = _CountingStaging(g.ports.staging)
    return build_engine(dataclasses.replace(g.ports, workflows=workflows, staging=staging)), staging


def _upload_keys(g: Engine, keys: list[str]) -> None:
    g.objects.upload_objects("repo", "main", [NewObject(key, b"x") for key in keys])


def test_a_commit_its_sketch_puts_well_under_the_threshold_is_not_counted_row_by_row(g: Engine, repo: object) -> None:
    runner = _commit_workflow(g)
    g, staging = _counting(g, Workflows(commit=runner, commit_threshold=1_000))
    _upload_keys(g, [f"k{i:04d}" for i in range(300)])
    made = g.commits.commit("repo", "main", "alice", "300 objects")
    # One page counted (INLINE_COUNT), then the sketch's estimate (~300, under 1,000 / 2) decides: inline.
    assert staging.counts == [INLINE_COUNT] and not runner._executions
    assert g.branches.get_branch("repo", "main").commit_id == made.id
    assert len(g.objects.list_objects("repo", "main", amount=1000).results) == 300


def test_a_commit_estimated_near_the_threshold_is_counted_and_decided_exactly(g: Engine, repo: object) -> None:
    runner = _commit_workflow(g)
    g, staging = _counting(g, Workflows(commit=runner, commit_threshold=400))
    _upload_keys(g, [f"a{i:04d}" for i in range(300)])
    g.commits.commit("repo", "main", "alice", "300 of at most 400")
    assert staging.counts == [INLINE_COUNT, 401] and not runner._executions
    _upload_keys(g, [f"b{i:04d}" for i in range(401)])
    g.commits.commit("repo", "main", "alice", "401, above 400")
    assert staging.counts[2:] == [INLINE_COUNT, 401] and len(runner._executions) == 1


def test_keys_the_sketch_leaves_out_fall_back_to_the_count(g: Engine, repo: object) -> None:
    runner = _commit_workflow(g)
    g, staging = _counting(g, Workflows(commit=runner, commit_threshold=1_000))
    # Keys chosen for being out of the sketch: it estimates 0 rows where a page of INLINE_COUNT was counted.
    keys = [key for key in (f"hidden{i}" for i in range(5_000)) if sketch_rank(key) is None][:150]
    _upload_keys(g, keys)
    assert g.ports.staging.sample(g.branches.get_branch("repo", "main").staging_token, 256).estimated_rows == 0
    g.commits.commit("repo", "main", "alice", "150 unsketched")
    assert staging.counts == [INLINE_COUNT, 1_001] and not runner._executions


def test_a_workflow_that_outlives_the_wait_is_still_running(g: Engine, repo: object) -> None:
    runner = MemoryWorkflowRunner()  # executions run until the test ends them
    g = _with(g, Workflows(commit=runner, commit_threshold=0))
    _upload(g, "main", 1)
    with pytest.raises(errors.StillRunning) as running:
        g.commits.commit("repo", "main", "alice", "later", wait_seconds=0)
    task = running.value.task_id
    assert task.startswith("w-") and not g.commits.commit_status("repo", "main", task).completed
    with pytest.raises(errors.NotFound):
        g.commits.commit_status("repo", "dev", task)  # only through its own branch
    runner.end(task, "FAILED", error="CommitToProtectedBranch", cause='{"errorMessage": "no commits here"}')
    failed = g.commits.commit_status("repo", "main", task)
    assert failed.completed and isinstance(failed.error, errors.CommitToProtectedBranch)
    assert str(failed.error) == "no commits here"


def test_an_execution_whose_post_move_step_fails_reports_the_commit_as_landed(g: Engine, repo: object) -> None:
    """The branch moved, then the step after it (the post-commit hooks) failed for good and the execution ended
    FAILED (a state machine deployed before its Catch, or a timeout of the execution): the commit landed, and both
    the waiting call and the status route say so, with its id."""

    def execute(payload: dict[str, Any]) -> dict[str, Any]:
        g.commits.steps.run(CommitRequest.from_json(payload["request"]), 2)
        raise errors.StorageError("the post-commit step timed out")

    runner = MemoryWorkflowRunner(execute)
    g = _with(g, Workflows(commit=runner, commit_threshold=0))
    _upload(g, "main", 2)
    made = g.commits.commit("repo", "main", "alice", "landed", {"k": "v"})
    assert g.branches.get_branch("repo", "main").commit_id == made.id and made.message == "landed"
    (name,) = runner._executions
    assert runner.describe(name).status == "FAILED"  # type: ignore[union-attr]
    status = g.commits.commit_status("repo", "main", name)
    assert status.completed and status.error is None and status.result == made
    # A commit on top does not hide it: the status looks back along the branch.
    g.objects.upload_object("repo", "main", "later", b"x")
    g.commits.steps.run(CommitRequest("repo", "main", "other", "alice", "on top", 1.0, {}), 1)
    assert g.commits.commit_status("repo", "main", name).result == made


def test_a_failed_execution_whose_commit_never_landed_reports_its_error(g: Engine, repo: object) -> None:
    def execute(payload: dict[str, Any]) -> dict[str, Any]:
        raise errors.StorageError("the plan failed")

    runner = MemoryWorkflowRunner(execute)
    g = _with(g, Workflows(commit=runner, commit_threshold=0))
    _upload(g, "main", 1)
    with pytest.raises(errors.StorageError):
        g.commits.commit("repo", "main", "alice", "never")
    (name,) = runner._executions
    assert isinstance(g.commits.commit_status("repo", "main", name).error, errors.StorageError)


def test_an_unknown_failure_is_workflow_failed(g: Engine, repo: object) -> None:
    runner = MemoryWorkflowRunner()
    g = _with(g, Workflows(commit=runner, commit_threshold=0))
    _upload(g, "main", 1)
    with pytest.raises(errors.StillRunning) as running:
        g.commits.commit("repo", "main", "alice", "later", wait_seconds=0)
    runner.end(running.value.task_id, "TIMED_OUT")
    assert isinstance(g.commits.commit_status("repo", "main", running.value.task_id).error, errors.WorkflowFailed)


def test_a_failing_workflow_raises_the_steps_error(g: Engine, repo: object) -> None:
    g = _with(g, Workflows(commit=_commit_workflow(g), commit_threshold=0))
    _upload(g, "main", 1)
    g.commits.commit("repo", "main", "alice", "first")
    with pytest.raises(errors.NoChanges):
        g.commits.commit("repo", "main", "alice", "nothing staged")  # inline: no staged change is above no threshold
    g = _with(
        g,
        Workflows(
            commit=MemoryWorkflowRunner(lambda p: (_ for _ in ()).throw(errors.NoChanges("none"))), commit_threshold=0
        ),
    )
    _upload(g, "main", 1)
    with pytest.raises(errors.NoChanges):
        g.commits.commit("repo", "main", "alice", "refused by the workflow")


def test_a_merge_above_the_threshold_runs_as_a_workflow(g: Engine, repo: object) -> None:
    g.branches.create_branch("repo", "feature", "main")
    _upload(g, "feature", 5)
    g.commits.commit("repo", "feature", "alice", "work")
    runner = _merge_workflow(g)
    g = _with(g, Workflows(merge=runner, merge_threshold=2))
    merged = g.merges.merge("repo", "feature", "main", "bob", "merge it")
    assert merged.parents[1] == g.branches.get_branch("repo", "feature").commit_id
    (name,) = runner._executions
    assert g.merges.merge_status("repo", "main", name).result == merged
    with pytest.raises(errors.NotFound):
        g.merges.merge_status("repo", "feature", name)


@pytest.mark.parametrize("squash", [False, True])
def test_a_merge_execution_that_fails_after_its_move_reports_the_merge_as_landed(
    g: Engine, repo: object, squash: bool
) -> None:
    """As for a commit: the destination moved to the merge commit, then the execution ended FAILED (its post-merge
    step, or the execution cut after the swap). The waiting call and the status answer the merge commit, also once
    another commit landed on top of it."""
    g.branches.create_branch("repo", "feature", "main")
    _upload(g, "feature", 5)
    g.commits.commit("repo", "feature", "alice", "work")

    def execute(payload: dict[str, Any]) -> dict[str, Any]:
        g.merges.steps.run(MergeRequest.from_json(payload["request"]), 2)
        raise errors.StorageError("the post-merge step timed out")

    runner = MemoryWorkflowRunner(execute)
    g = _with(g, Workflows(merge=runner, merge_threshold=2))
    merged = g.merges.merge("repo", "feature", "main", "bob", "merge it", {"k": "v"}, squash_merge=squash)
    assert g.branches.get_branch("repo", "main").commit_id == merged.id
    assert merged.parents[1:] == (() if squash else (g.branches.get_branch("repo", "feature").commit_id,))
    (name,) = runner._executions
    assert runner.describe(name).status == "FAILED"  # type: ignore[union-attr]
    status = g.merges.merge_status("repo", "main", name)
    assert status.completed and status.error is None and status.result == merged
    g.objects.upload_object("repo", "main", "later", b"x")
    g.commits.commit("repo", "main", "alice", "on top")
    assert g.merges.merge_status("repo", "main", name).result == merged


def test_a_merge_execution_that_failed_before_its_move_reports_its_error(g: Engine, repo: object) -> None:
    """Not landed: the error stands, even when an earlier merge of the same source by the same committer is on the
    destination (the request's message and date tell its own commit apart)."""
    g.branches.create_branch("repo", "feature", "main")
    _upload(g, "feature", 5)
    g.commits.commit("repo", "feature", "alice", "work")
    g.merges.merge("repo", "feature", "main", "bob", "merge it")  # inline: below no threshold yet
    _upload(g, "feature", 6)
    g.commits.commit("repo", "feature", "alice", "more work")

    def execute(payload: dict[str, Any]) -> dict[str, Any]:
        raise errors.StorageError("the plan failed")

    runner = MemoryWorkflowRunner(execute)
    g = _with(g, Workflows(merge=runner, merge_threshold=0))
    with pytest.raises(errors.StorageError):
        g.merges.merge("repo", "feature", "main", "bob", "merge it again")
    (name,) = runner._executions
    assert isinstance(g.merges.merge_status("repo", "main", name).error, errors.StorageError)


def test_a_threshold_below_one_page_is_counted_once(g: Engine, repo: object) -> None:
    runner = _commit_workflow(g)
    g, staging = _counting(g, Workflows(commit=runner, commit_threshold=3))
    _upload_keys(g, [f"k{i}" for i in range(5)])
    g.commits.commit("repo", "main", "alice", "5, above 3")
    assert staging.counts == [4] and len(runner._executions) == 1
