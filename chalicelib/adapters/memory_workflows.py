"""The WorkflowRunner twin: Step Functions executions in a dict, run in the caller's thread or ended by hand."""

from __future__ import annotations

import dataclasses
import json
import threading
import time
from collections.abc import Callable

from chalicelib.graveler import errors
from chalicelib.graveler.ports import Execution

__all__ = ["MemoryWorkflowRunner"]


class MemoryWorkflowRunner:
    """The WorkflowRunner twin. With ``execute`` (the workflow as a function of its payload) an execution runs
    when it starts, in the caller's thread, and ends SUCCEEDED with its answer, or FAILED with the error's class
    name and a cause shaped as a Lambda's; without it, executions stay RUNNING until ``end`` is called."""

    def __init__(
        self,
        execute: Callable[[dict[str, object]], dict[str, object]] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._execute = execute
        self._clock = clock
        self._lock = threading.Lock()
        self._executions: dict[str, Execution] = {}

    def start(self, name: str, payload: dict[str, object]) -> None:
        started_with = json.loads(json.dumps(payload))
        with self._lock:
            found = self._executions.get(name)
            if found is not None:
                if found.status == "RUNNING" and found.input == started_with:
                    return
                raise errors.AlreadyExists(f"workflow execution {name} already exists")
            self._executions[name] = Execution("RUNNING", self._clock(), input=started_with)
        if self._execute is None:
            return
        try:
            output = self._execute(json.loads(json.dumps(payload)))
        except Exception as e:  # noqa: BLE001 - as Lambda does, any exception of a task is the execution's failure
            cause = json.dumps({"errorType": type(e).__name__, "errorMessage": str(e)})
            self.end(name, "FAILED", error=type(e).__name__, cause=cause)
        else:
            self.end(name, "SUCCEEDED", output=output)

    def describe(self, name: str) -> Execution | None:
        with self._lock:
            return self._executions.get(name)

    def end(
        self, name: str, status: str, output: dict[str, object] | None = None, error: str = "", cause: str = ""
    ) -> None:
        """Ends a running execution (what the state machine does when its last state ends)."""
        with self._lock:
            found = self._executions[name]
            self._executions[name] = dataclasses.replace(
                found,
                status=status,
                updated=self._clock(),
                output=json.loads(json.dumps(output)) if output is not None else None,
                error=error,
                cause=cause,
            )
