"""What the workflow tests share: running an execution to its end, and a task that crashes once."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

Handler = Callable[[dict[str, Any]], Any]


class Injected(Exception):
    """A crash injected into a task."""


def run_execution(sfn: Any, state_machine: str, name: str, payload: dict[str, Any]) -> dict[str, Any]:
    """Starts the execution and polls it until it ends; describe_execution's answer."""
    execution = sfn.start_execution(stateMachineArn=state_machine, name=name, input=json.dumps(payload))
    for _ in range(600):
        described: dict[str, Any] = sfn.describe_execution(executionArn=execution["executionArn"])
        if described["status"] != "RUNNING":
            return described
        time.sleep(0.05)
    raise AssertionError("execution did not finish")


def crashing_once(name: str, step: Handler, when: str, failed: list[str]) -> Handler:
    """``step``, except that its first call crashes: "before" its side effect, or "after" it (the step ran, but
    its answer is lost). ``failed`` records the crash."""

    def flaky(event: dict[str, Any]) -> Any:
        if not failed:
            failed.append(name)
            if when == "before":
                raise Injected(f"{name} crashed before its side effect")
            step(event)
            raise Injected(f"{name} crashed after its side effect")
        return step(event)

    return flaky
