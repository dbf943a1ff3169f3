"""The engine alone (in-memory block store, cold range caches): a spread commit, a clustered commit, a spread
merge and a full listing, each against the pyarrow-alone limit of the same files, measured side by side.

Usage: .venv/bin/python bench/engine.py [OBJECTS] [CHANGES] [ROUNDS] [FORMAT]   (defaults 1,000,000, 1,000, 3 and
the range format of new repositories, 2; FORMAT 1 measures the cuts of repositories created before formats)

- commit, spread: CHANGES changed entries evenly over the key space, applied to the base (every range touched);
- commit, clustered: CHANGES changed entries on consecutive keys, at 10%, 30%, 50%, 70% and 90% of the key order
  (five commits, summed), and the same on a 10,000-object base;
- merge, spread: a three-way merge where the source changed 90% of CHANGES keys and the destination 10%;
- listing: every object, 1,000 per page, through the paginator and blocks of engine.objects.list_objects (each page's
  rows decoded to Python values column by column, as the API's serializer reads them: the same decoding the raw
  iteration does); both sides cold, interleaved, the best of two runs each.
The pyarrow limit of a commit or merge is pq.read_table of every range file it read plus pq.write_table of every
range file it wrote (the tables read back from the stored bytes); of a listing, reading every range with
pq.read_table and iterating its rows as tuples. Full garbage collections during the listing are timed with
gc.callbacks. Range parameters are those of the range format measured (by default the one new repositories get,
with the deployed defaults); the repository is bench/fixture_repo.py's, the one the committed/ unit tests run on.

A commit or merge runs once unmeasured, then ROUNDS times (the clustered pair at least CLUSTERED_ROUNDS times), each
run followed by its limit; the figure is the median of the runs against the median of the limits, and every round's
ratio is kept (``ratios``), so the spread shows in the results. The unmeasured first run is reported apart
(``first_ratio``): the first time a process writes that much Arrow data, pyarrow's default allocator (mimalloc)
grows its pools, which costs the first run about a third more whatever it is, while its limit, timed after it, finds
the pools grown. The two clustered commits alternate round by round, so both see the same machine.
"""

from __future__ import annotations

import gc
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fixture_repo import NAMESPACE as NS
from fixture_repo import CountingBlockStore, build, entry_of, key_of, key_order

from chalicelib.graveler.committed import CommittedManager
from chalicelib.graveler.committed.merge import merge_ranges
from chalicelib.graveler.committed.params import CURRENT_RANGE_FORMAT
from chalicelib.graveler.committed.writer import RangeWriter
from chalicelib.graveler.reads.listing import paginate_objects
from chalicelib.graveler.records import MetaRangeID, StagedEntry

ROUNDS = 3
# The clustered pair's rounds, at least: each is a fraction of a second, and on the shared machine one round's
# ratio ranges 0.8-2.5 under load (docs/performance.md), so three rounds make a median of noise.
CLUSTERED_ROUNDS = 11


def timed(what: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    result = what()
    return time.perf_counter() - started, result


def range_files(store: CountingBlockStore, counter: Counter[str], ranges: set[str]) -> list[str]:
    return [a for a in counter if a.rsplit("/", 1)[-1] in ranges]


def pyarrow_limit(store: CountingBlockStore, read: list[str], written: list[str]) -> float:
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


def _rounds(run: Callable[[], dict[str, Any]], rounds: int) -> dict[str, Any]:
    """One unmeasured run, then ``rounds`` measured ones: medians, each round's ratio and the first run apart."""
    first = run()
    runs = [run() for _ in range(rounds)]
    result = dict(runs[-1])
    result["time"] = statistics.median(r["time"] for r in runs)
    result["limit"] = statistics.median(r["limit"] for r in runs)
    result["ratios"] = [r["time"] / r["limit"] for r in runs]
    result["first_ratio"] = first["time"] / first["limit"]
    return result


def commit_once(
    manager: CommittedManager, store: CountingBlockStore, base: MetaRangeID, changes: list[StagedEntry]
) -> dict[str, Any]:
    manager.storage.clear_cache()
    store.reset_counts()
    elapsed, result = timed(lambda: manager.apply(NS, base, changes))
    rows = {r.id: r.count for m in (base, result.metarange_id) for r in manager.ranges(NS, m)}
    read, written = range_files(store, store.gets, set(rows)), range_files(store, store.puts, set(rows))
    limit = pyarrow_limit(store, read, written)
    return {
        "time": elapsed,
        "limit": limit,
        "read": len(read),
        "written": len(written),
        "rows_read": sum(rows[a.rsplit("/", 1)[-1]] for a in read),
        "rows_written": sum(rows[a.rsplit("/", 1)[-1]] for a in written),
        "ranges": len(manager.ranges(NS, base)),
        "metarange": result.metarange_id,
    }


def commit(
    manager: CommittedManager,
    store: CountingBlockStore,
    base: MetaRangeID,
    changes: list[StagedEntry],
    rounds: int = ROUNDS,
) -> dict[str, Any]:
    return _rounds(lambda: commit_once(manager, store, base, changes), rounds)


def merge(
    manager: CommittedManager,
    store: CountingBlockStore,
    base: MetaRangeID,
    source: MetaRangeID,
    dest: MetaRangeID,
    rounds: int = ROUNDS,
) -> dict[str, Any]:
    storage = manager.storage

    def once() -> dict[str, Any]:
        storage.clear_cache()
        b, s, d = (storage.metarange(NS, m).ranges for m in (base, source, dest))
        store.reset_counts()

        def run() -> Any:
            known = {r.id for r in (*b, *s, *d)}
            writer = RangeWriter(storage, NS, manager.params, known_ranges=known)
            walk = merge_ranges(b, s, d, lambda rid: storage.range(NS, rid), writer, manager.params, lambda *_: None)
            assert walk.ranges is not None and not walk.conflicts
            return storage.write_metarange(NS, walk.ranges)

        elapsed, result = timed(run)
        ids = all_range_ids(manager, base, source, dest, result)
        read, written = range_files(store, store.gets, ids), range_files(store, store.puts, ids)
        limit = pyarrow_limit(store, read, written)
        return {"time": elapsed, "limit": limit, "read": len(read), "written": len(written)}

    return _rounds(once, rounds)


# Where the clustered commits fall, as fractions of the key order. A touched range is rewritten whole and
# content-defined ranges vary in size (a key is more likely to sit in a large one), so one position would measure
# the size of the one range it happens to land in.
CLUSTER_AT = (0.1, 0.3, 0.5, 0.7, 0.9)


def clustered_pair(
    large: list[Callable[[], dict[str, Any]]], small: list[Callable[[], dict[str, Any]]], rounds: int
) -> tuple[dict[str, Any], dict[str, Any], list[float]]:
    """The clustered commits at every position on both bases, alternating side by side round by round after one
    unmeasured run of each: per side the median over rounds of the summed times, limits, files and rows, and each
    round's ratio large / small."""

    def total(runs: list[Callable[[], dict[str, Any]]]) -> dict[str, Any]:
        done = [run() for run in runs]
        return {k: sum(r[k] for r in done) for k in ("time", "limit", "read", "written", "rows_read", "rows_written")}

    total(large), total(small)
    pairs = [(total(large), total(small)) for _ in range(rounds)]
    medians = []
    for side in (0, 1):
        runs = [pair[side] for pair in pairs]
        median = dict(runs[-1])
        median["time"] = statistics.median(r["time"] for r in runs)
        median["limit"] = statistics.median(r["limit"] for r in runs)
        median["times"] = [r["time"] for r in runs]
        medians.append(median)
    return medians[0], medians[1], [a["time"] / b["time"] for a, b in pairs]


def listing(
    manager: CommittedManager, store: CountingBlockStore, metarange: MetaRangeID, objects: int
) -> dict[str, float]:
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


def spread(objects: int, count: int, offset: int = 0) -> list[int]:
    order = key_order(objects)
    step = objects // count
    return [order[offset + step * j] for j in range(count)]


def changed(indexes: list[int], version: int) -> list[StagedEntry]:
    return sorted((StagedEntry(key_of(i), entry_of(i, version)) for i in indexes), key=lambda c: c.key)


def measure(
    objects: int, changes: int, rounds: int = ROUNDS, range_format: int = CURRENT_RANGE_FORMAT
) -> dict[str, Any]:
    """Every figure of this benchmark, measured in one run, on a repository of ``range_format``."""
    store = CountingBlockStore()
    manager = CommittedManager(store).for_format(range_format)  # type: ignore[arg-type]
    t_build, base = timed(lambda: build(manager, objects))

    spread_commit = commit(manager, store, base, changed(spread(objects, changes), 1), rounds)

    def clusters(count: int) -> list[list[StagedEntry]]:
        order = key_order(count)
        starts = [min(int(count * at), count - changes) for at in CLUSTER_AT]
        return [changed(order[start : start + changes], 1) for start in starts]

    small_store = CountingBlockStore()
    small = CommittedManager(small_store).for_format(range_format)  # type: ignore[arg-type]
    small_base = build(small, 10_000)
    clustered, small_clustered, clustered_ratios = clustered_pair(
        [lambda c=c: commit_once(manager, store, base, c) for c in clusters(objects)],
        [lambda c=c: commit_once(small, small_store, small_base, c) for c in clusters(10_000)],
        max(rounds, CLUSTERED_ROUNDS),
    )

    on_source = changes * 9 // 10
    source = manager.apply(NS, base, changed(spread(objects, on_source, 1), 2)).metarange_id
    dest = manager.apply(NS, base, changed(spread(objects, changes - on_source, 3), 3)).metarange_id
    spread_merge = merge(manager, store, base, source, dest, rounds)
    listed = listing(manager, store, base, objects)

    def plain(row: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in row.items() if k != "metarange"}

    return {
        "objects": objects,
        "changes": changes,
        "rounds": rounds,
        "build_seconds": t_build,
        "range_format": range_format,
        "ranges": len(manager.ranges(NS, base)),
        "largest_range_rows": max(r.count for r in manager.ranges(NS, base)),
        "ranges_10k": len(small.ranges(NS, small_base)),
        "commit_spread": plain(spread_commit),
        "commit_clustered": plain(clustered),
        "commit_clustered_10k": plain(small_clustered),
        "commit_clustered_ratios": clustered_ratios,
        "merge_spread": plain(spread_merge),
        "listing": listed,
    }


def _spread_of(values: list[float]) -> str:
    return f"{min(values):.2f}-{max(values):.2f}"


def main(objects: int, changes: int, rounds: int, range_format: int) -> None:
    m = measure(objects, changes, rounds, range_format)
    print(
        f"objects {objects}, changes {changes}, range format {range_format}, base written in "
        f"{m['build_seconds']:.1f} s, {m['ranges']} ranges (largest {m['largest_range_rows']:,} rows; the 10k base "
        f"{m['ranges_10k']}); medians of {rounds} rounds after one unmeasured run"
    )
    for name, key in (
        ("commit, spread", "commit_spread"),
        ("commit, clustered", "commit_clustered"),
        ("merge, spread", "merge_spread"),
    ):
        r = m[key]
        rounds_note = f"; rounds {_spread_of(r['ratios'])}, first run {r['first_ratio']:.2f}x" if "ratios" in r else ""
        print(
            f"{name:18s} {r['time'] * 1000:8.1f} ms  pyarrow limit {r['limit'] * 1000:8.1f} ms  "
            f"ratio {r['time'] / r['limit']:5.2f}x  ranges read {r['read']}, written {r['written']}{rounds_note}"
        )
    ratios = m["commit_clustered_ratios"]
    large, small = m["commit_clustered"], m["commit_clustered_10k"]
    print(
        f"commit, clustered: {objects} objects / 10,000 objects: {large['time'] / small['time']:.2f} "
        f"(rounds {' '.join(f'{r:.2f}' for r in ratios)}); rows read + written "
        f"{large['rows_read'] + large['rows_written']:,} / {small['rows_read'] + small['rows_written']:,}; "
        f"{objects}: {' '.join(f'{t * 1000:.0f}' for t in large['times'])} ms, "
        f"10,000: {' '.join(f'{t * 1000:.0f}' for t in small['times'])} ms"
    )
    listed = m["listing"]
    print(
        f"listing {objects}, 1,000 a page: {listed['time']:.2f} s, raw iteration {listed['raw']:.2f} s, "
        f"rate ratio {listed['raw'] / listed['time']:.2f}; full collections {listed['pauses']:.0f}, "
        f"longest {listed['max_pause'] * 1000:.1f} ms"
    )


if __name__ == "__main__":
    main(
        int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000,
        int(sys.argv[2]) if len(sys.argv) > 2 else 1_000,
        int(sys.argv[3]) if len(sys.argv) > 3 else ROUNDS,
        int(sys.argv[4]) if len(sys.argv) > 4 else CURRENT_RANGE_FORMAT,
    )
