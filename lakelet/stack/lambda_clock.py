"""Run one local "invocation" under a Lambda's clock: answer after ``answer_after`` seconds whether or not it is
done (API Gateway's 29 s), and end it at ``cut_after`` (the function's own timeout), as Lambda ends a function.

Lambda stops a timed-out function where it stands: no ``finally`` of the application is promised to run. A Python
thread cannot be killed, so the cut raises :class:`LambdaTimedOut` (a BaseException, past the application's
``except Exception``) inside the running thread at its next bytecode; a call blocked in C (a socket read) takes it
when it returns. What the function wrote before the cut stays written, as on AWS: that is what the local stack
shows the code has to survive.
"""

from __future__ import annotations

import contextvars
import ctypes
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

_lock = threading.Lock()
_cuts = 0


class LambdaTimedOut(BaseException):
    """Raised inside an invocation its function's timeout has ended."""


def cuts() -> int:
    """How many invocations this process has cut so far (tests wait for a cut by counting, not by timing)."""
    with _lock:
        return _cuts


@dataclass(slots=True)
class Outcome:
    """How an invocation ended as its caller saw it: a value, an exception, or still running at the answer."""

    value: Any = None
    error: BaseException | None = None
    running: bool = False


def _cut(thread: threading.Thread) -> None:
    global _cuts
    if thread.ident is None or not thread.is_alive():
        return
    done = ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread.ident), ctypes.py_object(LambdaTimedOut))
    if done:
        with _lock:
            _cuts += 1


def invoke(
    call: Callable[[], Any],
    *,
    answer_after: float | None,
    cut_after: float | None,
    name: str = "invocation",
    late: Callable[[Outcome], None] | None = None,
) -> Outcome:
    """Run ``call`` on a thread of its own; wait for it up to ``answer_after`` seconds (None: until it ends).
    A call still running at ``cut_after`` seconds from its start is cut. The caller's context variables go along.
    ``late`` hears how a call ended that was still running when its caller was answered."""
    outcome = Outcome()
    finished = threading.Event()
    answered = threading.Event()
    context = contextvars.copy_context()

    def run() -> None:
        try:
            outcome.value = context.run(call)
        except BaseException as error:  # noqa: BLE001 - handed to the caller, as Lambda hands back any failure
            outcome.error = error
        finally:
            finished.set()
            if answered.is_set() and late is not None:
                late(outcome)

    thread = threading.Thread(target=run, name=f"lambda-{name}", daemon=True)
    thread.start()
    timer: threading.Timer | None = None
    if cut_after is not None:
        timer = threading.Timer(cut_after, _cut, args=(thread,))
        timer.daemon = True
        timer.start()
    finished.wait(answer_after)
    answered.set()
    if not finished.is_set():
        return Outcome(running=True)
    if timer is not None:
        timer.cancel()
    return outcome
