"""The committed/ tests run on the engine's fixture repository (bench/fixture_repo.py, which the engine
benchmark measures on too): a BlockStore that counts reads and writes per address, keys, entries and records."""

from __future__ import annotations

import pytest

from bench.fixture_repo import NAMESPACE, CountingBlockStore, entry_of, key_of, records_of


class Kit:
    """The fixture repository's helpers, handed to tests as the ``kit`` fixture (test modules cannot import a
    conftest)."""

    namespace = NAMESPACE
    CountingBlockStore = CountingBlockStore
    entry = staticmethod(entry_of)
    key = staticmethod(key_of)
    records = staticmethod(records_of)


@pytest.fixture(scope="session")
def kit() -> type[Kit]:
    return Kit


@pytest.fixture
def blocks() -> CountingBlockStore:
    return CountingBlockStore()
