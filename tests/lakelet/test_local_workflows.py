"""The embedded stack creates the state machines from stepfunctions/ and runs them on moto's interpreter,
with the Lambda tasks routed to the app's in-process handlers."""

from __future__ import annotations

import copy
import json
import os
import time

import boto3
from moto.core.config import default_user_config

from chalicelib.graveler.records import BranchID, Entry, Key, RepositoryID, StagedEntry
from chalicelib.graveler.staging import stage
from chalicelib.wiring import get_services
from lakelet.local import Credentials, LocalStack

KEYS = Credentials("AKIAIOSFODNN7WORKFLOW", "workflow-secret-key")


def test_the_local_stack_runs_the_commit_workflow() -> None:
    config_before = copy.deepcopy(dict(default_user_config))
    with LocalStack(api_port=0, credentials=KEYS) as stack:
        arn = os.environ["LAKELET_COMMIT_STATE_MACHINE_ARN"]
        g = get_services().graveler
        g.create_repository("wflow", stack.default_namespace_prefix + "wflow")
        for i in range(30):
            entry = Entry(f"{stack.default_namespace_prefix}wflow/data/{i}", i, f"etag{i}", 1)
            stage(g.refs, g.staging, RepositoryID("wflow"), BranchID("main"), StagedEntry(Key(f"k/{i:03d}"), entry))
        sfn = boto3.client("stepfunctions", region_name=stack.region, endpoint_url=stack.moto_url)
        request = {"repository": "wflow", "branch": "main", "request_id": "local-1", "committer": "admin",
                   "message": "through the local workflow", "date": 1_700_000_000, "metadata": {}}
        execution = sfn.start_execution(stateMachineArn=arn, name="local-1",
                                        input=json.dumps({"request": request}))["executionArn"]
        for _ in range(400):
            described = sfn.describe_execution(executionArn=execution)
            if described["status"] != "RUNNING":
                break
            time.sleep(0.05)
        history = [e for e in sfn.get_execution_history(executionArn=execution)["events"] if "Failed" in e["type"] or "Map" in e["type"]]
        assert described["status"] == "SUCCEEDED", json.dumps(history, default=str)[:3000]
        head = g.get_commit("wflow", "main")
        assert head.message == "through the local workflow"
        assert len(list(g.committed.iterate(stack.default_namespace_prefix + "wflow", head.meta_range_id))) == 30
    assert "LAKELET_COMMIT_STATE_MACHINE_ARN" not in os.environ
    assert dict(default_user_config) == config_before  # moto's process-wide config is given back
