"""Branch protection in the workflows: the commit state machine refuses a protected branch at its first step (and
the status endpoints report it as the inline commit would, 403), the merge state machine merges into one."""

from __future__ import annotations

import json

import boto3
import pytest
from moto import mock_aws

from chalicelib.api.errors import message_for, status_for
from chalicelib.graveler import errors
from chalicelib.graveler.merge import MergeRequest
from chalicelib.graveler.ports import Execution
from chalicelib.graveler.reads.shared import Reads
from chalicelib.graveler.records import BranchID, Entry, Key, RepositoryID, StagedEntry
from chalicelib.graveler.runs import workflow_runner
from chalicelib.graveler.writes.staging import stage
from chalicelib.wiring import memory_services, set_services
from chalicelib.workflows import commit as commit_tasks
from chalicelib.workflows import merge as merge_tasks
from lakelet.stack.stepfunctions_local import (
    MOTO_CONFIG,
    create_state_machines,
    route_lambda_invokes,
)

from .support import run_execution

REGION = "us-east-1"
NS = "s3://bucket/repo"


@pytest.fixture
def services():
    services = memory_services(sleep=lambda s: None)
    services.engine.repositories.create_repository("repo", NS)
    set_services(services)
    yield services
    set_services(None)


def put(services, branch: str, key: str) -> None:
    g = services.engine
    entry = Entry(f"{NS}/data/{branch}/{key}", 10, "etag", 1)
    stage(g.ports.refs, g.ports.staging, RepositoryID("repo"), BranchID(branch), StagedEntry(Key(key), entry))


def test_the_commit_workflow_refuses_a_protected_branch_and_merges_go_through(services):
    g = services.engine
    put(services, "main", "base")
    g.commits.commit("repo", "main", "alice", "base")
    g.branches.create_branch("repo", "feature", "main")
    put(services, "feature", "f")
    g.commits.commit("repo", "feature", "alice", "feature work")
    put(services, "main", "staged-on-main")
    assert g.ports.protection is not None
    g.ports.protection.set_rules(g.repositories.get_repository("repo"), ["mai?"])
    head = g.branches.get_branch("repo", "main")

    commit_request = {
        "repository": "repo",
        "branch": "main",
        "request_id": "c-1",
        "committer": "alice",
        "message": "direct",
        "date": 1_700_000_000,
        "metadata": {},
    }
    merge_request = MergeRequest(
        "repo",
        "feature",
        g.commits.get_commit("repo", "feature").id,
        "main",
        "m-1",
        "alice",
        "",
        1_700_000_000,
        {},
        None,
        (),
        False,
        False,
        False,
    )
    with mock_aws(config=MOTO_CONFIG):
        sfn = boto3.client("stepfunctions", region_name=REGION)
        arns = create_state_machines(sfn, REGION)
        with route_lambda_invokes({**commit_tasks.HANDLERS, **merge_tasks.HANDLERS}):
            refused = run_execution(sfn, arns["commit"], "c-1", {"request": commit_request, "max_slices": 2})
            after_refusal = g.branches.get_branch("repo", "main")
            # The staged change on main keeps the merge from moving it: reset it away first, as a user must.
            g.ports.staging.drop(head.staging_token)
            merged = run_execution(sfn, arns["merge"], "m-1", {"request": merge_request.to_json(), "max_slices": 2})

    assert refused["status"] == "FAILED" and refused["error"] == "CommitToProtectedBranch"
    assert json.loads(refused["cause"])["errorMessage"] == "cannot commit to protected branch"
    # Refused before sealing: the branch is as it was.
    assert after_refusal == head
    # What the task status endpoint makes of the failed execution: the inline commit's 403.
    runner = workflow_runner.Runner(g.ports, Reads(g.ports), g.commits.steps, g.merges.steps)
    failure = runner.failure(
        "repo", "w-c-1", Execution(refused["status"], 0.0, None, refused["error"], refused["cause"])
    )
    assert isinstance(failure, errors.CommitToProtectedBranch)
    assert (status_for(failure), message_for(failure)) == (403, "cannot commit to protected branch")

    assert merged["status"] == "SUCCEEDED", merged
    main = g.commits.get_commit("repo", "main")
    assert main.id == json.loads(merged["output"])["finish"]["commit_id"]
    assert [o.key for o in g.objects.list_objects("repo", "main").results] == ["base", "f"]
    with pytest.raises(errors.CommitToProtectedBranch):
        commit_tasks.seal({"request": commit_request})
