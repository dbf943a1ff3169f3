"""Fixtures of the GC tests. Spark (local[2]) and the moto server start once per test process; see support.py."""

from __future__ import annotations

from collections.abc import Iterator
from types import ModuleType
from typing import Any

import pytest

from chalicelib import wiring
from tests.api.support import memory_services

from .support import job, shared_spark


@pytest.fixture(scope="session")
def spark() -> Any:
    return shared_spark()


@pytest.fixture(scope="session")
def gc_job() -> ModuleType:
    return job()


@pytest.fixture
def memory() -> Iterator[wiring.Services]:
    """Every port in memory, installed as the app's services."""
    with memory_services("test-bucket") as built:
        yield built
