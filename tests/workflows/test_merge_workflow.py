"""The merge state machine on moto's Step Functions interpreter, its Lambda tasks routed to the app's handlers."""

from __future__ import annotations

import json
import threading
import time

import boto3
import pytest
from moto import mock_aws

from chalicelib.graveler.merge import MergeRequest, conflicts_address
from chalicelib.graveler.records import BranchID, Entry, Key, RepositoryID, StagedEntry
from chalicelib.graveler.writes.staging import stage
from chalicelib.settings import Settings
from chalicelib.wiring import memory_services, set_services
from chalicelib.workflows import merge as merge_tasks
from lakelet.stack.stepfunctions_local import MOTO_CONFIG, create_state_machines, route_lambda_invokes

from .support import crashing_once, run_execution

REGION = "us-east-1"
NS = "s3://bucket/repo"
SMALL_RANGES = Settings(bucket="bucket", range_max_bytes=4000, range_min_bytes=600, range_raggedness=7)
DATE = 1_700_000_000


@pytest.fixture
def services():
    services = memory_services(SMALL_RANGES, sleep=lambda s: None)
    services.engine.repositories.create_repository("repo", NS)
    set_services(services)
    yield services
    set_services(None)


@pytest.fixture
def arn():
    with mock_aws(config=MOTO_CONFIG):
        sfn = boto3.client("stepfunctions", region_name=REGION)
        yield sfn, create_state_machines(sfn, REGION)["merge"]


def address(k: str, version: int) -> str:
    return f"{NS}/data/{k}/{version}"


def put(services, branch: str, k: str, version: int | None) -> None:
    g = services.engine
    entry = None if version is None else Entry(address(k, version), 10 + version, f"etag{version}", 1)
    stage(g.ports.refs, g.ports.staging, RepositoryID("repo"), BranchID(branch), StagedEntry(Key(k), entry))


def listing(services, ref: str = "main") -> dict[str, str]:
    g = services.engine
    head = g.commits.get_commit("repo", ref)
    return {r.key: r.entry.physical_address for r in g.ports.committed.iterate(NS, head.meta_range_id)}


def key(i: int) -> str:
    return f"data/part-{i:05d}.parquet"


MAIN_CHANGES = [i for i in range(3, 600, 11) if i % 7 and i % 50]


def scenario(services, source: str = "feature", conflict: bool = False) -> dict[str, str]:
    """main: 600 keys; the source branch changes every 7th and deletes every 50th; main changes every 11th
    that the source leaves alone (and, with ``conflict``, one key the source changed too). The listing the
    merge should make."""
    g = services.engine
    for i in range(600):
        put(services, "main", key(i), 0)
    g.commits.commit("repo", "main", "alice", "base")
    g.branches.create_branch("repo", source, "main")
    for i in range(0, 600, 7):
        put(services, source, key(i), 1)
    for i in range(0, 600, 50):
        put(services, source, key(i), None)
    g.commits.commit("repo", source, "alice", "source work")
    for i in MAIN_CHANGES:
        put(services, "main", key(i), 2)
    if conflict:
        put(services, "main", key(7), 2)
    g.commits.commit("repo", "main", "alice", "main work")
    expected = {key(i): address(key(i), 0) for i in range(600)}
    expected.update({key(i): address(key(i), 1) for i in range(0, 600, 7)})
    expected.update({key(i): address(key(i), 2) for i in MAIN_CHANGES})
    for i in range(0, 600, 50):
        expected.pop(key(i))
    return expected


def request(services, request_id: str, source: str = "feature", message: str = "") -> MergeRequest:
    commit = services.engine.commits.get_commit("repo", source)
    return MergeRequest("repo", source, commit.id, "main", request_id, "alice", message, DATE)


def run(arn, merge: MergeRequest, max_slices: int = 4) -> dict:
    sfn, machine = arn
    return run_execution(sfn, machine, merge.request_id, {"request": merge.to_json(), "max_slices": max_slices})


def test_merge_runs_end_to_end_with_several_slices(arn, services):
    expected = scenario(services)
    g = services.engine
    dest, source = g.commits.get_commit("repo", "main"), g.commits.get_commit("repo", "feature")
    with route_lambda_invokes(merge_tasks.HANDLERS):
        described = run(arn, request(services, "merge-1"))
    assert described["status"] == "SUCCEEDED", described
    output = json.loads(described["output"])
    assert len(output["plan"]["slices"]) == 4 and len(output["built"]) == 4
    assert listing(services) == expected
    head = g.commits.get_commit("repo", "main")
    assert head.id == output["finish"]["commit_id"]
    assert head.parents == (dest.id, source.id) and head.message == "Merge 'feature' into 'main'"
    assert head.metadata == {".lakefs.merge.strategy": "default"}
    assert g.branches.get_branch("repo", "main").sealed_tokens == ()


def test_conflicts_fail_the_execution_and_keep_the_branch(arn, services):
    scenario(services, conflict=True)
    g = services.engine
    before = g.branches.get_branch("repo", "main")
    with route_lambda_invokes(merge_tasks.HANDLERS):
        described = run(arn, request(services, "merge-conflict"))
    assert described["status"] == "FAILED"
    assert described["error"] == "MergeConflicts"
    assert "1 conflicting path" in json.loads(described["cause"])["errorMessage"]
    assert g.branches.get_branch("repo", "main") == before
    kept = json.loads(g.ports.blocks.get(conflicts_address(NS, "merge-conflict")))
    assert kept == {"conflicts": [{"path": key(7), "source": "changed", "destination": "changed"}]}


@pytest.mark.parametrize("task", sorted(merge_tasks.HANDLERS))
@pytest.mark.parametrize("when", ["before", "after"])
def test_each_task_failing_once_converges_without_loss_or_duplicates(arn, services, task, when):
    expected = scenario(services)
    g = services.engine
    put(services, "main", key(3), 2)  # a staged entry that changes nothing: the plan seals it, the swap drops it
    failed: list[str] = []
    flaky = crashing_once(task, merge_tasks.HANDLERS[task], when, failed)

    with route_lambda_invokes({**merge_tasks.HANDLERS, task: flaky}):
        described = run(arn, request(services, f"merge-{task}-{when}"), max_slices=3)
    assert failed == [task]
    assert described["status"] == "SUCCEEDED", described
    assert listing(services) == expected
    log = [c.message for c in g.history.log("repo", "main").results]
    assert log.count("Merge 'feature' into 'main'") == 1
    assert g.branches.get_branch("repo", "main").sealed_tokens == ()
    assert not g.history.is_dirty("repo", "main")


def test_two_merges_racing_into_one_branch_both_land(arn, services):
    expected = scenario(services)
    g = services.engine
    g.branches.create_branch("repo", "other", "main~1")
    put(services, "other", "other/only", 5)
    g.commits.commit("repo", "other", "alice", "other work")
    results: list[dict] = []
    with route_lambda_invokes(merge_tasks.HANDLERS):
        racers = [
            threading.Thread(target=lambda s=s: results.append(run(arn, request(services, f"race-{s}", s))))
            for s in ("feature", "other")
        ]
        for racer in racers:
            racer.start()
        for racer in racers:
            racer.join()
    assert [r["status"] for r in results] == ["SUCCEEDED", "SUCCEEDED"], results
    assert listing(services) == {**expected, "other/only": address("other/only", 5)}
    head = g.commits.get_commit("repo", "main")
    first_parent = g.commits.get_commit("repo", head.parents[0])
    assert sorted([head.message, first_parent.message]) == ["Merge 'feature' into 'main'", "Merge 'other' into 'main'"]


def test_writes_racing_a_merge_are_never_lost(arn, services):
    """Writes to the destination while the merge runs: the merge either refuses the dirty branch or lands, and
    every acknowledged write is still staged afterwards (a merge never commits staged changes)."""
    scenario(services)
    g = services.engine
    head = g.branches.get_branch("repo", "main").commit_id
    acknowledged: list[str] = []
    stop = threading.Event()

    def writer() -> None:
        n = 0
        while not stop.is_set() and n < 300:
            put(services, "main", f"late/{n:04d}", 1)
            acknowledged.append(f"late/{n:04d}")
            n += 1
            time.sleep(0.001)

    with route_lambda_invokes(merge_tasks.HANDLERS):
        thread = threading.Thread(target=writer)
        thread.start()
        time.sleep(0.01)
        described = run(arn, request(services, "merge-racing"))
        stop.set()
        thread.join()
    assert described["status"] in ("SUCCEEDED", "FAILED")
    if described["status"] == "FAILED":
        assert described["error"] == "DirtyBranch"
        assert g.branches.get_branch("repo", "main").commit_id == head
    # Up to 300 writes: one page of 1,000 holds them all (amount=None is the default page of 100).
    staged = {d.key for d in g.history.diff_uncommitted("repo", "main", amount=1000).results}
    assert set(acknowledged) == staged
    assert not set(acknowledged) & set(listing(services))


def test_a_rerun_of_a_finished_merge_duplicates_nothing(arn, services):
    expected = scenario(services)
    g = services.engine
    merge = request(services, "merge-once")
    with route_lambda_invokes(merge_tasks.HANDLERS):
        first = run(arn, merge)
        head = g.branches.get_branch("repo", "main").commit_id
        again = run(arn, MergeRequest.from_json({**merge.to_json(), "request_id": "merge-once-again"}))
    assert first["status"] == "SUCCEEDED"
    assert again["status"] == "FAILED" and again["error"] == "NoChanges"  # everything is merged already
    assert g.branches.get_branch("repo", "main").commit_id == head
    assert listing(services) == expected


def test_a_merge_that_needs_no_range_read_runs_an_empty_map(arn, services):
    g = services.engine
    for i in range(100):
        put(services, "main", key(i), 0)
    g.commits.commit("repo", "main", "alice", "base")
    g.branches.create_branch("repo", "feature", "main")
    put(services, "feature", key(5), 1)
    g.commits.commit("repo", "feature", "alice", "one change")
    with route_lambda_invokes(merge_tasks.HANDLERS):
        described = run(arn, request(services, "merge-ff"))
    assert described["status"] == "SUCCEEDED", described
    output = json.loads(described["output"])
    assert output["plan"]["slices"] == [] and output["built"] == []
    head = g.commits.get_commit("repo", "main")
    assert head.meta_range_id == g.commits.get_commit("repo", "feature").meta_range_id
    assert len(head.parents) == 2
