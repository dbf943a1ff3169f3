"""The local stack's stand-in for the drop_retired schedule (lakelet/stack/schedules.py): it calls its action
every period until stopped, a failing call does not stop it, and its action is the sweep of retired tokens."""

from __future__ import annotations

import threading

from lakelet.stack import schedules


def test_a_schedule_runs_every_period_survives_a_failure_and_stops() -> None:
    calls: list[int] = []
    three = threading.Event()

    def action() -> None:
        calls.append(len(calls))
        if len(calls) == 1:
            raise RuntimeError("a throttled table")
        if len(calls) >= 3:
            three.set()

    schedule = schedules.Schedule(action, period=0.01, name="test").start()
    assert three.wait(5), calls
    schedule.stop()
    stopped_at = len(calls)
    assert not schedule._thread.is_alive()
    assert threading.Event().wait(0.05) is False and len(calls) == stopped_at  # nothing after stop


def test_the_local_drop_schedule_is_the_drop_retired_sweep(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from chalicelib.gc import schedule as gc_schedule

    swept = threading.Event()
    monkeypatch.setattr(gc_schedule, "on_drop_schedule", swept.set)
    local = schedules.drop_retired_schedule(period=0.01).start()
    try:
        assert swept.wait(5)
    finally:
        local.stop()
    assert schedules.DROP_PERIOD_SECONDS == 300.0  # app.py's Rate(5, MINUTES)
