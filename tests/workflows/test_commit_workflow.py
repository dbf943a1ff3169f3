"""The commit state machine on moto's Step Functions interpreter, its Lambda tasks routed to the app's handlers."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import boto3
import pytest
from moto import mock_aws

import app as chalice_app
from chalicelib.adapters.memory import MemoryBlockStore
from chalicelib.graveler.branches.branch_moves import new_staging_token
from chalicelib.graveler.committed import CommittedManager
from chalicelib.graveler.committed.params import RANGE_FORMAT_1
from chalicelib.graveler.identity import new_commit
from chalicelib.graveler.records import (
    EMPTY_METARANGE,
    Branch,
    BranchID,
    Entry,
    Key,
    Repository,
    RepositoryID,
    StagedEntry,
)
from chalicelib.graveler.usecases.repositories import INITIAL_COMMIT_MESSAGE
from chalicelib.graveler.writes.staging import stage
from chalicelib.settings import Settings
from chalicelib.wiring import memory_services, set_services
from chalicelib.workflows import commit as commit_tasks
from chalicelib.workflows import tasks
from lakelet.stack.stepfunctions_local import MOTO_CONFIG, STATE_MACHINES, create_state_machines, route_lambda_invokes

from .support import crashing_once, run_execution

REGION = "us-east-1"
SMALL_RANGES = Settings(bucket="bucket", range_max_bytes=4000, range_min_bytes=600, range_raggedness=7)


@pytest.fixture
def services():
    services = memory_services(SMALL_RANGES, sleep=lambda s: None)
    services.engine.repositories.create_repository("repo", "s3://bucket/repo")
    set_services(services)
    yield services
    set_services(None)


@pytest.fixture
def sfn():
    with mock_aws(config=MOTO_CONFIG):
        yield boto3.client("stepfunctions", region_name=REGION)


def put(services, key: str, version: int = 0) -> None:
    entry = Entry(f"s3://bucket/repo/data/{key}/{version}", 10 + version, f"etag{version}", 1)
    g = services.engine
    stage(g.ports.refs, g.ports.staging, RepositoryID("repo"), BranchID("main"), StagedEntry(Key(key), entry))


def listing(services) -> dict[str, str]:
    g = services.engine
    head = g.commits.get_commit("repo", "main")
    return {r.key: r.entry.physical_address for r in g.ports.committed.iterate("s3://bucket/repo", head.meta_range_id)}


def run(sfn, arn: str, request_id: str, message: str = "workflow", max_slices: int = 4) -> dict:
    request = {
        "repository": "repo",
        "branch": "main",
        "request_id": request_id,
        "committer": "alice",
        "message": message,
        "date": 1_700_000_000,
        "metadata": {},
    }
    return run_execution(sfn, arn, request_id, {"request": request, "max_slices": max_slices})


def key(i: int) -> str:
    return f"data/part-{i:05d}.parquet"


def test_every_task_resource_names_a_function_of_app_py():
    functions = {f.name for f in chalice_app.app.pure_lambda_functions}
    files = sorted(Path(STATE_MACHINES).glob("*.asl.json"))
    assert files
    for path in files:
        resources = _task_resources(json.loads(path.read_text())["States"], in_map=False)
        assert resources
        for resource in resources:
            assert resource.startswith("${") and resource.endswith("}")
            assert resource[2:-1] in functions and resource[2:-1] in tasks.HANDLERS


def _task_resources(states: dict, in_map: bool) -> list[str]:
    """Every Task's resource; each Task retries, and catches unless a Map around it does."""
    found = []
    for state in states.values():
        if state["Type"] == "Task":
            found.append(state["Resource"])
            assert state.get("Retry")
            assert in_map or state.get("Catch")
        if state["Type"] == "Map":
            assert state.get("Catch")
            # An inline Map's Iterator, or a Distributed Map's ItemProcessor (the import's).
            found += _task_resources((state.get("ItemProcessor") or state["Iterator"])["States"], in_map=True)
    return found


def test_state_machine_files_are_created_in_moto(sfn):
    arns = create_state_machines(sfn, REGION)
    assert set(arns) == {p.name.removesuffix(".asl.json") for p in Path(STATE_MACHINES).glob("*.asl.json")}
    described = sfn.describe_state_machine(stateMachineArn=arns["commit"])
    assert "${" not in described["definition"]


def test_commit_runs_end_to_end_with_several_slices(sfn, services):
    g = services.engine
    for i in range(0, 600, 2):
        put(services, key(i))
    g.commits.commit("repo", "main", "alice", "base")
    base_ranges = len(g.ports.committed.ranges("s3://bucket/repo", g.commits.get_commit("repo", "main").meta_range_id))
    assert base_ranges >= 8
    for i in range(0, 620, 5):
        put(services, key(i), 1)
    expected = {**listing(services), **{key(i): f"s3://bucket/repo/data/{key(i)}/1" for i in range(0, 620, 5)}}
    arns = create_state_machines(sfn, REGION)
    with route_lambda_invokes(commit_tasks.HANDLERS):
        described = run(sfn, arns["commit"], "req-1", max_slices=4)
    assert described["status"] == "SUCCEEDED", described
    output = json.loads(described["output"])
    assert len(output["plan"]["slices"]) == 4 and len(output["built"]) == 4
    assert output["finish"]["status"] == "committed"
    assert g.branches.get_branch("repo", "main").commit_id == output["finish"]["commit_id"]
    assert listing(services) == expected
    assert g.branches.get_branch("repo", "main").sealed_tokens == ()
    assert not g.history.is_dirty("repo", "main")


def test_a_commit_with_nothing_staged_fails_without_sealing(sfn, services):
    arns = create_state_machines(sfn, REGION)
    with route_lambda_invokes(commit_tasks.HANDLERS):
        described = run(sfn, arns["commit"], "req-empty")
    assert described["status"] == "FAILED"
    # The Fail state passes the step's own error on: the status endpoint maps it to the same 400 as inline.
    assert described["error"] == "NoChanges"
    assert json.loads(described["cause"])["errorMessage"] == "no changes to commit on branch main"
    assert services.engine.branches.get_branch("repo", "main").sealed_tokens == ()


@pytest.mark.parametrize("task", sorted(commit_tasks.HANDLERS))
@pytest.mark.parametrize("when", ["before", "after"])
def test_each_task_failing_once_converges_without_loss_or_duplicates(sfn, services, task, when):
    g = services.engine
    for i in range(0, 300, 3):
        put(services, key(i))
    g.commits.commit("repo", "main", "alice", "base")
    for i in range(0, 320, 4):
        put(services, key(i), 1)
    expected = {**listing(services), **{key(i): f"s3://bucket/repo/data/{key(i)}/1" for i in range(0, 320, 4)}}
    failed: list[str] = []
    flaky = crashing_once(task, commit_tasks.HANDLERS[task], when, failed)

    arns = create_state_machines(sfn, REGION)
    with route_lambda_invokes({**commit_tasks.HANDLERS, task: flaky}):
        described = run(sfn, arns["commit"], f"req-{task}-{when}", max_slices=3)
    assert failed == [task]
    assert described["status"] == "SUCCEEDED", described
    assert listing(services) == expected
    log = g.history.log("repo", "main").results
    assert [c.message for c in log] == ["workflow", "base", "Repository created"]  # exactly one new commit
    assert g.branches.get_branch("repo", "main").sealed_tokens == ()
    assert not g.history.is_dirty("repo", "main")


def test_two_workflows_racing_and_writes_racing_them(sfn, services):
    g = services.engine
    for i in range(200):
        put(services, key(i))
    arns = create_state_machines(sfn, REGION)
    acknowledged = [key(i) for i in range(200)]
    stop = threading.Event()

    def writer() -> None:
        n = 0
        while not stop.is_set() and n < 200:
            put(services, f"late/{n:04d}")
            acknowledged.append(f"late/{n:04d}")
            n += 1

    with route_lambda_invokes(commit_tasks.HANDLERS):
        thread = threading.Thread(target=writer)
        thread.start()
        results: list[dict] = []
        racers = [
            threading.Thread(target=lambda n=n: results.append(run(sfn, arns["commit"], f"race-{n}", f"race {n}")))
            for n in range(2)
        ]
        for racer in racers:
            racer.start()
        for racer in racers:
            racer.join()
        stop.set()
        thread.join()
    # Each answers its own request: a commit of its own, or "no changes" when the other took its sealed token.
    assert "SUCCEEDED" in [r["status"] for r in results], results
    assert all(r["status"] == "SUCCEEDED" or r.get("error") == "NoChanges" for r in results), results
    messages = [c.message for c in g.history.log("repo", "main").results]
    assert sum(1 for r in results if r["status"] == "SUCCEEDED") == sum(1 for m in messages if m.startswith("race"))
    committed = set(listing(services))
    staged = {d.key for d in g.history.diff_uncommitted("repo", "main", amount=None).results}
    assert set(acknowledged) <= committed | staged
    assert committed >= {key(i) for i in range(200)}
    g.commits.commit("repo", "main", "alice", "rest", allow_empty=True)
    assert set(listing(services)) == set(acknowledged)


def test_a_rerun_of_a_finished_commit_duplicates_nothing(sfn, services):
    g = services.engine
    for i in range(50):
        put(services, key(i))
    arns = create_state_machines(sfn, REGION)
    with route_lambda_invokes(commit_tasks.HANDLERS):
        first = run(sfn, arns["commit"], "once")
        head = g.branches.get_branch("repo", "main").commit_id
        # The same execution name again: Step Functions refuses it once the execution has ended.
        with pytest.raises(sfn.exceptions.ExecutionAlreadyExists):
            run(sfn, arns["commit"], "once")
        # Committing again (a client retrying after a lost answer): nothing is staged, no second commit.
        again = run(sfn, arns["commit"], "once-again")
    assert first["status"] == "SUCCEEDED"
    assert again["status"] == "FAILED" and again["error"] == "NoChanges"
    assert g.branches.get_branch("repo", "main").commit_id == head
    assert [c.message for c in g.history.log("repo", "main").results] == ["workflow", "Repository created"]


def test_the_workflow_cuts_a_format_1_repository_with_format_1(sfn):
    """The slices and the finish run in other Lambdas: the plan carries the repository's range format to them."""
    services = memory_services(SMALL_RANGES, sleep=lambda s: None)
    g, rid = services.engine, RepositoryID("repo")
    # As a release before range formats stored it: no format on the record.
    initial = new_commit("", INITIAL_COMMIT_MESSAGE, EMPTY_METARANGE, 1_700_000_000.0, {}, (), 1)
    g.ports.refs.add_commit(rid, initial)
    g.ports.refs.create_branch(rid, Branch(BranchID("main"), initial.id, new_staging_token("repo", "main")))
    g.ports.refs.create_repository(Repository(rid, "s3://bucket/repo", BranchID("main"), 1_700_000_000, generation="g"))
    set_services(services)
    try:
        for i in range(600):
            put(services, key(i))
        arns = create_state_machines(sfn, REGION)
        with route_lambda_invokes(commit_tasks.HANDLERS):
            described = run(sfn, arns["commit"], "req-old", max_slices=4)
    finally:
        set_services(None)
    assert described["status"] == "SUCCEEDED", described
    output = json.loads(described["output"])
    assert len(output["plan"]["slices"]) > 1
    assert {s["range_format"] for s in output["plan"]["slices"]} == {1}
    head = g.commits.get_commit("repo", "main")
    records = list(g.ports.committed.iterate("s3://bucket/repo", head.meta_range_id))
    scratch = CommittedManager(MemoryBlockStore(), RANGE_FORMAT_1)
    expected = scratch.ranges("s3://bucket/repo", scratch.write_metarange("s3://bucket/repo", records))
    # One range under format 1, where the deployment's (small) format-2 params would cut dozens.
    assert [r.id for r in g.ports.committed.ranges("s3://bucket/repo", head.meta_range_id)] == [r.id for r in expected]
    assert len(expected) == 1
