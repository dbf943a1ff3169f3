"""The range size trade-off: the same repository and the same spread and clustered commits cut with several range
params (the two range formats and other candidates), in one run (in-memory block store, cold caches).

Usage: .venv/bin/python bench/range_size.py [OBJECTS] [CHANGES]   (defaults 300,000 and 1,000)

For each setting: ranges in the repository and the largest; the spread commit's range files read and written and
their bytes; the clustered commits' (CHANGES consecutive keys at the five positions of bench/engine.py, summed)
rows and bytes read + written, on this base and on a 10,000-object base, and the ratio of the two row counts (the
clustered row of the benchmark follows it: a touched range is rewritten whole). What S3 would add to the spread
commit is printed from the counts with stated figures (first byte ~30 ms per GET or PUT, run 8 at a time; ~80 MB/s
per stream; $0.0004 per 1,000 GETs, $0.005 per 1,000 PUTs): a model, not a measurement.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from engine import CLUSTER_AT, changed, spread
from fixture_repo import NAMESPACE as NS
from fixture_repo import CountingBlockStore, build, key_order

from chalicelib.graveler.committed import CommittedManager, RangeParams
from chalicelib.graveler.committed.params import RANGE_FORMAT_1, RANGE_FORMAT_2
from chalicelib.graveler.records import MetaRangeID, StagedEntry

KiB, MiB = 1024, 1024 * 1024
SETTINGS: list[tuple[str, RangeParams]] = [
    ("format 1", RANGE_FORMAT_1),
    ("format 2", RANGE_FORMAT_2),
    ("64K/10000/1.5M", RangeParams(max_range_bytes=3 * MiB // 2, min_range_bytes=64 * KiB, raggedness=10_000)),
    ("1M/2500/2M", RangeParams(max_range_bytes=2 * MiB, min_range_bytes=1 * MiB, raggedness=2_500)),
    ("1.5M/2000/2.5M", RangeParams(max_range_bytes=5 * MiB // 2, min_range_bytes=3 * MiB // 2, raggedness=2_000)),
]
FIRST_BYTE, PARALLEL, STREAM = 0.030, 8, 80e6


def _apply(
    manager: CommittedManager, store: CountingBlockStore, base: MetaRangeID, changes: list[StagedEntry]
) -> dict[str, Any]:
    manager.storage.clear_cache()
    store.reset_counts()
    result = manager.apply(NS, base, changes)
    rows = {r.id: r.count for m in (base, result.metarange_id) for r in manager.ranges(NS, m)}
    read = [a for a in store.gets if a.rsplit("/", 1)[-1] in rows]
    written = [a for a in store.puts if a.rsplit("/", 1)[-1] in rows]
    return {
        "read": len(read),
        "written": len(written),
        "read_bytes": sum(len(store.inner.get(a)) for a in read),
        "written_bytes": sum(len(store.inner.get(a)) for a in written),
        "rows": sum(rows[a.rsplit("/", 1)[-1]] for a in read + written),
    }


def _clustered(manager: CommittedManager, store: CountingBlockStore, objects: int, changes: int) -> dict[str, Any]:
    base = build(manager, objects)
    order = key_order(objects)
    total = {"rows": 0, "bytes": 0}
    for at in CLUSTER_AT:
        start = min(int(objects * at), objects - changes)
        done = _apply(manager, store, base, changed(order[start : start + changes], 1))
        total["rows"] += done["rows"]
        total["bytes"] += done["read_bytes"] + done["written_bytes"]
    return total


def main(objects: int, changes: int) -> None:
    print(
        "setting         ranges largest | spread: read written  MiB r+w | clustered: rows r+w  MiB r+w | "
        "10k rows r+w  ratio | S3 model spread ms  $ per 1M spread commits"
    )
    for name, params in SETTINGS:
        store = CountingBlockStore()
        manager = CommittedManager(store, params)  # type: ignore[arg-type]
        base = build(manager, objects)
        ranges = manager.ranges(NS, base)
        s = _apply(manager, store, base, changed(spread(objects, changes), 1))
        clustered = _clustered(manager, store, objects, changes)
        small_store = CountingBlockStore()
        small = _clustered(CommittedManager(small_store, params), small_store, 10_000, changes)  # type: ignore[arg-type]
        model = FIRST_BYTE * (-(-s["read"] // PARALLEL) + -(-s["written"] // PARALLEL)) + (
            s["read_bytes"] + s["written_bytes"]
        ) / (STREAM * min(PARALLEL, max(1, s["read"])))
        dollars = (s["read"] * 0.0004 + s["written"] * 0.005) / 1000 * 1_000_000
        print(
            f"{name:15s} {len(ranges):6d} {max(r.count for r in ranges):7,d} | {s['read']:12d} {s['written']:7d} "
            f"{(s['read_bytes'] + s['written_bytes']) / MiB:8.1f} | {clustered['rows']:16,d} "
            f"{clustered['bytes'] / MiB:8.1f} | {small['rows']:12,d} {clustered['rows'] / small['rows']:6.2f} | "
            f"{model * 1000:18.0f} {dollars:26.0f}",
            flush=True,
        )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 300_000, int(sys.argv[2]) if len(sys.argv) > 2 else 1_000)
