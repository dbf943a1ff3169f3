from __future__ import annotations

import pytest

from tests.perf.support import CallCounter


@pytest.fixture
def counter(monkeypatch: pytest.MonkeyPatch) -> CallCounter:
    """Counts the AWS calls of every botocore client made during the test."""
    calls = CallCounter()
    calls.install(monkeypatch)
    return calls
