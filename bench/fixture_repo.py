"""The fixture repository of the engine: realistic keys and entries, a BlockStore that counts reads and writes
per address, and a listing written from scratch. bench/engine.py measures on it and the committed/ unit tests
(tests/unit/graveler/committed/conftest.py) run on it, so both exercise the same data.

Keys look like a partitioned table's files, ``data/part=<n % 10>/file-<n, 7 digits>.parquet``: sorting them
interleaves the numbers, so consecutive numbers are far apart in key order. Entries carry distinct addresses,
etags and sizes; ``version`` changes an entry's content (so its identity) the way a re-upload would.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from chalicelib.adapters.memory import MemoryBlockStore
from chalicelib.graveler.committed import CommittedManager
from chalicelib.graveler.ports import PutResult
from chalicelib.graveler.records import Entry, EntryRecord, Key, MetaRangeID

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


def key_of(n: int) -> Key:
    return Key(f"data/part={n % 10}/file-{n:07d}.parquet")


def entry_of(n: int, version: int = 0, **overrides: object) -> Entry:
    """A distinct, realistic entry; ``version`` changes its content (etag, size) and so its identity."""
    fields: dict[str, object] = {
        "physical_address": f"{NAMESPACE}/data/g{n % 97:03d}/obj{n:09d}v{version}",
        "size": 1000 + n + 7 * version,
        "etag": f"{n:024x}{version:08x}",
        "mtime": 1_700_000_000 + n,
        "content_type": "application/octet-stream",
        "user_metadata": {},
    }
    fields.update(overrides)
    return Entry(**fields)  # type: ignore[arg-type]


def records_of(numbers: Iterable[int], version: int = 0) -> list[EntryRecord]:
    """The records of ``numbers`` in key order."""
    return sorted((EntryRecord(key_of(n), entry_of(n, version)) for n in numbers), key=lambda r: r.key)


def key_order(objects: int) -> list[int]:
    """The numbers 0 .. objects-1 in the order of their keys."""
    return sorted(range(objects), key=key_of)


def build(manager: CommittedManager, objects: int) -> MetaRangeID:
    """Writes objects 0 .. objects-1 (version 0) from scratch and returns their metarange."""
    return manager.write_metarange(NAMESPACE, (EntryRecord(key_of(n), entry_of(n)) for n in key_order(objects)))
