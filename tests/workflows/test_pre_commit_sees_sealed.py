"""The commit workflow runs the pre-commit hooks in its seal step, after the seal: the hooks judge exactly what the
commit takes, and a change staged while they run goes to the next commit."""

from __future__ import annotations

import json

import boto3
from moto import mock_aws

from chalicelib.graveler.actions import HookOutcome
from chalicelib.graveler.commit import CommitRequest
from chalicelib.workflows import commit as commit_tasks
from lakelet.stack.stepfunctions_local import MOTO_CONFIG, create_state_machines, route_lambda_invokes

from .support import run_execution
from .test_hooks_workflows import install
from .test_merge_workflow import DATE, put, services  # noqa: F401 (fixtures)


def test_a_change_staged_while_the_pre_commit_hook_runs_stays_staged(services):  # noqa: F811
    recorder = install(services, ["pre-commit"])
    staged_during: list[str] = []
    invoke = recorder.invoke

    def stage_while_judging(hook, payload, timeout_seconds):
        outcome = invoke(hook, payload, timeout_seconds)
        if json.loads(payload)["event_type"] == "pre-commit" and not staged_during:
            services.engine.objects.upload_object("repo", "main", "forbidden/z", b"z")
            staged_during.append("forbidden/z")
        return outcome

    recorder.invoke = stage_while_judging  # type: ignore[method-assign]
    put(services, "main", "data/x", 1)
    req = CommitRequest("repo", "main", "commit-pre-hook", "alice", "via workflow", DATE, {})
    with mock_aws(config=MOTO_CONFIG):
        sfn = boto3.client("stepfunctions", region_name="us-east-1")
        machine = create_state_machines(sfn, "us-east-1")["commit"]
        with route_lambda_invokes(commit_tasks.HANDLERS):
            described = run_execution(sfn, machine, req.request_id, {"request": req.to_json(), "max_slices": 2})
    assert described["status"] == "SUCCEEDED", described
    assert staged_during == ["forbidden/z"]
    assert [p["event_type"] for p in recorder.payloads] == ["pre-commit"]
    g = services.engine
    head = g.branches.get_branch("repo", "main").commit_id
    committed = [str(o.key) for o in g.objects.list_objects("repo", head, amount=100).results]
    assert "data/x" in committed and "forbidden/z" not in committed
    assert [str(d.key) for d in g.history.diff_uncommitted("repo", "main").results] == ["forbidden/z"]


def test_a_refusing_pre_commit_hook_fails_the_workflow_and_leaves_the_changes_staged(services):  # noqa: F811
    recorder = install(services, ["pre-commit"])
    recorder.invoke = lambda hook, payload, timeout_seconds: HookOutcome(False, "refused")  # type: ignore[method-assign]
    put(services, "main", "data/x", 1)
    before = services.engine.branches.get_branch("repo", "main").commit_id
    req = CommitRequest("repo", "main", "commit-pre-hook-refused", "alice", "via workflow", DATE, {})
    with mock_aws(config=MOTO_CONFIG):
        sfn = boto3.client("stepfunctions", region_name="us-east-1")
        machine = create_state_machines(sfn, "us-east-1")["commit"]
        with route_lambda_invokes(commit_tasks.HANDLERS):
            described = run_execution(sfn, machine, req.request_id, {"request": req.to_json(), "max_slices": 2})
    assert described["status"] == "FAILED", described
    assert described.get("error") == "HookAborted", described
    g = services.engine
    assert g.branches.get_branch("repo", "main").commit_id == before
    assert [str(d.key) for d in g.history.diff_uncommitted("repo", "main").results] == ["data/x"]
