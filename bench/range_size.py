"""The range size trade-off: the same repository and the same spread and clustered commits cut with several range
sizes, in one run (in-memory block store, cold caches).

Usage: .venv/bin/python bench/range_size.py [OBJECTS] [CHANGES]   (defaults 300,000 and 1,000)

For each setting: ranges in the repository, range files read and written by the commit and their bytes, and the
commit's time here. What S3 would add is printed from the counts with stated figures (first byte ~30 ms per GET
or PUT, run 8 at a time; ~80 MB/s per stream; $0.0004 per 1,000 GETs, $0.005 per 1,000 PUTs): a model, not a
measurement.
"""

from __future__ import annotations

import sys
import time

from engine import NS, Counting, build, entry_of, key_of, spread

from chalicelib.graveler.committed import CommittedManager, RangeParams
from chalicelib.graveler.records import Key, StagedEntry

SETTINGS = [  # (min_range_bytes, raggedness, max_range_bytes)
    (16 * 1024, 2_500, 2 * 1024 * 1024),
    (64 * 1024, 10_000, 8 * 1024 * 1024),  # the default
    (256 * 1024, 40_000, 32 * 1024 * 1024),
]
FIRST_BYTE, PARALLEL, STREAM = 0.030, 8, 80e6


def main(objects: int, changes: int) -> None:
    order = sorted(range(objects), key=key_of)
    cases = {"spread": spread(objects, changes), "clustered": order[objects // 2 : objects // 2 + changes]}
    print(
        "min KiB raggedness ranges | case      read written  MiB read  MiB written  here ms"
        " | S3 model ms  $ per 1M commits"
    )
    for low, raggedness, high in SETTINGS:
        store = Counting()
        manager = CommittedManager(store, RangeParams(high, low, raggedness))  # type: ignore[arg-type]
        base = build(manager, objects)
        count = len(manager.ranges(NS, base))
        for name, indexes in cases.items():
            staged = sorted((StagedEntry(Key(key_of(i)), entry_of(i, 1)) for i in indexes), key=lambda c: c.key)
            manager.storage.clear_cache()
            store.reset()
            started = time.perf_counter()
            manager.apply(NS, base, staged)
            here = time.perf_counter() - started
            reads = [a for a in store.gets if a != f"{NS}/_lakefs/{base}"]
            read_bytes = sum(len(store.inner.get(a)) for a in reads)
            written_bytes = sum(len(store.inner.get(a)) for a in store.puts)
            model = FIRST_BYTE * (-(-len(reads) // PARALLEL) + -(-len(store.puts) // PARALLEL)) + (
                read_bytes + written_bytes
            ) / (STREAM * min(PARALLEL, max(1, len(reads))))
            dollars = (len(reads) * 0.0004 + len(store.puts) * 0.005) / 1000 * 1_000_000
            print(
                f"{low // 1024:7d} {raggedness:10d} {count:6d} | {name:9s} {len(reads):4d} {len(store.puts):7d} "
                f"{read_bytes / 2**20:9.1f} {written_bytes / 2**20:12.1f} {here * 1000:8.0f} | "
                f"{model * 1000:11.0f} {dollars:17.0f}"
            )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 300_000, int(sys.argv[2]) if len(sys.argv) > 2 else 1_000)
