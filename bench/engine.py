"""The engine alone (in-memory block store, cold range caches): a spread commit, a clustered commit, a spread
merge and a full listing, each against the pyarrow-alone limit of the same files, measured side by side.

Usage: .venv/bin/python bench/engine.py [OBJECTS] [CHANGES]   (defaults 1,000,000 and 1,000)

- commit, spread: CHANGES changed entries evenly over the key space, applied to the base (every range touched);
- commit, clustered: CHANGES changed entries on consecutive keys, and the same on a 10,000-object base;
- merge, spread: a three-way merge where the source changed 90% of CHANGES keys and the destination 10%;
- listing: every object, 1,000 per page, through the same paginator and blocks as Graveler.list_objects (each page's
  rows decoded to Python values column by column, as the API's serializer reads them: the same decoding the raw
  iteration does); both sides cold, interleaved, the best of two runs each.
The pyarrow limit of a commit or merge is pq.read_table of every range file it read plus pq.write_table of every
range file it wrote (the tables read back from the stored bytes); of a listing, reading every range with
pq.read_table and iterating its rows as tuples. Full garbage collections during the listing are timed with
gc.callbacks. Range parameters are the deployed defaults.
"""

from __future__ import annotations

import gc
import sys
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from chalicelib.adapters.memory import MemoryBlockStore
from chalicelib.graveler.committed import CommittedManager
from chalicelib.graveler.committed.merge import merge_ranges
from chalicelib.graveler.committed.writer import RangeWriter
from chalicelib.graveler.listing import paginate_objects
from chalicelib.graveler.ports import PutResult
from chalicelib.graveler.records import (
    Entry,
    EntryRecord,
    Key,
    MetaRangeID,
    StagedEntry,
)

NS = "s3://bench/repo"


class Counting:
    """MemoryBlockStore that remembers which range files were read and written since the last reset."""

    def __init__(self) -> None:
        self.inner = MemoryBlockStore()
        self.gets: Counter[str] = Counter()
        self.puts: Counter[str] = Counter()

    def reset(self) -> None:
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

    def delete(self, address: str) -> None:
        self.inner.delete(address)

    def presign_get(self, address: str, expires_seconds: int) -> str:
        return self.inner.presign_get(address, expires_seconds)


def key_of(i: int) -> str:
    return f"data/part={i % 100:02d}/file-{i:08d}.parquet"


def entry_of(i: int, version: int = 0) -> Entry:
    return Entry(
        f"{NS}/data/g{i % 97:03d}/obj-{i:08d}-v{version}",
        1024 + i % 100 + version,
        f"{i:024x}{version:08x}",
        1_700_000_000 + i,
        "application/octet-stream",
    )


def timed(what: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    result = what()
    return time.perf_counter() - started, result


def range_files(store: Counting, counter: Counter[str], ranges: set[str]) -> list[str]:
    return [a for a in counter if a.rsplit("/", 1)[-1] in ranges]


def pyarrow_limit(store: Counting, read: list[str], written: list[str]) -> float:
    """Reading the files read and writing the files written, with pyarrow alone."""
    tables = [pq.read_table(pa.BufferReader(store.inner.get(a))) for a in written]
    started = time.perf_counter()
    for address in read:
        pq.read_table(pa.BufferReader(store.inner.get(address)))
    for table in tables:
        sink = pa.BufferOutputStream()
        pq.write_table(table, sink, compression="snappy")
    return time.perf_counter() - started


def all_range_ids(manager: CommittedManager, *metaranges: MetaRangeID) -> set[str]:
    return {r.id for m in metaranges for r in manager.ranges(NS, m)}


def commit(
    manager: CommittedManager, store: Counting, base: MetaRangeID, changes: list[StagedEntry]
) -> dict[str, float]:
    manager.storage.clear_cache()
    store.reset()
    elapsed, result = timed(lambda: manager.apply(NS, base, changes))
    ids = all_range_ids(manager, base, result.metarange_id)
    read, written = range_files(store, store.gets, ids), range_files(store, store.puts, ids)
    limit = pyarrow_limit(store, read, written)
    return {
        "time": elapsed,
        "limit": limit,
        "read": len(read),
        "written": len(written),
        "ranges": len(manager.ranges(NS, base)),
        "metarange": result.metarange_id,
    }


def merge(
    manager: CommittedManager, store: Counting, base: MetaRangeID, source: MetaRangeID, dest: MetaRangeID
) -> dict[str, float]:
    storage = manager.storage
    storage.clear_cache()
    b, s, d = (storage.metarange(NS, m).ranges for m in (base, source, dest))
    store.reset()

    def run() -> Any:
        known = {r.id for r in (*b, *s, *d)}
        writer = RangeWriter(storage, NS, manager.params, known_ranges=known)
        walk = merge_ranges(b, s, d, lambda rid: storage.range(NS, rid), writer, manager.params, lambda *_: None)
        assert walk.ranges is not None and not walk.conflicts
        return storage.write_metarange(NS, walk.ranges)

    elapsed, result = timed(run)
    ids = all_range_ids(manager, base, source, dest, result)
    read, written = range_files(store, store.gets, ids), range_files(store, store.puts, ids)
    return {"time": elapsed, "limit": pyarrow_limit(store, read, written), "read": len(read), "written": len(written)}


def listing(manager: CommittedManager, store: Counting, metarange: MetaRangeID, objects: int) -> dict[str, float]:
    pauses: list[float] = []
    starts: dict[int, float] = {}

    def watch(phase: str, info: dict[str, int]) -> None:
        if info["generation"] != 2:
            return
        if phase == "start":
            starts[2] = time.perf_counter()
        else:
            pauses.append(time.perf_counter() - starts.pop(2, time.perf_counter()))

    def list_all() -> int:
        manager.storage.clear_cache()  # cold, as the raw iteration reads every range file
        after, count = "", 0
        while True:
            page = paginate_objects(lambda start: manager.blocks(NS, metarange, start), None, "", "", after, 1000)
            count += len(page.results)
            if not page.has_more:
                return count
            after = page.next_offset

    def raw() -> int:
        rows = 0
        for info in manager.ranges(NS, metarange):
            table = pq.read_table(pa.BufferReader(store.inner.get(f"{NS}/_lakefs/{info.id}")))
            columns = [
                table.column(name).to_pylist()
                for name in ("key", "physical_address", "size", "etag", "mtime", "content_type", "user_metadata")
            ]
            for _row in zip(*columns, strict=True):
                rows += 1
        return rows

    # Interleaved, the best of two each: on a shared machine one pass of either swings by 2x.
    listed: list[float] = []
    raw_runs: list[float] = []
    for _ in range(2):
        gc.callbacks.append(watch)
        try:
            elapsed, count = timed(list_all)
        finally:
            gc.callbacks.remove(watch)
        assert count == objects, (count, objects)
        listed.append(elapsed)
        raw_time, rows = timed(raw)
        assert rows == objects
        raw_runs.append(raw_time)
    return {"time": min(listed), "raw": min(raw_runs), "pauses": len(pauses), "max_pause": max(pauses, default=0.0)}


def build(manager: CommittedManager, objects: int) -> MetaRangeID:
    order = sorted(range(objects), key=key_of)
    return manager.write_metarange(NS, (EntryRecord(Key(key_of(i)), entry_of(i)) for i in order))


def spread(objects: int, count: int, offset: int = 0) -> list[int]:
    order = sorted(range(objects), key=key_of)
    step = objects // count
    return [order[offset + step * j] for j in range(count)]


def measure(objects: int, changes: int) -> dict[str, Any]:
    """Every figure of this benchmark, measured in one run."""
    store = Counting()
    manager = CommittedManager(store)  # type: ignore[arg-type]
    t_build, base = timed(lambda: build(manager, objects))

    def changed(indexes: list[int], version: int) -> list[StagedEntry]:
        return sorted((StagedEntry(Key(key_of(i)), entry_of(i, version)) for i in indexes), key=lambda c: c.key)

    spread_commit = commit(manager, store, base, changed(spread(objects, changes), 1))
    order = sorted(range(objects), key=key_of)
    middle = objects // 2
    clustered = commit(manager, store, base, changed(order[middle : middle + changes], 1))

    small_store = Counting()
    small = CommittedManager(small_store)  # type: ignore[arg-type]
    small_base = build(small, 10_000)
    small_order = sorted(range(10_000), key=key_of)
    small_clustered = commit(small, small_store, small_base, changed(small_order[5_000 : 5_000 + changes], 1))

    on_source = changes * 9 // 10
    source = manager.apply(NS, base, changed(spread(objects, on_source, 1), 2)).metarange_id
    dest = manager.apply(NS, base, changed(spread(objects, changes - on_source, 3), 3)).metarange_id
    spread_merge = merge(manager, store, base, source, dest)
    listed = listing(manager, store, base, objects)

    def plain(row: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in row.items() if k != "metarange"}

    return {
        "objects": objects,
        "changes": changes,
        "build_seconds": t_build,
        "ranges": len(manager.ranges(NS, base)),
        "commit_spread": plain(spread_commit),
        "commit_clustered": plain(clustered),
        "commit_clustered_10k": plain(small_clustered),
        "merge_spread": plain(spread_merge),
        "listing": listed,
    }


def main(objects: int, changes: int) -> None:
    m = measure(objects, changes)
    print(f"objects {objects}, changes {changes}, base written in {m['build_seconds']:.1f} s, {m['ranges']} ranges")
    for name, key in (
        ("commit, spread", "commit_spread"),
        ("commit, clustered", "commit_clustered"),
        ("merge, spread", "merge_spread"),
    ):
        r = m[key]
        print(
            f"{name:18s} {r['time'] * 1000:8.1f} ms  pyarrow limit {r['limit'] * 1000:8.1f} ms  "
            f"ratio {r['time'] / r['limit']:5.2f}x  ranges read {r['read']}, written {r['written']}"
        )
    print(
        f"commit, clustered: {objects} objects / 10,000 objects: "
        f"{m['commit_clustered']['time'] / m['commit_clustered_10k']['time']:.2f}"
    )
    listed = m["listing"]
    print(
        f"listing {objects}, 1,000 a page: {listed['time']:.2f} s, raw iteration {listed['raw']:.2f} s, "
        f"rate ratio {listed['raw'] / listed['time']:.2f}; full collections {listed['pauses']:.0f}, "
        f"longest {listed['max_pause'] * 1000:.1f} ms"
    )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000, int(sys.argv[2]) if len(sys.argv) > 2 else 1_000)
