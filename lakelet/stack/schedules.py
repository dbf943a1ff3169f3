"""The local stand-in for the app's frequent EventBridge schedule: moto never fires schedules, so the stack runs
``drop_retired``'s work (chalicelib/gc/schedule.py, on_drop_schedule) itself, on a daemon thread, every
``period`` seconds. Without it the staging rows of every commit would stay in the local tables for good: no commit
drops them (chalicelib/graveler/writes/deferred_drop.py). The daily GC is ``lakelet gc run``'s, not this thread's."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

_log = logging.getLogger(__name__)

# app.py's drop_retired schedule: Rate(5, MINUTES).
DROP_PERIOD_SECONDS = 300.0


class Schedule:
    """Calls ``action`` every ``period`` seconds on a daemon thread until ``stop``; a failing call is logged and
    the next one runs on time."""

    def __init__(self, action: Callable[[], object], period: float = DROP_PERIOD_SECONDS, name: str = "schedule"):
        self._action = action
        self._period = period
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> Schedule:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopped.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)

    def _run(self) -> None:
        while not self._stopped.wait(self._period):
            try:
                self._action()
            except Exception:  # noqa: BLE001 - a schedule keeps going, as EventBridge's next event would
                _log.warning("the local schedule %s failed; it runs again in %.0f s", self._thread.name, self._period,
                             exc_info=True)  # fmt: skip


def drop_retired_schedule(period: float = DROP_PERIOD_SECONDS) -> Schedule:
    """The drop_retired schedule over the process's services (those the stack's API serves)."""
    from chalicelib.gc.schedule import on_drop_schedule

    return Schedule(on_drop_schedule, period, "drop-retired")
