"""GC mark throughput: emr/gc_job.py in Spark local mode over a repository of N objects across C commits.

Usage: .venv/bin/python bench/gc_mark.py [N] [C] [SLICES] [JOB]   (default 100,000 objects, 50 commits, 1 slice,
emr/gc_job.py; JOB names another copy of the job, e.g. an older one, to compare on the same machine)

The repository lives in an in-process moto server: its N data objects are written straight into moto's S3
backend (uploading them over HTTP would take minutes and measure moto, not GC), linked into the repository
through Graveler and committed C times, back-dated one day apart, each commit overwriting part of the keys.
Rules: 10 days on main, so the last commits are active and the older versions are garbage. The job then
marks twice (the first run also starts Spark's Python workers) and sweeps nothing. Printed: the mark time and
throughput (objects listed per second), the ratio to a plain sequential listing of the same objects, and the
job's own rate: objects per second of the mark without its listing (reading the ranges, subtracting, writing
the marked parts: the phase the job reports as ``subtract_and_write``), the figure the performance table holds.
SLICES is the job's --list-slices: moto scans the whole bucket for each listing request, so against moto more
slices per partition cost more than they save (on S3 they are what parallelizes a large partition).
"""

from __future__ import annotations

import logging
import os
import sys
import time
import uuid
from pathlib import Path

import boto3
from moto.core import DEFAULT_ACCOUNT_ID
from moto.s3.models import s3_backends
from moto.server import ThreadedMotoServer

from chalicelib import wiring
from chalicelib.adapters.s3 import S3BlockStore
from chalicelib.gc.prepare import prepare
from chalicelib.gc.rules import RulesStore
from chalicelib.graveler.addressing import partition_of
from chalicelib.graveler.committed import CommittedManager
from chalicelib.graveler.records import BranchID, Entry
from chalicelib.graveler.retention import BranchRetention, RetentionRules
from chalicelib.graveler.service import Graveler
from chalicelib.settings import Settings
from lakelet.stack.local_gc import JOB_FILE, load_job, local_session

REGION = "us-east-1"
BUCKET = "gc-bench"
DAY = 86_400
OVERWRITE_SHARE = 0.7  # of each commit's objects after the first, the share that overwrites an existing key


def build(graveler: Graveler, namespace: str, objects: int, commits: int) -> None:
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
            graveler.link_object("bench", "main", path, Entry(address, 100, "etag", int(written_at)))
        graveler.commit("bench", "main", "bench", f"commit {c}", date=int(written_at))


def sequential_listing(s3: object, namespace: str) -> float:
    prefix = namespace.removeprefix(f"s3://{BUCKET}/") + "/data/"
    started = time.perf_counter()
    count = 0
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix):  # type: ignore[attr-defined]
        count += len(page.get("Contents", []))
    return time.perf_counter() - started


def measure(
    objects: int, commits: int, slices: int = 1, job_path: Path = JOB_FILE, sequential: bool = False
) -> dict[str, float]:
    """Builds the repository and marks twice; the figures of the warm mark (and, if asked, of a sequential
    listing: moto scans its whole bucket per listing request, so that one takes minutes at 100,000 objects)."""
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
        graveler = Graveler(
            base.graveler.refs, base.graveler.staging, blocks, CommittedManager(blocks, wiring.range_params(settings))
        )
        namespace = f"s3://{BUCKET}/bench"
        graveler.create_repository("bench", namespace)

        started = time.perf_counter()
        build(graveler, namespace, objects, commits)
        built = time.perf_counter() - started
        RulesStore(graveler.namespace_files(namespace)).set(RetentionRules(0, (BranchRetention(BranchID("main"), 10),)))
        prepared = prepare(graveler, "bench", clock=lambda: time.time() + 2)

        job = load_job(job_path)
        spark = local_session(address_partitions=8)
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
        timings = []
        summary: dict[str, object] = {}
        for _ in range(2):
            started = time.perf_counter()
            summary = job.run(spark, options)
            timings.append(time.perf_counter() - started)
        spark.stop()
        listing = sequential_listing(s3, namespace) if sequential else float("nan")
    finally:
        server.stop()

    mark = summary["mark"]
    assert isinstance(mark, dict)
    listed = int(mark["objects_listed"])
    assert listed == objects // commits * commits, listed
    phases = mark["seconds"]
    return {
        "objects": listed,
        "commits": commits,
        "built_seconds": built,
        "active_commits": mark["active_commits"],
        "ranges_read": mark["ranges_read"],
        "marked": mark["objects_marked"],
        "protected": mark["objects_protected"],
        "cold_seconds": timings[0],
        "warm_seconds": timings[1],
        "sequential_listing_seconds": listing,
        "listing_seconds": phases["listing"],
        "own_seconds": phases["subtract_and_write"],
        "own_rate": listed / max(phases["subtract_and_write"], 1e-9),
    }


def main(objects: int, commits: int, slices: int, job_path: Path = JOB_FILE) -> None:
    m = measure(objects, commits, slices, job_path, sequential=True)
    print(
        f"objects:                      {m['objects']} across {commits} commits (built in {m['built_seconds']:.1f} s)"
    )
    print(f"active commits:               {m['active_commits']} (ranges read: {m['ranges_read']})")
    print(f"marked as garbage:            {m['marked']}   still referenced: {m['protected']}")
    print(
        f"mark, first run (cold):       {m['cold_seconds']:8.2f} s  ({m['objects'] / m['cold_seconds']:8.0f} objects/s)"
    )
    print(
        f"mark, second run (warm):      {m['warm_seconds']:8.2f} s  ({m['objects'] / m['warm_seconds']:8.0f} objects/s)"
    )
    print(f"  of which listing:           {m['listing_seconds']:8.2f} s")
    print(f"  the job's own work:         {m['own_seconds']:8.2f} s  ({m['own_rate']:8.0f} objects/s)")
    print(f"sequential listing only:      {m['sequential_listing_seconds']:8.2f} s")
    print(
        f"ratio mark / listing:         "
        f"{min(m['cold_seconds'], m['warm_seconds']) / m['sequential_listing_seconds']:8.2f}"
    )


if __name__ == "__main__":
    arguments = [int(a) for a in sys.argv[1:4]]
    defaults = [100_000, 50, 1]
    job = Path(sys.argv[4]) if len(sys.argv) > 4 else JOB_FILE
    main(*(arguments + defaults[len(arguments) :]), job_path=job)
