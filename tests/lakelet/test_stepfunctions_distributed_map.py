"""The local interpreter's Distributed Map (lakelet/stack/stepfunctions_local.py over moto's): items read from a
JSON manifest in S3, ItemSelector, bounded parallelism, retries inside an item, a failed item failing the map as
AWS does with no failure tolerated, and the fields it does not run as AWS does refused when the machine is
created."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws

from lakelet.stack.asl_checks import UnsupportedLocally, check_definition
from lakelet.stack.stepfunctions_local import (
    MOTO_CONFIG,
    create_state_machines,
    route_item_reads,
    route_lambda_invokes,
)
from tests.workflows.support import run_execution

REGION = "us-east-1"
BUCKET = "manifests"


def distributed_map(**overrides: Any) -> dict[str, Any]:
    state: dict[str, Any] = {
        "Type": "Map",
        "ItemReader": {
            "Resource": "arn:aws:states:::s3:getObject",
            "ReaderConfig": {"InputType": "JSON"},
            "Parameters": {"Bucket.$": "$.bucket", "Key.$": "$.key"},
        },
        "ItemSelector": {"run.$": "$.run", "item.$": "$$.Map.Item.Value"},
        "ItemProcessor": {
            "ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"},
            "StartAt": "Work",
            "States": {
                "Work": {
                    "Type": "Task",
                    "Resource": "${work}",
                    "Retry": [{"ErrorEquals": ["Flaky"], "IntervalSeconds": 1, "MaxAttempts": 2, "BackoffRate": 1.0}],
                    "End": True,
                }
            },
        },
        "MaxConcurrency": 2,
        "ToleratedFailurePercentage": 0,
        "ToleratedFailureCount": 0,
        "ResultPath": "$.out",
        "Catch": [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.error", "Next": "Caught"}],
        "End": True,
    }
    state.update(overrides)
    return {"StartAt": "Slices", "States": {"Slices": state, "Caught": {"Type": "Pass", "End": True}}}


class Flaky(Exception):
    """Retried by the item's Retry."""


class Broken(Exception):
    """Not retried: fails the item."""


@pytest.fixture
def aws():
    with mock_aws(config=MOTO_CONFIG):
        s3 = boto3.client("s3", region_name=REGION)
        s3.create_bucket(Bucket=BUCKET)
        yield s3, boto3.client("stepfunctions", region_name=REGION)


def execute(aws: Any, tmp_path: Path, definition: dict[str, Any], items: list[Any], work: Any) -> dict[str, Any]:
    s3, sfn = aws
    s3.put_object(Bucket=BUCKET, Key="run/items.json", Body=json.dumps(items).encode())
    (tmp_path / "flow.asl.json").write_text(json.dumps(definition))
    arns = create_state_machines(sfn, REGION, directory=tmp_path)
    with route_lambda_invokes({"work": work}):
        return run_execution(sfn, arns["flow"], "x", {"bucket": BUCKET, "key": "run/items.json", "run": "r-1"})


def test_items_come_from_the_manifest_through_the_selector_at_most_max_concurrency_at_once(aws, tmp_path):
    lock = threading.Lock()
    running, peak, started = [0], [0], [0]
    # The first two items wait for each other: a map that ran items one at a time would break the barrier.
    both_running = threading.Barrier(2, timeout=10)

    def work(event: dict[str, Any]) -> dict[str, Any]:
        with lock:
            running[0] += 1
            started[0] += 1
            first_two = started[0] <= 2
            peak[0] = max(peak[0], running[0])
        if first_two:
            both_running.wait()
        time.sleep(0.05)  # overlap, so that an unbounded map would show more than two at once
        with lock:
            running[0] -= 1
        return {"done": event["item"]["n"], "run": event["run"]}

    described = execute(aws, tmp_path, distributed_map(), [{"n": i} for i in range(8)], work)
    assert described["status"] == "SUCCEEDED", described
    out = json.loads(described["output"])["out"]
    assert out == [{"done": i, "run": "r-1"} for i in range(8)]
    assert peak[0] == 2  # parallel, and never above MaxConcurrency


def test_an_item_retries_then_succeeds(aws, tmp_path):
    calls: dict[int, int] = {}

    def work(event: dict[str, Any]) -> int:
        n = event["item"]["n"]
        calls[n] = calls.get(n, 0) + 1
        if n == 1 and calls[n] == 1:
            raise Flaky("once")
        return n

    described = execute(aws, tmp_path, distributed_map(), [{"n": 0}, {"n": 1}, {"n": 2}], work)
    assert described["status"] == "SUCCEEDED", described
    assert json.loads(described["output"])["out"] == [0, 1, 2]
    assert calls == {0: 1, 1: 2, 2: 1}


@pytest.mark.parametrize("error", [Broken, Flaky])
def test_a_failed_item_fails_the_map(aws, tmp_path, error):
    """moto alone would succeed with null for the failed item: an import would then commit without a slice."""
    calls: list[int] = []

    def work(event: dict[str, Any]) -> int:
        calls.append(event["item"]["n"])
        if event["item"]["n"] == 1:
            raise error("item one cannot")
        return event["item"]["n"]

    described = execute(aws, tmp_path, distributed_map(), [{"n": 0}, {"n": 1}, {"n": 2}], work)
    assert described["status"] == "SUCCEEDED", described  # the Catch went to "Caught"
    output = json.loads(described["output"])
    assert "out" not in output
    assert output["error"]["Error"] == "States.ExceedToleratedFailureThreshold"
    assert error.__name__ in output["error"]["Cause"]
    # Flaky is retried twice more before the item fails.
    assert calls.count(1) == (3 if error is Flaky else 1)


def test_the_tolerances_of_zero_are_accepted_and_given_to_moto_without_them():
    checked = check_definition(distributed_map())
    assert "ToleratedFailurePercentage" not in checked["States"]["Slices"]
    assert "ToleratedFailureCount" not in checked["States"]["Slices"]
    assert check_definition(distributed_map(ToleratedFailurePercentage=0.0))["States"]["Slices"]["MaxConcurrency"] == 2


@pytest.mark.parametrize(
    ("overrides", "named"),
    [
        ({"ToleratedFailurePercentage": 5}, "ToleratedFailurePercentage"),
        ({"ToleratedFailureCount": 1}, "ToleratedFailureCount"),
        ({"ToleratedFailureCountPath": "$.n"}, "ToleratedFailureCountPath"),
        ({"ResultWriter": {"Resource": "arn:aws:states:::s3:putObject"}}, "ResultWriter"),
        ({"ItemBatcher": {"MaxItemsPerBatch": 10}}, "ItemBatcher"),
        ({"Label": "slices"}, "Label"),
        (
            {
                "ItemReader": {
                    "Resource": "arn:aws:states:::s3:getObject",
                    "ReaderConfig": {"InputType": "CSV", "CSVHeaderLocation": "FIRST_ROW"},
                    "Parameters": {"Bucket": BUCKET, "Key": "k"},
                }
            },
            "ReaderConfig",
        ),
        (
            {"ItemReader": {"Resource": "arn:aws:states:::s3:listObjectsV2", "Parameters": {"Bucket": BUCKET}}},
            "listObjectsV2",
        ),
        (
            {
                "ItemProcessor": {
                    "ProcessorConfig": {"Mode": "DISTRIBUTED"},
                    "StartAt": "W",
                    "States": {"W": {"Type": "Succeed"}},
                }
            },
            "ExecutionType",
        ),
    ],
)
def test_what_the_local_run_would_not_honour_is_refused(aws, tmp_path, overrides, named):
    _, sfn = aws
    (tmp_path / "flow.asl.json").write_text(json.dumps(distributed_map(**overrides)))
    with pytest.raises(UnsupportedLocally, match=named):
        create_state_machines(sfn, REGION, directory=tmp_path)


def test_a_nested_map_is_checked_too():
    inner = distributed_map(ToleratedFailurePercentage=10)["States"]["Slices"]
    inner["End"] = True
    inner.pop("Catch")
    outer = distributed_map()
    outer["States"]["Slices"]["ItemProcessor"]["States"] = {"Inner": inner}
    outer["States"]["Slices"]["ItemProcessor"]["StartAt"] = "Inner"
    with pytest.raises(UnsupportedLocally, match=r"'Inner'.*ToleratedFailurePercentage"):
        check_definition(outer)


def test_a_field_moto_does_not_know_fails_loudly(aws, tmp_path):
    _, sfn = aws
    definition = distributed_map()
    definition["States"]["Slices"]["ItemProcessor"]["States"]["Work"]["Bogus"] = 1
    (tmp_path / "flow.asl.json").write_text(json.dumps(definition))
    with pytest.raises(Exception, match="Bogus"):
        create_state_machines(sfn, REGION, directory=tmp_path)


def test_item_reads_can_be_routed_to_another_store(aws, tmp_path):
    _, sfn = aws
    store = {(BUCKET, "elsewhere.json"): json.dumps([{"n": 7}]).encode()}
    (tmp_path / "flow.asl.json").write_text(json.dumps(distributed_map()))
    arns = create_state_machines(sfn, REGION, directory=tmp_path)
    with route_lambda_invokes({"work": lambda e: e["item"]["n"]}), route_item_reads(lambda b, k: store[(b, k)]):
        described = run_execution(sfn, arns["flow"], "y", {"bucket": BUCKET, "key": "elsewhere.json", "run": "r"})
    assert json.loads(described["output"])["out"] == [7]
