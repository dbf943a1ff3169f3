"""A container's long-lived objects (modules, AWS clients, what the first request loads) are frozen out of the
garbage collector's sight, so a full collection never walks them in the middle of a listing."""

from __future__ import annotations

import gc

import pytest

from chalicelib import wiring

from .support import Api


def test_the_first_request_freezes_what_lives_forever(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(wiring, "_freezes_left", 1)
    gc.unfreeze()  # whatever an earlier test froze in this process
    try:
        assert gc.get_freeze_count() == 0
        assert api.get("/repositories").status_code == 200
        frozen = gc.get_freeze_count()
        assert frozen > 10_000  # the modules alone are tens of thousands of objects
        assert api.get("/repositories").status_code == 200
        # Once: later requests add nothing (the count only falls, as frozen objects freed by reference counting leave).
        assert gc.get_freeze_count() <= frozen
    finally:
        gc.unfreeze()
