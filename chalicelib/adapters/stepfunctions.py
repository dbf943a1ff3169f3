"""The WorkflowRunner port (graveler/ports.py) on Step Functions: starts and describes executions of one state
machine of stepfunctions/ with boto3."""

from __future__ import annotations

import json
from typing import Any

import boto3

from chalicelib.graveler import errors
from chalicelib.graveler.ports import Execution

__all__ = ["StepFunctionsWorkflows"]


class StepFunctionsWorkflows:
    """One state machine's executions, named by the caller (the name is the task id clients see)."""

    def __init__(
        self, state_machine_arn: str, region: str, endpoint_url: str | None = None, client: Any = None
    ) -> None:
        self._arn = state_machine_arn
        self._client = client or boto3.client("stepfunctions", region_name=region, endpoint_url=endpoint_url)

    def execution_arn(self, name: str) -> str:
        return self._arn.replace(":stateMachine:", ":execution:", 1) + ":" + name

    def start(self, name: str, payload: dict[str, Any]) -> None:
        """Names are unique: Step Functions takes the same name and input again as a no-op while the execution
        runs, and refuses the name after it ended (callers name each request afresh)."""
        try:
            self._client.start_execution(stateMachineArn=self._arn, name=name, input=json.dumps(payload))
        except self._client.exceptions.ExecutionAlreadyExists as e:
            raise errors.AlreadyExists(f"workflow execution {name} already exists") from e

    def describe(self, name: str) -> Execution | None:
        try:
            found = self._client.describe_execution(executionArn=self.execution_arn(name))
        except self._client.exceptions.ExecutionDoesNotExist:
            return None
        when = found.get("stopDate") or found["startDate"]
        output = json.loads(found["output"]) if found.get("output") else None
        started_with = json.loads(found["input"]) if found.get("input") else None
        return Execution(
            found["status"], when.timestamp(), output, found.get("error", ""), found.get("cause", ""), started_with
        )
