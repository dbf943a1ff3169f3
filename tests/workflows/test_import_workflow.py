"""The import state machine on moto's Step Functions interpreter, its Lambda tasks routed to the app's handlers:
several slices in parallel, every task crashing once before and once after its side effect, and a cancel."""

from __future__ import annotations

import json

import boto3
import pytest
from moto import mock_aws

from chalicelib.graveler.imports import CANCELED_MESSAGE, COMPLETED, FAILED, ImportLocation
from chalicelib.settings import Settings
from chalicelib.wiring import get_services, memory_services, set_services
from chalicelib.workflows import imports as import_tasks
from lakelet.stack.stepfunctions_local import (
    MOTO_CONFIG,
    create_state_machines,
    route_item_reads,
    route_lambda_invokes,
)

from .support import crashing_once, run_execution

REGION = "us-east-1"
ALLOWED = "s3://source/allowed/"
SETTINGS = Settings(
    bucket="bucket", range_max_bytes=4000, range_min_bytes=600, range_raggedness=7, import_allowed_locations=(ALLOWED,)
)


@pytest.fixture
def services():
    services = memory_services(SETTINGS, sleep=lambda s: None)
    services.engine.repositories.create_repository("repo", "s3://bucket/repo")
    services.engine.imports.ports.lister.page_size = 50
    for i in range(400):
        services.engine.ports.blocks.put(f"{ALLOWED}data/p{i % 9}/part-{i:05d}", b"x" * (i % 13))
    set_services(services)
    yield services
    set_services(None)


@pytest.fixture
def sfn():
    with mock_aws(config=MOTO_CONFIG):
        yield boto3.client("stepfunctions", region_name=REGION)


def listing(services) -> dict[str, str]:
    g = services.engine
    head = g.commits.get_commit("repo", "main")
    return {r.key: r.entry.physical_address for r in g.ports.committed.iterate("s3://bucket/repo", head.meta_range_id)}


def expected(services) -> dict[str, str]:
    root = ALLOWED + "data/"
    return {"imported/" + a[len(root) :]: a for a in services.engine.ports.blocks.blobs if a.startswith(root)}


def start(services):
    importer = services.engine.imports
    return importer, importer.start(
        "repo", "main", [ImportLocation("common_prefix", ALLOWED + "data/", "imported/")], "alice", "import"
    )


def run(sfn, request, max_slices: int = 6) -> dict:
    arns = create_state_machines(sfn, REGION)
    blocks = get_services().engine.ports.blocks
    # The tasks write to the in-memory block store: the Distributed Map's ItemReader reads the manifest there.
    with route_item_reads(lambda bucket, key: blocks.get(f"s3://{bucket}/{key}")):
        return run_execution(
            sfn, arns["import"], "import-" + request.import_id, {"request": request.to_json(), "max_slices": max_slices}
        )


def test_import_runs_end_to_end_with_several_slices(sfn, services):
    services.engine.objects.upload_object("repo", "main", "imported/stale", b"gone after the import")
    services.engine.objects.upload_object("repo", "main", "kept", b"kept")
    services.engine.commits.commit("repo", "main", "alice", "before")
    importer, request = start(services)
    with route_lambda_invokes(import_tasks.HANDLERS):
        described = run(sfn, request)
    assert described["status"] == "SUCCEEDED", described
    output = json.loads(described["output"])
    assert output["plan"]["slice_count"] == 6 and len(output["built"]) == 6
    # The slices went through the manifest under the namespace's _lakefs/, never through the state.
    manifest = output["plan"]["manifest"]
    assert manifest["bucket"] == "bucket" and manifest["key"].startswith("repo/_lakefs/imports/" + request.import_id)
    assert "slices" not in output["plan"]
    described_map = sfn.describe_state_machine(stateMachineArn=described["stateMachineArn"])
    assert '"DISTRIBUTED"' in described_map["definition"]
    assert listing(services) == {**expected(services), "kept": listing(services)["kept"]}
    status = importer.status("repo", "main", request.import_id)
    assert status.record.state == COMPLETED and status.ingested == 400
    assert (
        status.commit is not None and status.commit.id == services.engine.branches.get_branch("repo", "main").commit_id
    )


@pytest.mark.parametrize("task", sorted(set(import_tasks.HANDLERS) - {"import_fail"}))
@pytest.mark.parametrize("when", ["before", "after"])
def test_each_task_failing_once_converges_without_duplicates(sfn, services, task, when):
    importer, request = start(services)
    failed: list[str] = []
    handlers = {**import_tasks.HANDLERS, task: crashing_once(task, import_tasks.HANDLERS[task], when, failed)}
    with route_lambda_invokes(handlers):
        described = run(sfn, request, max_slices=3)
    assert failed == [task]
    assert described["status"] == "SUCCEEDED", described
    assert listing(services) == expected(services)
    log = services.engine.history.log("repo", "main", amount=100).results
    # The import commit (one parent, as lakeFS's), the first commit: nothing was committed twice.
    assert [len(c.parents) for c in log] == [1, 0]
    assert importer.status("repo", "main", request.import_id).record.state == COMPLETED


def test_a_cancel_in_the_middle_stops_the_workflow_and_leaves_the_branch(sfn, services):
    head = services.engine.branches.get_branch("repo", "main").commit_id
    importer, request = start(services)
    pages: list[int] = []

    def cancel_on_fourth_page() -> None:
        pages.append(1)
        if len(pages) == 4:
            importer.cancel("repo", "main", request.import_id)

    services.engine.imports.ports.lister.before_page = cancel_on_fourth_page
    with route_lambda_invokes(import_tasks.HANDLERS):
        described = run(sfn, request, max_slices=1)
    # The slice failed, so the Distributed Map (which tolerates no failed slice) failed, as in AWS.
    assert described["status"] == "FAILED"
    assert described["error"] == "ImportSliceFailed"
    record = importer.status("repo", "main", request.import_id).record
    assert record.state == FAILED and record.error == CANCELED_MESSAGE
    assert services.engine.branches.get_branch("repo", "main").commit_id == head


def test_a_failing_import_records_the_error(sfn, services):
    importer = services.engine.imports
    request = importer.start("repo", "main", [ImportLocation("object", ALLOWED + "nothing-here", "x")], "a", "m")
    with route_lambda_invokes(import_tasks.HANDLERS):
        described = run(sfn, request)
    assert described["status"] == "FAILED" and described["error"] == "ImportSliceFailed"
    # The map's error says nothing of the slice's: the slice recorded its own before failing.
    record = importer.status("repo", "main", request.import_id).record
    assert record.state == FAILED and "nothing-here" in record.error
