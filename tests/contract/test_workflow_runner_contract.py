"""WorkflowRunner contract: the in-memory twin and StepFunctionsWorkflows (on moto's Step Functions interpreter)
start and describe executions alike. The workflows here are a Pass state (its output is its input) and a Fail
state (an error name and a cause shaped as a Lambda's), which the twin plays as an identity function and as a
function that raises."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from chalicelib.adapters.memory import MemoryWorkflowRunner
from chalicelib.adapters.stepfunctions import StepFunctionsWorkflows
from chalicelib.graveler import errors
from chalicelib.graveler.ports import Execution, WorkflowRunner

from .conftest import REGION, set_fake_aws_env

ROLE = "arn:aws:iam::123456789012:role/lakelet-workflows"
PASS = {"StartAt": "Done", "States": {"Done": {"Type": "Pass", "End": True}}}
CAUSE = json.dumps({"errorType": "Refused", "errorMessage": "no, not this one"})
FAIL = {"StartAt": "Refuse", "States": {"Refuse": {"Type": "Fail", "Error": "Refused", "Cause": CAUSE}}}


class Refused(Exception):
    pass


def _refuse(payload: dict[str, Any]) -> dict[str, Any]:
    raise Refused("no, not this one")


Runners = Callable[[str], WorkflowRunner]


@pytest.fixture(params=["memory", "aws"])
def runners(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[Runners]:
    """``runners("pass")`` / ``runners("fail")``: a runner of that workflow."""
    if request.param == "memory":
        yield lambda kind: MemoryWorkflowRunner(lambda payload: payload if kind == "pass" else _refuse(payload))
        return
    set_fake_aws_env(monkeypatch)
    with mock_aws(config={"stepfunctions": {"execute_state_machine": True}}):
        sfn = boto3.client("stepfunctions", region_name=REGION)
        arns = {
            kind: sfn.create_state_machine(name=f"contract-{kind}", definition=json.dumps(definition), roleArn=ROLE)[
                "stateMachineArn"
            ]
            for kind, definition in (("pass", PASS), ("fail", FAIL))
        }
        yield lambda kind: StepFunctionsWorkflows(arns[kind], REGION)


def ended(runner: WorkflowRunner, name: str) -> Execution:
    for _ in range(400):
        found = runner.describe(name)
        assert found is not None
        if found.status != "RUNNING":
            return found
        time.sleep(0.02)
    raise AssertionError(f"execution {name} did not end")


def test_an_unknown_execution_is_none(runners: Runners) -> None:
    assert runners("pass").describe("w-nothing") is None


def test_an_execution_keeps_its_input_and_ends_with_its_output(runners: Runners) -> None:
    runner = runners("pass")
    payload = {"request": {"repository": "r", "branch": "main", "n": 3}}
    before = time.time()
    runner.start("w-1", payload)
    found = ended(runner, "w-1")
    assert found.status == "SUCCEEDED"
    assert found.input == payload and found.output == payload
    assert (found.error, found.cause) == ("", "")
    assert before - 5 <= found.updated <= time.time() + 5


def test_a_failed_execution_says_its_error_name_and_cause(runners: Runners) -> None:
    runner = runners("fail")
    runner.start("w-2", {"request": {}})
    found = ended(runner, "w-2")
    assert found.status == "FAILED" and found.output is None
    assert found.error == "Refused"
    assert json.loads(found.cause)["errorMessage"] == "no, not this one"


def test_a_name_is_used_once(runners: Runners) -> None:
    runner = runners("pass")
    runner.start("w-3", {"request": {"a": 1}})
    ended(runner, "w-3")
    with pytest.raises(errors.AlreadyExists):
        runner.start("w-3", {"request": {"a": 2}})
    assert ended(runner, "w-3").input == {"request": {"a": 1}}


def test_executions_are_apart(runners: Runners) -> None:
    runner = runners("pass")
    runner.start("w-4", {"request": {"n": 4}})
    runner.start("w-5", {"request": {"n": 5}})
    assert ended(runner, "w-4").output == {"request": {"n": 4}}
    assert ended(runner, "w-5").output == {"request": {"n": 5}}
    assert runners("fail").describe("w-4") is None  # another state machine's executions are not its own
