"""Zero-copy import of N objects (default 1,000,000) through the import workflow ON THE EMBEDDED LOCAL STACK;
prints the time of each phase, the peak memory of each task and an estimate for AWS.

Usage: .venv/bin/python bench/import_1m.py [N] [SLICES]   (default 1,000,000 objects, 16 slices)

What runs where:
- ``LocalStack(api_port=0)``: moto's server (S3, DynamoDB, Step Functions with its ASL interpreter, Lambda) and
  the app behind the lakeFS API, in this process, with LAKELET_IMPORT_ALLOWED_LOCATIONS=s3://<source>/ and
  an inline threshold of 1,000 objects (above it, the import runs as the state machine).
- Seeding: the N source objects (empty, under 100 "directories") are put straight into moto's S3 backend in this
  process: writing them through S3's API would take an hour at moto's ~250 PUTs/s and is not what is measured.
- Listing: moto answers every ListObjectsV2 page by collecting and sorting all the bucket's keys (O(N) per page:
  about 1.5 s a page at N = 1,000,000, so 45 minutes of moto for the 1,000 pages). For the source bucket only,
  this bench answers pages from a sorted index of its keys by bisection, with moto's own truncation and tokens,
  as S3 itself answers a page in time independent of the bucket's size. Every other call is moto's own.
- Tasks: moto's interpreter invokes the Lambda tasks; they are routed to warm worker processes (SLICES of them,
  as Lambda containers), each task alone in its process with services built afresh from the stack's environment,
  and each reports its peak RSS (VmHWM, reset before the task), its RSS at start, and its peak of Python
  allocations (tracemalloc) — bench/commit_workflow_stack.py's harness, reused.
- The client: POST .../branches/main/import with the source prefix, then GET .../import?id= until completed,
  as the lakefs client's ImportManager does; the count of objects on the branch is then checked from the head
  commit's ranges, and one imported object is read back through the API.
"""

from __future__ import annotations

import bisect
import logging
import os
import sys
import time
from pathlib import Path
from typing import Any

import boto3
from moto.backends import get_backend
from moto.s3.models import FakeDeleteMarker, S3Backend

sys.path.insert(0, str(Path(__file__).resolve().parent))

from commit_workflow_stack import Api, Tasks, main_rss, task_table

from chalicelib import wiring
from lakelet.stack.devserver import DechunkingRequestHandler
from lakelet.stack.local import LocalStack
from lakelet.stack.stepfunctions_local import route_lambda_invokes

REPO = "bench-import"
SOURCE = "bench-import-source"
ENV = {"LAKELET_IMPORT_ALLOWED_LOCATIONS": f"s3://{SOURCE}/", "LAKELET_IMPORT_INLINE_THRESHOLD": "1000"}
# On AWS (us-east-1, same region): a ListObjectsV2 page of 1,000 keys takes 50-100 ms; a warm Lambda task
# starts in ~50 ms, a cold one in ~1-2 s with pyarrow; Step Functions adds ~0.1 s per state.
AWS_PAGE_SECONDS = 0.1
AWS_COLD_START_SECONDS = 2.0
# A task's own work per page on a Lambda, without moto or tracemalloc: botocore parses the 1,000-key page
# (~70 ms measured here without tracemalloc) and the range writer adds its 1,000 entries (~10 ms).
AWS_TASK_SECONDS_PER_PAGE = 0.08


def key_of(i: int) -> str:
    return f"events/d{i % 100:02d}/part-{i:07d}.json"


def source_backend() -> Any:
    for account in get_backend("s3"):
        backend = get_backend("s3")[account]["global"]
        if SOURCE in backend.buckets:
            return backend
    raise SystemExit("the source bucket is not in moto's backend")


def seed(count: int) -> float:
    backend = source_backend()
    started = time.perf_counter()
    for i in range(count):
        backend.put_object(SOURCE, key_of(i), b"")
        if (i + 1) % 100_000 == 0:
            print(f"  seeded {i + 1:,} in {time.perf_counter() - started:.0f} s; {main_rss()}", flush=True)
    return time.perf_counter() - started


def install_sorted_listing() -> None:
    """ListObjectsV2 without a delimiter on the source bucket from a sorted index of its keys (see above)."""
    original = S3Backend.list_objects_v2
    index: dict[str, tuple[int, list[str]]] = {}

    def listed(
        self: S3Backend,
        bucket: Any,
        prefix: str | None,
        delimiter: str | None,
        continuation_token: str | None,
        start_after: str | None,
        max_keys: int,
    ) -> Any:
        if delimiter or bucket.name != SOURCE:
            return original(self, bucket, prefix, delimiter, continuation_token, start_after, max_keys)
        size, names = index.get(bucket.name, (-1, []))
        if size != len(bucket.keys):
            names = sorted(bucket.keys.keys())
            index[bucket.name] = (len(names), names)
        prefix = prefix or ""
        position = bisect.bisect_left(names, prefix)
        limit = self._pagination_tokens.get(continuation_token) if continuation_token else start_after
        if limit:
            position = max(position, bisect.bisect_right(names, limit))
        found = []
        while position < len(names) and len(found) <= max_keys and names[position].startswith(prefix):
            key = bucket.keys[names[position]]
            if not isinstance(key, FakeDeleteMarker):
                found.append(key)
            position += 1
        return self._truncate_result(found, max_keys)

    S3Backend.list_objects_v2 = listed  # type: ignore[method-assign]


def main(count: int, slices: int) -> None:
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    DechunkingRequestHandler.log_message = lambda self, *args: None  # type: ignore[method-assign,assignment]
    os.environ.update(ENV)
    os.environ["LAKELET_IMPORT_MAX_SLICES"] = str(slices)
    install_sorted_listing()
    report: list[str] = []

    def say(line: str) -> None:
        report.append(line)
        print(line, flush=True)

    with LocalStack(api_port=0) as stack:
        print(f"stack up at {stack.endpoint} (moto {stack.moto_url}); {main_rss()}", flush=True)
        s3 = boto3.client(
            "s3",
            endpoint_url=stack.moto_url,
            region_name="us-east-1",
            aws_access_key_id=stack.credentials.access_key_id,
            aws_secret_access_key=stack.credentials.secret_access_key,
        )
        s3.create_bucket(Bucket=SOURCE)
        print(f"seeding {count:,} objects into moto's S3 ...", flush=True)
        seed_seconds = seed(count)
        tasks = Tasks(slices)
        print(f"{tasks.warm_up()} worker processes warm", flush=True)
        api = Api(stack)
        namespace = f"{stack.default_namespace_prefix}/{REPO}"
        api.call("POST", "/repositories", 201, json={"name": REPO, "storage_namespace": namespace})
        say(f"N = {count:,} objects under 100 prefixes, {slices} slices at most")
        say(f"seeding straight into moto's S3 backend: {seed_seconds:.1f} s; {main_rss()}")
        with route_lambda_invokes(tasks.handlers()):
            started = time.perf_counter()
            body = {
                "paths": [{"type": "common_prefix", "path": f"s3://{SOURCE}/events/", "destination": "events/"}],
                "commit": {"message": f"import {count} objects"},
            }
            import_id = api.call("POST", f"/repositories/{REPO}/branches/main/import", 202, json=body)["id"]
            polls = []
            while True:
                status = api.call("GET", f"/repositories/{REPO}/branches/main/import", 200, params={"id": import_id})
                polls.append((time.perf_counter() - started, status.get("ingested_objects") or 0))
                if status.get("completed") or status.get("error"):
                    break
                time.sleep(2.0)
            seconds = time.perf_counter() - started
            runs = tasks.take()
        if status.get("error") or not status.get("completed"):
            raise SystemExit(f"the import failed: {status}")
        engine = wiring.get_services().engine
        head = engine.commits.get_commit(REPO, "main")
        ranges = engine.ports.committed.ranges(namespace, head.meta_range_id)
        objects = sum(r.count for r in ranges)
        if objects != count or status["ingested_objects"] != count:
            raise SystemExit(
                f"expected {count} objects, the branch has {objects}, the status says {status['ingested_objects']}"
            )
        probe = api.session.get(
            f"{api.base}/repositories/{REPO}/refs/main/objects/stat",
            params={"path": "events/" + key_of(count - 1)[len("events/") :]},
            timeout=60,
        )
        if probe.status_code != 200 or not probe.json()["physical_address"].startswith(f"s3://{SOURCE}/"):
            raise SystemExit(f"the last imported object does not stat as its source: {probe.text[:300]}")
        build = [r for r in runs if r["name"] == "import_build_slice"]
        say(
            f"import through the workflow: {seconds:.1f} s ({count / seconds:,.0f} objects/s); "
            f"{len(build)} slice task(s); {objects:,} objects in {len(ranges)} ranges; commit {head.id[:12]}"
        )
        middle = [p for p in polls if 0 < p[1] < count]
        if middle:
            say(f"progress while running: {', '.join(f'{n:,} at {t:.0f} s' for t, n in middle[:6])}")
        say("tasks (each alone in its worker process; memory is the task's own, moto's is in the stack process):")
        for line in task_table(runs):
            say(line)
        say(main_rss())
        pages_per_slice = max(1, count // max(1, len(build)) // 1000)
        other = sum(
            max((r["seconds"] for r in runs if r["name"] == name), default=0.0)
            for name in ("import_plan", "import_commit", "import_merge")
        )
        per_slice = pages_per_slice * (AWS_PAGE_SECONDS + AWS_TASK_SECONDS_PER_PAGE)
        estimate = AWS_COLD_START_SECONDS * 4 + per_slice + other
        say(
            f"estimate on AWS: ~{estimate:.0f} s: {pages_per_slice} listing pages per slice at "
            f"{AWS_PAGE_SECONDS + AWS_TASK_SECONDS_PER_PAGE:.2f} s (S3's page and the task's own work) = "
            f"{per_slice:.0f} s, four cold starts, plus plan, commit and merge as measured here ({other:.0f} s, "
            f"upper bounds: moto and a shared machine)"
        )
    print("\n".join(["", "---- summary ----", *report]))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000, int(sys.argv[2]) if len(sys.argv) > 2 else 16)
