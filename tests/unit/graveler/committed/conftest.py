"""Shared helpers for the committed/ tests: a BlockStore that counts reads and writes per address, and entries."""

from __future__ import annotations

from collections import Counter

import pytest

from chalicelib.adapters.memory import MemoryBlockStore
from chalicelib.graveler.ports import PutResult
from chalicelib.graveler.records import Entry, EntryRecord, Key

NAMESPACE = "s3://bucket/repos/one"


class CountingBlockStore:
    """MemoryBlockStore with a tally of get and put calls per address."""

    def __init__(self, inner: MemoryBlockStore | None = None) -> None:
        self.inner = inner or MemoryBlockStore()
        self.gets: Counter[str] = Counter()
        self.puts: Counter[str] = Counter()

    def reset_counts(self) -> None:
        self.gets.clear()
        self.puts.clear()

    def put(self, address: str, data: bytes) -> PutResult:
        self.puts[address] += 1
        return self.inner.put(address, data)

    def get(self, address: str, start: int | None = None, end: int | None = None) -> bytes:
        self.gets[address] += 1
        return self.inner.get(address, start, end)

    def exists(self, address: str) -> bool:
        return self.inner.exists(address)

    def presign_get(self, address: str, expires_seconds: int) -> str:
        return self.inner.presign_get(address, expires_seconds)

    def delete(self, address: str) -> None:
        self.inner.delete(address)


def make_entry(n: int, version: int = 0, **overrides: object) -> Entry:
    """A distinct, realistic entry; ``version`` changes its content (etag, size) and so its identity."""
    fields: dict[str, object] = {
        "physical_address": f"s3://bucket/repos/one/data/g{n % 7:03d}/obj{n:09d}v{version}",
        "size": 1000 + n + 7 * version,
        "etag": f"{n:024x}{version:08x}",
        "mtime": 1_700_000_000 + n,
        "content_type": "application/octet-stream",
        "user_metadata": {},
    }
    fields.update(overrides)
    return Entry(**fields)  # type: ignore[arg-type]


def key_of(n: int) -> Key:
    return Key(f"data/part={n % 10}/file-{n:07d}.parquet")


def make_records(numbers: list[int], version: int = 0) -> list[EntryRecord]:
    return sorted((EntryRecord(key_of(n), make_entry(n, version)) for n in numbers), key=lambda r: r.key)


class Kit:
    """The helpers above, handed to tests as the ``kit`` fixture (test modules cannot import a conftest)."""

    namespace = NAMESPACE
    CountingBlockStore = CountingBlockStore
    entry = staticmethod(make_entry)
    key = staticmethod(key_of)
    records = staticmethod(make_records)


@pytest.fixture(scope="session")
def kit() -> type[Kit]:
    return Kit


@pytest.fixture
def blocks() -> CountingBlockStore:
    return CountingBlockStore()
