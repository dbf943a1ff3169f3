"""GC mark throughput: the GC job (emr/lakelet_gc/) in Spark local mode over N objects across C commits.

Usage: .venv/bin/python bench/gc_mark.py [N] [C] [SLICES] [JOB] [--compare OLDJOB] [--runs R] [--no-sequential]
       [--no-probe]
(default 100,000 objects, 50 commits, 1 slice, emr/lakelet_gc/; --compare marks with another copy of the job's
package, e.g. the one before a change, on the same repository in the same run, so that two versions compare side
by side)

The repository lives in an in-process moto server: its N data objects are written straight into moto's S3
backend (uploading them over HTTP would take minutes and measure moto, not GC), linked into the repository
through the engine and committed C times, back-dated one day apart, each commit overwriting part of the keys.
Rules: 10 days on main, so the last commits are active and the older versions are garbage. The job then
marks R times (2; the first run also starts Spark's Python workers) and sweeps nothing. Printed: the mark time and
throughput (objects listed per second), the ratio to a plain sequential listing of the same objects, and the
job's own rate: objects per second of the mark without its listing (reading the ranges, subtracting, writing
the marked parts: the phase the job reports as ``subtract_and_write``), the figure the performance table holds,
and the CPU seconds that work took in this process and its children (driver, Spark's JVM, its Python workers),
which other load on a shared machine does not inflate. Unless --no-probe, the job also marks a repository of
PROBE_OBJECTS objects in the same session, whose own work stands for the fixed cost: the large mark's own work is
reported as that fixed cost plus a cost per object.
SLICES is the job's --list-slices: moto scans the whole bucket for each listing request, so against moto more
slices per partition cost more than they save (on S3 they are what parallelizes a large partition).
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import os
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import boto3
from moto.core import DEFAULT_ACCOUNT_ID
from moto.s3.models import s3_backends
from moto.server import ThreadedMotoServer

from chalicelib import wiring
from chalicelib.adapters.s3 import S3BlockStore
from chalicelib.gc.prepare import prepare
from chalicelib.gc.rules import RulesStore
from chalicelib.graveler.committed import CommittedManager
from chalicelib.graveler.engine import Engine, build_engine, engine_parts
from chalicelib.graveler.reads.retention import BranchRetention, RetentionRules
from chalicelib.graveler.records import BranchID, Entry
from chalicelib.graveler.writes.addressing import partition_of
from chalicelib.settings import Settings
from lakelet.stack.local_gc import JOB_PACKAGE, load_job, local_session

REGION = "us-east-1"
BUCKET = "gc-bench"
DAY = 86_400
# The fixed cost of a mark's own work is measured on a small repository of its own, in the same run and Spark
# session: its own work is nearly all fixed cost, so the large mark's time minus it is what the objects cost.
PROBE_OBJECTS = 500
PROBE_COMMITS = 5
OVERWRITE_SHARE = 0.7  # of each commit's objects after the first, the share that overwrites an existing key


def build(engine: Engine, namespace: str, objects: int, commits: int, repository: str = "bench") -> None:
    backend = s3_backends[DEFAULT_ACCOUNT_ID]["aws"]
    per_commit = objects // commits
    now = time.time()
    paths: list[str] = []
    for c in range(commits):
        written_at = now - (commits - c) * DAY
        partition = partition_of(written_at)
        for i in range(per_commit):
            key_id = uuid.uuid4().hex
            address = f"{namespace}/data/{partition}/{key_id}"
            backend.put_object(BUCKET, address.removeprefix(f"s3://{BUCKET}/"), b"x" * 100)
            if c and i < per_commit * OVERWRITE_SHARE:
                path = paths[(c * 7919 + i) % len(paths)]
            else:
                path = f"tables/t{c:03d}/part-{i:06d}.parquet"
                paths.append(path)
            engine.objects.link_object(repository, "main", path, Entry(address, 100, "etag", int(written_at)))
        engine.commits.commit(repository, "main", "bench", f"commit {c}", date=int(written_at))


def sequential_listing(s3: object, namespace: str) -> float:
    prefix = namespace.removeprefix(f"s3://{BUCKET}/") + "/data/"
    started = time.perf_counter()
    count = 0
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix):  # type: ignore[attr-defined]
        count += len(page.get("Contents", []))
    return time.perf_counter() - started


def process_tree_cpu() -> float:
    """CPU seconds used so far by this process and its live descendants (the Spark JVM and its Python workers),
    from /proc; NaN where there is no /proc. A figure that contention on a shared machine does not inflate."""
    proc = Path("/proc")
    if not proc.is_dir():
        return float("nan")
    ticks = os.sysconf("SC_CLK_TCK")
    parents: dict[int, int] = {}
    cpu: dict[int, float] = {}
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(entry.name)] = int(fields[1])
        cpu[int(entry.name)] = (int(fields[11]) + int(fields[12])) / ticks
    me = os.getpid()
    total = 0.0
    for pid, seconds in cpu.items():
        ancestor = pid
        while ancestor in parents and ancestor != me:
            ancestor = parents[ancestor]
        if ancestor == me:
            total += seconds
    return total


def mark_runs(job: ModuleType, spark: object, options: object, runs: int) -> list[dict[str, float]]:
    """``runs`` marks in a row; each with its wall time and the CPU time of its own work (from the moment the job
    reports the listing done to its end)."""
    results = []
    for _ in range(runs):
        own_started: dict[str, float] = {}

        def progress(phase: str, message: str, at: dict[str, float] = own_started) -> None:
            if phase == "mark":
                at["cpu"] = process_tree_cpu()

        started = time.perf_counter()
        summary = job.run(spark, options, progress)
        wall = time.perf_counter() - started
        mark = summary["mark"]
        listed = int(mark["objects_listed"])
        phases = mark["seconds"]
        results.append(
            {
                "objects": listed,
                "active_commits": mark["active_commits"],
                "ranges_read": mark["ranges_read"],
                "marked": mark["objects_marked"],
                "protected": mark["objects_protected"],
                "seconds": wall,
                "listing_seconds": phases["listing"],
                "own_seconds": phases["subtract_and_write"],
                "own_cpu_seconds": process_tree_cpu() - own_started["cpu"],
                "own_rate": listed / max(phases["subtract_and_write"], 1e-9),
            }
        )
    return results


def measure(
    objects: int,
    commits: int,
    slices: int = 1,
    job_path: Path = JOB_PACKAGE,
    sequential: bool = False,
    compare: Path | None = None,
    runs: int = 2,
    probe: bool = True,
) -> dict[str, Any]:
    """Builds the repository and marks ``runs`` times (the first also starts Spark's Python workers); the figures
    of the fastest warm mark (and, if asked, of a sequential listing: moto scans its whole bucket per listing
    request, so that one takes minutes at 100,000 objects). ``compare``: another copy of the job, marked first on
    the same repository in the same Spark session, its figures under "compare" (first, because a worker process
    keeps what the current job sets up in it, see emr/lakelet_gc/storage.py's skip_unchanged_zip_rereads).
    ``probe``: the same job also marks a repository of PROBE_OBJECTS objects, whose own work stands for the fixed cost
    of a mark ("fixed_seconds"; "per_object_seconds" is the rest of the large mark's own work per object)."""
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "bench")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "bench")
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        endpoint = f"http://{host}:{port}"
        s3 = boto3.client("s3", region_name=REGION, endpoint_url=endpoint)
        s3.create_bucket(Bucket=BUCKET)
        settings = Settings(bucket=BUCKET, region=REGION, endpoint_url=endpoint)
        base = wiring.memory_services(settings)
        blocks = S3BlockStore(s3)
        engine = build_engine(
            engine_parts(
                base.engine.ports.refs,
                base.engine.ports.staging,
                blocks,
                CommittedManager(blocks, wiring.range_params(settings)),
            )
        )
        rules = RetentionRules(0, (BranchRetention(BranchID("main"), 10),))
        namespace = f"s3://{BUCKET}/bench"
        engine.repositories.create_repository("bench", namespace)
        started = time.perf_counter()
        build(engine, namespace, objects, commits)
        built = time.perf_counter() - started
        RulesStore(engine.repositories.namespace_files(namespace)).set(rules)
        probe_namespace = f"s3://{BUCKET}/probe"
        if probe:
            engine.repositories.create_repository("probe", probe_namespace)
            build(engine, probe_namespace, PROBE_OBJECTS, PROBE_COMMITS, "probe")
            RulesStore(engine.repositories.namespace_files(probe_namespace)).set(rules)
        prepared = prepare(engine, "bench", clock=lambda: time.time() + 2)
        probe_run = prepare(engine, "probe", clock=lambda: time.time() + 2).run_id if probe else ""

        spark = local_session(address_partitions=8)
        measured: dict[str, list[dict[str, float]]] = {}
        for name, path in (("compare", compare), ("job", job_path)):
            if path is None:
                continue
            job = load_job(path)
            options = job.JobOptions(
                storage_namespace=namespace,
                run_id=prepared.run_id,
                mode=job.MODE_MARK,
                min_age_seconds=0,
                commit_partitions=4,
                address_partitions=8,
                list_slices=slices,
                endpoint_url=endpoint,
                region=REGION,
            )
            measured[name] = mark_runs(job, spark, options, max(2, runs))
            if probe and name == "job":
                small = dataclasses.replace(options, storage_namespace=probe_namespace, run_id=probe_run)
                measured["probe"] = mark_runs(job, spark, small, max(2, runs))
        spark.stop()
        listing = sequential_listing(s3, namespace) if sequential else float("nan")
    finally:
        server.stop()

    def figures(results: list[dict[str, float]], expected: int = objects // commits * commits) -> dict[str, Any]:
        warm = min(results[1:], key=lambda r: r["own_seconds"])
        assert warm["objects"] == expected, warm["objects"]
        return {**warm, "cold_seconds": results[0]["seconds"], "warm_seconds": warm["seconds"]}

    result: dict[str, Any] = {
        **figures(measured["job"]),
        "commits": commits,
        "built_seconds": built,
        "sequential_listing_seconds": listing,
    }
    if probe:
        small = figures(measured["probe"], PROBE_OBJECTS // PROBE_COMMITS * PROBE_COMMITS)
        result["probe_objects"] = small["objects"]
        result["fixed_seconds"] = small["own_seconds"]
        result["per_object_seconds"] = max(0.0, result["own_seconds"] - small["own_seconds"]) / max(
            1, result["objects"] - small["objects"]
        )
    if "compare" in measured:
        result["compare"] = figures(measured["compare"])
        if result["compare"]["marked"] != result["marked"]:
            raise SystemExit(f"the two jobs disagree: {result['compare']['marked']} != {result['marked']} marked")
    return result


def report(m: dict[str, Any], label: str) -> None:
    print(f"{label}:")
    print(
        f"  mark, first run (cold):     {m['cold_seconds']:8.2f} s  ({m['objects'] / m['cold_seconds']:8.0f} objects/s)"
    )
    print(
        f"  mark, warm:                 {m['warm_seconds']:8.2f} s  ({m['objects'] / m['warm_seconds']:8.0f} objects/s)"
    )
    print(f"    of which listing:         {m['listing_seconds']:8.2f} s")
    print(
        f"    the job's own work:       {m['own_seconds']:8.2f} s  ({m['own_rate']:8.0f} objects/s), "
        f"{m['own_cpu_seconds']:.2f} CPU s ({m['objects'] / max(m['own_cpu_seconds'], 1e-9):.0f} objects per CPU s)"
    )


def main(arguments: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("objects", nargs="?", type=int, default=100_000, help="data objects (100,000)")
    parser.add_argument("commits", nargs="?", type=int, default=50, help="commits they are spread over (50)")
    parser.add_argument("slices", nargs="?", type=int, default=1, help="the job's --list-slices (1)")
    parser.add_argument("job", nargs="?", type=Path, default=JOB_PACKAGE, help="the job's package (emr/lakelet_gc)")
    parser.add_argument("--compare", type=Path, help="another copy of the job, measured first in the same run")
    parser.add_argument("--runs", type=int, default=2, help="marks per job, the first one cold (2)")
    parser.add_argument("--no-sequential", action="store_true", help="skip the sequential listing")
    parser.add_argument("--no-probe", action="store_true", help="skip the small mark that measures the fixed cost")
    args = parser.parse_args(arguments)
    m = measure(
        args.objects,
        args.commits,
        args.slices,
        args.job,
        not args.no_sequential,
        args.compare,
        args.runs,
        not args.no_probe,
    )
    print(
        f"objects:                      {m['objects']} across {m['commits']} commits "
        f"(built in {m['built_seconds']:.1f} s)"
    )
    print(f"active commits:               {m['active_commits']} (ranges read: {m['ranges_read']})")
    print(f"marked as garbage:            {m['marked']}   still referenced: {m['protected']}")
    if "compare" in m:
        report(m["compare"], f"compared job {args.compare}")
    report(m, f"job {args.job}")
    if "fixed_seconds" in m:
        print(
            f"  fixed cost (own work of a {m['probe_objects']}-object mark): {m['fixed_seconds']:.2f} s; "
            f"per object beyond it: {m['per_object_seconds'] * 1e6:.2f} us"
        )
    if not args.no_sequential:
        print(f"sequential listing only:      {m['sequential_listing_seconds']:8.2f} s")
        print(
            f"ratio mark / listing:         "
            f"{min(m['cold_seconds'], m['warm_seconds']) / m['sequential_listing_seconds']:8.2f}"
        )


if __name__ == "__main__":
    main()
