import pytest

from chalicelib.wiring import memory_services


class Clock:
    """A settable clock so commit dates and IDs are deterministic."""

    def __init__(self, now: float = 1_700_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        self.now += 1
        return self.now


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def g(clock):
    return memory_services(clock=clock, sleep=lambda s: None).engine


@pytest.fixture
def repo(g):
    return g.repositories.create_repository("repo", "s3://bucket/repo")
