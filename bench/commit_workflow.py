"""Commit N staged objects through the commit state machine (moto's interpreter, tasks in process), then 100
changes onto that branch, then a merge through the merge state machine of a branch with 100 changes into it
(the branch moved on meanwhile); prints the peak memory of each task, the range files read and written, and
timings.

Usage: .venv/bin/python bench/commit_workflow.py [N] [SLICES]   (default 200,000 objects, 16 slices)

Ports: the block store is in memory (counting _lakefs/ reads and writes); staging is a sorted in-memory store
that pages lazily, as the DynamoDB one does (the memory twin copies a whole token per listing, which would be
measured as the task's memory). Range parameters are the deployed defaults. Peaks come from tracemalloc, taken
around each task (Map iterations may overlap, so a slice's figure is an upper bound).
"""

from __future__ import annotations

import bisect
import json
import sys
import threading
import time
import tracemalloc
from collections import defaultdict
from collections.abc import Iterable, Iterator

import boto3
from moto import mock_aws

from chalicelib.adapters.memory import MemoryBlockStore
from chalicelib.graveler.merge import MergeRequest
from chalicelib.graveler.records import Entry, Key, StagedEntry, StagingToken
from chalicelib.settings import Settings
from chalicelib.wiring import assemble, memory_services, set_services
from chalicelib.workflows import tasks
from lakelet.stack.stepfunctions_local import (
    MOTO_CONFIG,
    create_state_machines,
    route_lambda_invokes,
)

REGION = "us-east-1"


class SortedStaging:
    """Staged entries per token in sorted key lists; iterate pages lazily (no copy of the token)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._keys: dict[str, list[str]] = defaultdict(list)
        self._values: dict[str, dict[str, StagedEntry]] = defaultdict(dict)

    def get(self, token: StagingToken, key: Key) -> StagedEntry | None:
        return self._values.get(token, {}).get(key)

    def get_many(self, token: StagingToken, keys: Iterable[Key]) -> dict[Key, StagedEntry]:
        values = self._values.get(token, {})
        return {key: values[key] for key in keys if key in values}

    def set(self, token: StagingToken, staged: StagedEntry) -> StagedEntry | None:
        with self._lock:
            values = self._values[token]
            replaced = values.get(staged.key)
            if staged.key not in values:
                keys = self._keys[token]
                if keys and staged.key < keys[-1]:
                    bisect.insort(keys, staged.key)
                else:
                    keys.append(staged.key)
            values[staged.key] = staged
            return replaced

    def delete(self, token: StagingToken, key: Key) -> None:
        with self._lock:
            if self._values.get(token, {}).pop(key, None) is not None:
                keys = self._keys[token]
                keys.pop(bisect.bisect_left(keys, key))

    def iterate(self, token: StagingToken, from_key: str = "", first_page: int | None = None) -> Iterator[StagedEntry]:
        keys, values = self._keys.get(token, []), self._values.get(token, {})
        index = bisect.bisect_left(keys, from_key)
        while index < len(keys):
            page = keys[index : index + 1000]  # a page, as a DynamoDB query returns
            index += len(page)
            for key in page:
                found = values.get(key)
                if found is not None:
                    yield found

    def drop(self, token: StagingToken) -> None:
        with self._lock:
            self._keys.pop(token, None)
            self._values.pop(token, None)

    def delete_many(self, token: StagingToken, keys: Iterable[Key]) -> None:
        for key in keys:
            self.delete(token, key)


class CountingBlocks(MemoryBlockStore):
    """Counts reads and writes of _lakefs/ objects (ranges and metaranges)."""

    def __init__(self) -> None:
        super().__init__()
        self.reads: list[str] = []
        self.writes: list[str] = []

    def get(self, address: str, start: int | None = None, end: int | None = None) -> bytes:
        if "/_lakefs/" in address:
            self.reads.append(address.rsplit("/", 1)[-1])
        return super().get(address, start, end)

    def put(self, address: str, data: bytes):  # type: ignore[no-untyped-def]
        if "/_lakefs/" in address:
            self.writes.append(address.rsplit("/", 1)[-1])
        return super().put(address, data)


def measured(handlers: dict, peaks: dict[str, list[int]]) -> dict:
    def wrap(name, step):  # type: ignore[no-untyped-def]
        def run(event):  # type: ignore[no-untyped-def]
            tracemalloc.reset_peak()
            before = tracemalloc.get_traced_memory()[0]
            result = step(event)
            peaks[name].append(tracemalloc.get_traced_memory()[1] - before)
            return result

        return run

    return {name: wrap(name, step) for name, step in handlers.items()}


def run(sfn, arn: str, request_id: str, slices: int) -> dict:  # type: ignore[no-untyped-def]
    request = {
        "repository": "bench",
        "branch": "main",
        "request_id": request_id,
        "committer": "bench",
        "message": request_id,
        "date": 1_700_000_000,
        "metadata": {},
    }
    execution = sfn.start_execution(
        stateMachineArn=arn, name=request_id, input=json.dumps({"request": request, "max_slices": slices})
    )["executionArn"]
    while (described := sfn.describe_execution(executionArn=execution))["status"] == "RUNNING":
        time.sleep(0.05)
    if described["status"] != "SUCCEEDED":
        raise SystemExit(f"execution {request_id} ended {described['status']}: {described}")
    return json.loads(described["output"])


def main(count: int, slices: int) -> None:
    blocks = CountingBlocks()
    base = memory_services()
    services = assemble(Settings(bucket="bench-data"), base.engine.ports.refs, SortedStaging(), blocks, base.auth)
    set_services(services)
    g = services.engine
    g.repositories.create_repository("bench", "s3://bench-data/bench")
    token = g.branches.get_branch("bench", "main").staging_token

    started = time.perf_counter()
    for i in range(count):
        key = Key(f"data/year={i % 7}/part-{i:07d}.parquet")
        g.ports.staging.set(
            token, StagedEntry(key, Entry(f"s3://bench-data/bench/data/{i:x}", 1000 + i, f"{i:032x}", 1))
        )
    stage_seconds = time.perf_counter() - started

    with mock_aws(config=MOTO_CONFIG):
        sfn = boto3.client("stepfunctions", region_name=REGION)
        arns = create_state_machines(sfn, REGION)
        arn = arns["commit"]
        tracemalloc.start()
        peaks: dict[str, list[int]] = defaultdict(list)
        with route_lambda_invokes(measured(tasks.HANDLERS, peaks)):
            started = time.perf_counter()
            first = run(sfn, arn, "bulk", slices)
            bulk_seconds = time.perf_counter() - started
            head = g.commits.get_commit("bench", "main")
            ranges = g.ports.committed.ranges("s3://bench-data/bench", head.meta_range_id)
            print(
                f"commit of {count:,} staged objects through the workflow: {bulk_seconds:.1f} s "
                f"(staging them in memory: {stage_seconds:.1f} s); {len(ranges)} ranges, "
                f"{len(first['plan']['slices'])} slice(s)"
            )
            for name, values in sorted(peaks.items()):
                print(f"  peak traced memory {name}: max {max(values) / 2**20:.1f} MiB over {len(values)} run(s)")

            for label, positions in (
                ("spread over the key space", range(0, count, max(1, count // 100))),
                ("on 100 consecutive keys", range(count // 2, count // 2 + 100 * 7, 7)),
            ):
                hundred(g, blocks, peaks, sfn, arn, slices, count, label, list(positions)[:100])
            merge(g, blocks, peaks, sfn, arns["merge"], slices, count)
        tracemalloc.stop()


def merge(g, blocks, peaks, sfn, arn, slices, count) -> None:  # type: ignore[no-untyped-def]
    """A branch with 100 changes spread over the key space merged into main, which has 100 changes of its own
    on consecutive keys since, through the merge workflow with a cold cache."""
    g.branches.create_branch("bench", "feature", "main")
    for i in range(3, count, max(1, count // 100)):
        key = Key(f"data/year={i % 7}/part-{i:07d}.parquet")
        g.objects.upload_object("bench", "feature", key, b"f")
    g.commits.commit("bench", "feature", "bench", "feature work")
    for i in range(count // 3, count // 3 + 100):
        key = Key(f"data/year={i % 7}/part-{i:07d}.parquet")
        g.objects.upload_object("bench", "main", key, b"m")
    g.commits.commit("bench", "main", "bench", "main work")
    source = g.commits.get_commit("bench", "feature")
    before = g.ports.committed.ranges("s3://bench-data/bench", g.commits.get_commit("bench", "main").meta_range_id)
    peaks.clear()
    blocks.reads.clear()
    blocks.writes.clear()
    g.ports.committed.storage.clear_cache()
    request = MergeRequest("bench", "feature", source.id, "main", "merge-100", "bench", "", 1_700_000_000)
    started = time.perf_counter()
    execution = sfn.start_execution(
        stateMachineArn=arn,
        name=request.request_id,
        input=json.dumps({"request": request.to_json(), "max_slices": slices}),
    )
    while (described := sfn.describe_execution(executionArn=execution["executionArn"]))["status"] == "RUNNING":
        time.sleep(0.05)
    seconds = time.perf_counter() - started
    if described["status"] != "SUCCEEDED":
        raise SystemExit(f"merge ended {described['status']}: {described}")
    output = json.loads(described["output"])
    after = g.ports.committed.ranges("s3://bench-data/bench", g.commits.get_commit("bench", "main").meta_range_id)
    sources = g.ports.committed.ranges("s3://bench-data/bench", source.meta_range_id)
    range_ids = {r.id for r in before} | {r.id for r in after} | {r.id for r in sources}
    read_ranges = [a for a in blocks.reads if a in range_ids]
    written_ranges = [a for a in blocks.writes if a in range_ids]
    print(
        f"merge of 100 spread changes into the {count:,}-object branch (100 changes of its own since): "
        f"{seconds:.1f} s; {len(output['plan']['slices'])} slice(s); range files read {len(read_ranges)} "
        f"({len(set(read_ranges))} distinct), written {len(written_ranges)}; the result has {len(after)} ranges: "
        f"{len({r.id for r in after} & {r.id for r in before})} the destination's, "
        f"{len({r.id for r in after} & {r.id for r in sources} - {r.id for r in before})} the source's, "
        f"{len({r.id for r in after} - {r.id for r in before} - {r.id for r in sources})} new"
    )
    for name, values in sorted(peaks.items()):
        print(f"  peak traced memory {name}: max {max(values) / 2**20:.1f} MiB over {len(values)} run(s)")


def hundred(g, blocks, peaks, sfn, arn, slices, count, label, positions) -> None:  # type: ignore[no-untyped-def]
    """100 changes onto the committed branch, with a cold cache (as a new Lambda container)."""
    before = g.ports.committed.ranges("s3://bench-data/bench", g.commits.get_commit("bench", "main").meta_range_id)
    peaks.clear()
    blocks.reads.clear()
    blocks.writes.clear()
    g.ports.committed.storage.clear_cache()  # cold, as in a new Lambda container: every read is counted
    for i in positions:
        key = Key(f"data/year={i % 7}/part-{i:07d}.parquet")
        g.ports.staging.set(
            g.branches.get_branch("bench", "main").staging_token,
            StagedEntry(key, Entry(f"s3://bench-data/bench/data/new{i:x}", 7, f"{i + 1:032x}", 2)),
        )
    started = time.perf_counter()
    run(sfn, arn, f"hundred-{positions[0]}", slices)
    small_seconds = time.perf_counter() - started
    ranges = before
    head = g.commits.get_commit("bench", "main")
    new_ranges = g.ports.committed.ranges("s3://bench-data/bench", head.meta_range_id)
    range_ids = {r.id for r in ranges} | {r.id for r in new_ranges}
    read_ranges = [a for a in blocks.reads if a in range_ids]
    written_ranges = [a for a in blocks.writes if a in range_ids]
    changed = len({r.id for r in new_ranges} - {r.id for r in ranges})
    print(
        f"100 changes {label} onto the {count:,}-object branch: {small_seconds:.1f} s; range files read "
        f"{len(read_ranges)} ({len(set(read_ranges))} distinct), written {len(written_ranges)} of "
        f"{len(new_ranges)} ranges ({changed} new ids); metarange files read "
        f"{len(blocks.reads) - len(read_ranges)}, written {len(blocks.writes) - len(written_ranges)}"
    )
    for name, values in sorted(peaks.items()):
        print(f"  peak traced memory {name}: max {max(values) / 2**20:.1f} MiB over {len(values)} run(s)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200_000, int(sys.argv[2]) if len(sys.argv) > 2 else 16)
