"""The embedded stack creates the state machines from stepfunctions/ and runs them on moto's interpreter,
with the Lambda tasks routed to the app's in-process handlers."""

from __future__ import annotations

import base64
import copy
import json
import os
import time
import urllib.error
import urllib.request
from typing import Any

import boto3
import lakefs
import pytest
from lakefs.client import Client
from moto.core.config import default_user_config

from chalicelib.graveler.records import BranchID, Entry, Key, RepositoryID, StagedEntry
from chalicelib.graveler.writes.staging import stage
from chalicelib.wiring import get_services
from lakelet.stack.app_environment import Credentials
from lakelet.stack.local import LocalStack

KEYS = Credentials("AKIAIOSFODNN7WORKFLOW", "workflow-secret-key")
_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def test_the_local_stack_runs_the_commit_workflow() -> None:
    config_before = copy.deepcopy(dict(default_user_config))
    with LocalStack(api_port=0, credentials=KEYS) as stack:
        arn = os.environ["LAKELET_COMMIT_STATE_MACHINE_ARN"]
        g = get_services().engine
        g.repositories.create_repository("wflow", f"{stack.default_namespace_prefix}/wflow")
        for i in range(30):
            entry = Entry(f"{stack.default_namespace_prefix}/wflow/data/{i}", i, f"etag{i}", 1)
            stage(
                g.ports.refs,
                g.ports.staging,
                RepositoryID("wflow"),
                BranchID("main"),
                StagedEntry(Key(f"k/{i:03d}"), entry),
            )
        sfn = boto3.client("stepfunctions", region_name=stack.region, endpoint_url=stack.moto_url)
        request = {
            "repository": "wflow",
            "branch": "main",
            "request_id": "local-1",
            "committer": "admin",
            "message": "through the local workflow",
            "date": 1_700_000_000,
            "metadata": {},
        }
        execution = sfn.start_execution(stateMachineArn=arn, name="local-1", input=json.dumps({"request": request}))[
            "executionArn"
        ]
        for _ in range(400):
            described = sfn.describe_execution(executionArn=execution)
            if described["status"] != "RUNNING":
                break
            time.sleep(0.05)
        history = [
            e
            for e in sfn.get_execution_history(executionArn=execution)["events"]
            if "Failed" in e["type"] or "Map" in e["type"]
        ]
        assert described["status"] == "SUCCEEDED", json.dumps(history, default=str)[:3000]
        head = g.commits.get_commit("wflow", "main")
        assert head.message == "through the local workflow"
        assert len(list(g.ports.committed.iterate(f"{stack.default_namespace_prefix}/wflow", head.meta_range_id))) == 30
    assert "LAKELET_COMMIT_STATE_MACHINE_ARN" not in os.environ
    assert dict(default_user_config) == config_before  # moto's process-wide config is given back


def _call(method: str, url: str, body: dict[str, Any] | None = None) -> tuple[int, dict[str, Any]]:
    """One lakeFS API request over HTTP with the stack's admin key pair (HTTP Basic); the status and JSON."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method)
    token = base64.b64encode(f"{KEYS.access_key_id}:{KEYS.secret_access_key}".encode()).decode()
    request.add_header("Authorization", f"Basic {token}")
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with _NO_PROXY.open(request, timeout=30) as response:
            return int(response.status), json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


def test_an_async_commit_over_http_runs_the_workflow(monkeypatch: pytest.MonkeyPatch) -> None:
    # Above this many staged changes POST .../commits/async hands the commit to the state machine.
    monkeypatch.setenv("LAKELET_COMMIT_WORKFLOW_THRESHOLD", "5")
    with LocalStack(api_port=0, credentials=KEYS) as stack:
        g = get_services().engine
        g.repositories.create_repository("asyncrepo", f"{stack.default_namespace_prefix}/asyncrepo")
        keys = [f"k/{i:03d}" for i in range(30)]
        for i, key in enumerate(keys):
            entry = Entry(f"{stack.default_namespace_prefix}/asyncrepo/data/{i}", i, f"etag{i}", 1)
            stage(
                g.ports.refs, g.ports.staging, RepositoryID("asyncrepo"), BranchID("main"), StagedEntry(Key(key), entry)
            )
        branch_url = stack.api_url + "/repositories/asyncrepo/branches/main"

        status, created = _call(
            "POST", branch_url + "/commits/async", {"message": "async over http", "metadata": {"via": "http"}}
        )
        assert status == 202, created
        task_id = created["id"]
        assert task_id.startswith("w-")  # 30 staged changes > 5: a workflow execution, not an inline commit
        for _ in range(600):
            status, answer = _call("GET", branch_url + "/commits/status?id=" + task_id)
            assert status == 200, answer
            if answer["completed"]:
                break
            time.sleep(0.05)
        assert answer["completed"], answer
        assert answer["task_id"] == task_id and "error" not in answer, answer
        commit = answer["result"]
        assert commit["message"] == "async over http" and commit["metadata"] == {"via": "http"}
        assert commit["committer"] == "admin"

        assert g.branches.get_branch("asyncrepo", "main").commit_id == commit["id"]
        status, branch = _call("GET", branch_url)
        assert status == 200 and branch["commit_id"] == commit["id"]
        committed = [
            record.key
            for record in g.ports.committed.iterate(
                f"{stack.default_namespace_prefix}/asyncrepo",
                g.commits.get_commit("asyncrepo", commit["id"]).meta_range_id,
            )
        ]
        assert committed == keys
        assert not g.history.is_dirty("asyncrepo", "main")
        status, missing = _call("GET", branch_url + "/commits/status?id=w-no-such-task")
        assert status == 404, missing


def _executions(stack: LocalStack, machine: str) -> list[str]:
    sfn = boto3.client("stepfunctions", region_name=stack.region, endpoint_url=stack.moto_url)
    arn = os.environ[f"LAKELET_{machine.upper()}_STATE_MACHINE_ARN"]
    return [e["name"] for e in sfn.list_executions(stateMachineArn=arn)["executions"]]


def test_the_official_client_commits_and_merges_through_the_workflows(monkeypatch: pytest.MonkeyPatch) -> None:
    """lakeFS's own client, unchanged: its synchronous commit and merge calls wait for the workflows."""
    monkeypatch.setenv("LAKELET_COMMIT_WORKFLOW_THRESHOLD", "5")
    monkeypatch.setenv("LAKELET_MERGE_WORKFLOW_THRESHOLD", "5")
    with LocalStack(api_port=0, credentials=KEYS) as stack:
        client = Client(
            host=stack.api_url.removesuffix("/api/v1"), username=KEYS.access_key_id, password=KEYS.secret_access_key
        )
        repo = lakefs.Repository("clientflows", client=client).create(
            storage_namespace=f"{stack.default_namespace_prefix}/clientflows"
        )
        # The stack's state machines may hold executions of earlier stacks of this process: count new ones.
        commits, merges = len(_executions(stack, "commit")), len(_executions(stack, "merge"))
        main = repo.branch("main")
        main.object("base.txt").upload(data=b"base")
        main.commit("base")  # one staged change: inline
        assert len(_executions(stack, "commit")) == commits
        feature = repo.branch("feature").create(source_reference="main")
        for i in range(12):
            feature.object(f"f/{i:02d}.txt").upload(data=b"f%d" % i)
        committed = feature.commit("twelve objects", metadata={"k": "v"})  # 12 > 5: the commit workflow
        assert len(_executions(stack, "commit")) == commits + 1
        assert committed.get_commit().metadata == {"k": "v"}
        main.object("main.txt").upload(data=b"m")
        main.commit("main work")
        merged = feature.merge_into(main, message="merge through the workflow")
        assert len(_executions(stack, "merge")) == merges + 1
        head = main.get_commit()
        assert merged == head.id and head.message == "merge through the workflow"
        assert head.parents[1] == committed.get_commit().id
        assert sorted(o.path for o in main.objects()) == [
            "base.txt",
            *[f"f/{i:02d}.txt" for i in range(12)],
            "main.txt",
        ]
        assert main.object("f/07.txt").reader().read() == b"f7"
