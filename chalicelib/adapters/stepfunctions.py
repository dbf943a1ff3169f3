"""Starts and describes Step Functions executions (the workflows of stepfunctions/) with boto3."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import boto3


@dataclass(frozen=True, slots=True)
class Execution:
    """What the status endpoints need of an execution: its status and, once it ended, its output or error."""

    status: str  # RUNNING, SUCCEEDED, FAILED, TIMED_OUT, ABORTED
    updated: float  # unix seconds: the stop date, or the start date while running
    output: dict[str, Any] | None = None
    error: str = ""  # the error name (the failing Lambda's errorType when the Fail state passes it on)
    cause: str = ""  # the cause (a Lambda's is JSON: errorType, errorMessage, stackTrace)
    input: dict[str, Any] | None = None  # what it was started with: says which repository and branch it is for


class StepFunctionsWorkflows:
    """One state machine's executions, named by the caller (the name is the task id clients see)."""

    def __init__(self, state_machine_arn: str, region: str, endpoint_url: str | None = None) -> None:
        self._arn = state_machine_arn
        self._client = boto3.client("stepfunctions", region_name=region, endpoint_url=endpoint_url)

    def execution_arn(self, name: str) -> str:
        return self._arn.replace(":stateMachine:", ":execution:", 1) + ":" + name

    def start(self, name: str, payload: dict[str, Any]) -> None:
        """Starts an execution. Names are unique: Step Functions takes the same name and input again as a no-op
        while the execution runs, and refuses the name after it ended (callers name each request afresh)."""
        self._client.start_execution(stateMachineArn=self._arn, name=name, input=json.dumps(payload))

    def describe(self, name: str) -> Execution | None:
        """The execution, or None when there is no execution of that name."""
        try:
            found = self._client.describe_execution(executionArn=self.execution_arn(name))
        except self._client.exceptions.ExecutionDoesNotExist:
            return None
        when = found.get("stopDate") or found["startDate"]
        output = json.loads(found["output"]) if found.get("output") else None
        started_with = json.loads(found["input"]) if found.get("input") else None
        return Execution(found["status"], when.timestamp(), output, found.get("error", ""), found.get("cause", ""),
                         started_with)
