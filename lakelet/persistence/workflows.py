"""Step Functions executions across a restart.

moto's interpreter runs an execution on a thread of its own and records its end (status, output, error) in the
backend without any request: :func:`install` hooks that moment so the end goes into the journal too. On replay,
:func:`replaying` keeps a journaled StartExecution from running the workflow again (its Lambda tasks' writes are
in the journal already, as requests of their own) and :func:`apply_end` sets the recorded end. An execution
still running when the stack stopped or was killed cannot resume from where it was: :func:`fail_orphans` marks
it FAILED with the error ``Lakelet.LocalStackRestarted``, so whoever polls it sees an end rather than waiting
forever. What its tasks wrote before the stop stays (the workflows' steps are idempotent, so running the
commit or merge again is safe).
"""

from __future__ import annotations

import datetime
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from lakelet.persistence import determinism

ORPHAN_ERROR = "Lakelet.LocalStackRestarted"
ORPHAN_CAUSE = "the local stack stopped while this execution ran; run the operation again"

_lock = threading.Lock()
_saved: dict[str, Any] = {}


def install(on_end: Callable[[Any, Callable[[], None]], None]) -> None:
    """From now on, an execution's end calls ``on_end(execution, record_the_end)``; ``on_end`` must call the
    second argument (which updates the execution) and may journal the result. An execution's start date is the
    request's (pinned) time, which a replay gives again. Idempotent."""
    from moto.stepfunctions.parser.backend.execution import (
        BaseExecutionWorkerCommunication,
        Execution,
    )

    with _lock:
        if "terminated" in _saved:
            return
        original = BaseExecutionWorkerCommunication.terminated
        original_start = Execution.start
        _saved["terminated"] = original
        _saved["start"] = original_start

        def terminated(self: Any) -> None:
            on_end(self.execution, lambda: original(self))

        def start(self: Any) -> None:
            _date_from_request(self)
            original_start(self)

        BaseExecutionWorkerCommunication.terminated = terminated  # type: ignore[method-assign]
        Execution.start = start  # type: ignore[method-assign]


def uninstall() -> None:
    from moto.stepfunctions.parser.backend.execution import (
        BaseExecutionWorkerCommunication,
        Execution,
    )

    with _lock:
        original = _saved.pop("terminated", None)
        if original is not None:
            BaseExecutionWorkerCommunication.terminated = original  # type: ignore[method-assign]
            Execution.start = _saved.pop("start")  # type: ignore[method-assign]


def _date_from_request(execution: Any) -> None:
    """moto reads the wall clock for a start date; the pinned time of the request is one a replay gives again."""
    now = determinism.pinned_now()
    if now is not None:
        execution.start_date = now.replace(tzinfo=datetime.UTC)


def end_data(execution: Any) -> dict[str, Any]:
    """What describe_execution reports of an ended execution, for the journal."""
    status = execution.exec_status
    stop = execution.stop_date
    return {
        "arn": execution.exec_arn,
        "status": getattr(status, "value", status),
        "stop": stop.timestamp() if stop is not None else None,
        "output": execution.output,
        "error": execution.error,
        "cause": execution.cause,
    }


@contextmanager
def replaying() -> Iterator[None]:
    """While active, a StartExecution records the execution as RUNNING, started at the request's time, without
    running it."""
    from moto.stepfunctions.parser.api import ExecutionStatus
    from moto.stepfunctions.parser.backend.execution import Execution

    original = Execution.start

    def start(self: Any) -> None:
        self.exec_status = ExecutionStatus.RUNNING
        _date_from_request(self)

    Execution.start = start  # type: ignore[method-assign]
    try:
        yield
    finally:
        Execution.start = original  # type: ignore[method-assign]


def _executions() -> Iterator[Any]:
    from moto.stepfunctions.parser.models import stepfunctions_parser_backends

    for regions in list(stepfunctions_parser_backends.values()):
        for backend in list(regions.values()):
            for machine in list(backend.state_machines):
                yield from list(machine.executions)


def apply_end(data: dict[str, Any]) -> bool:
    """Sets a journaled end on its execution; False when there is no such execution."""
    from moto.stepfunctions.parser.api import ExecutionStatus

    for execution in _executions():
        if execution.exec_arn == data["arn"]:
            execution.exec_status = ExecutionStatus(data["status"])
            stop = data["stop"]
            execution.stop_date = None if stop is None else datetime.datetime.fromtimestamp(stop, datetime.UTC)
            execution.output = data["output"]
            execution.error = data["error"]
            execution.cause = data["cause"]
            return True
    return False


def fail_orphans() -> list[str]:
    """Marks FAILED every execution recorded as running that no worker runs; their ARNs."""
    from moto.stepfunctions.parser.api import ExecutionStatus

    failed = []
    now = datetime.datetime.now(datetime.UTC)
    for execution in _executions():
        if execution.exec_status == ExecutionStatus.RUNNING and execution.exec_worker is None:
            execution.exec_status = ExecutionStatus.FAILED
            execution.stop_date = now
            execution.error = ORPHAN_ERROR
            execution.cause = ORPHAN_CAUSE
            failed.append(execution.exec_arn)
    return failed
