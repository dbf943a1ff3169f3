"""A clock a test can turn while an engine runs: the engine's parts are fixed when it is built (graveler/parts.py),
so a test that needs another time later builds the engine over one of these and sets its ``source``; and
``raised_within``, for a call that must end at all."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

# How long raised_within gives a call that must end (a deadline's cut, say): far beyond any deadline a test sets,
# so that a loaded machine never fails it; only a call that does not end does.
ENDED_WITHIN_SECONDS = 30.0


class SettableClock:
    """``time.time`` until ``source`` is set to another clock."""

    def __init__(self, source: Callable[[], float] = time.time) -> None:
        self.source = source

    def __call__(self) -> float:
        return self.source()


def engine_clock(services: Any) -> SettableClock:
    """The settable clock the services' engine was built with."""
    clock = services.engine.ports.clock
    assert isinstance(clock, SettableClock), "these services were built without a settable clock"
    return clock


def raised_within(call: Callable[[], Any], seconds: float) -> BaseException | None:
    """Runs ``call`` on a daemon thread and fails the test unless it ends within ``seconds`` (a call that would
    never end fails instead of hanging the run); the exception it raised, or None."""
    raised: list[BaseException] = []

    def run() -> None:
        try:
            call()
        except BaseException as e:  # handed to the caller, who asserts on it
            raised.append(e)

    thread = threading.Thread(target=run, name="raised-within", daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"the call did not end within {seconds} s"
    return raised[0] if raised else None
