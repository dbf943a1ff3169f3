"""Hooks in the commit and merge workflows: post-hooks run in the last step (Drop), after the branch moved, once
per request even when that step is retried."""

from __future__ import annotations

import json

import yaml

from chalicelib.graveler.actions import HookOutcome
from chalicelib.graveler.commit import CommitRequest
from chalicelib.workflows import commit as commit_tasks
from chalicelib.workflows import merge as merge_tasks
from lakelet.stack.stepfunctions_local import route_lambda_invokes

from .support import crashing_once, run_execution
from .test_merge_workflow import DATE, arn, put, request, run, scenario, services  # noqa: F401 (fixtures)


class Recorder:
    def __init__(self) -> None:
        self.payloads: list[dict] = []

    def invoke(self, hook, payload, timeout_seconds):
        self.payloads.append(json.loads(payload))
        return HookOutcome(True, "ok")


def install(deployed, events: list[str]) -> Recorder:
    recorder = Recorder()
    deployed.engine.ports.hooks.invokers = {"webhook": recorder}
    doc = yaml.safe_dump(
        {
            "name": "wf",
            "on": dict.fromkeys(events),
            "hooks": [{"id": "seen", "type": "webhook", "properties": {"url": "http://127.0.0.1:9/"}}],
        }
    )
    deployed.engine.objects.upload_object("repo", "main", "_lakefs_actions/wf.yaml", doc.encode())
    deployed.engine.commits.commit("repo", "main", "alice", "actions")
    recorder.payloads.clear()  # the commit of the action file runs its own post-commit hook
    return recorder


def test_post_merge_hook_runs_once_in_the_workflow_despite_a_retried_landed_step(arn, services):  # noqa: F811
    recorder = install(services, ["post-merge"])
    scenario(services)
    failed: list[str] = []
    handlers = dict(merge_tasks.HANDLERS)
    handlers["merge_landed"] = crashing_once("merge_landed", handlers["merge_landed"], "after", failed)
    with route_lambda_invokes(handlers):
        described = run(arn, request(services, "merge-hooks"))
    assert described["status"] == "SUCCEEDED", described
    commit_id = json.loads(described["output"])["finish"]["commit_id"]
    assert [(p["event_type"], p["commit_id"]) for p in recorder.payloads] == [("post-merge", commit_id)]
    namespace = services.engine.repositories.get_repository("repo").storage_namespace
    runs = services.engine.ports.hooks.store.list(namespace).results
    assert (runs[0].event_type, runs[0].commit_id) == ("post-merge", commit_id)


def test_post_commit_hook_runs_in_the_commit_workflow(services):  # noqa: F811
    import boto3
    from moto import mock_aws

    from lakelet.stack.stepfunctions_local import MOTO_CONFIG, create_state_machines

    recorder = install(services, ["post-commit"])
    put(services, "main", "data/x", 1)
    req = CommitRequest("repo", "main", "commit-hooks", "alice", "via workflow", DATE, {"k": "v"})
    with mock_aws(config=MOTO_CONFIG):
        sfn = boto3.client("stepfunctions", region_name="us-east-1")
        machine = create_state_machines(sfn, "us-east-1")["commit"]
        with route_lambda_invokes(commit_tasks.HANDLERS):
            described = run_execution(sfn, machine, req.request_id, {"request": req.to_json(), "max_slices": 2})
    assert described["status"] == "SUCCEEDED", described
    head = services.engine.branches.get_branch("repo", "main").commit_id
    assert [(p["event_type"], p["commit_id"], p["commit_metadata"]) for p in recorder.payloads] == [
        ("post-commit", head, {"k": "v"})
    ]


def test_pre_commit_run_gets_the_commit_id_in_the_commit_workflow(services):  # noqa: F811
    """The seal step hands its pre-commit run on; the landed step writes the commit's id onto it (lakeFS's
    PostCommitHook), so the commit's runs list the run that judged it."""
    import boto3
    from moto import mock_aws

    from lakelet.stack.stepfunctions_local import MOTO_CONFIG, create_state_machines

    install(services, ["pre-commit"])
    put(services, "main", "data/x", 1)
    req = CommitRequest("repo", "main", "commit-pre-run", "alice", "via workflow", DATE, {})
    with mock_aws(config=MOTO_CONFIG):
        sfn = boto3.client("stepfunctions", region_name="us-east-1")
        machine = create_state_machines(sfn, "us-east-1")["commit"]
        with route_lambda_invokes(commit_tasks.HANDLERS):
            described = run_execution(sfn, machine, req.request_id, {"request": req.to_json(), "max_slices": 2})
    assert described["status"] == "SUCCEEDED", described
    head = services.engine.branches.get_branch("repo", "main").commit_id
    namespace = services.engine.repositories.get_repository("repo").storage_namespace
    runs = services.engine.ports.hooks.store.list(namespace, commit_id=head).results
    assert [(r.event_type, r.commit_id) for r in runs] == [("pre-commit", head)]
