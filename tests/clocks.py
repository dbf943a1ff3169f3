"""A clock a test can turn while an engine runs: the engine's parts are fixed when it is built (graveler/parts.py),
so a test that needs another time later builds the engine over one of these and sets its ``source``."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


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
