"""Commit N staged objects through the commit workflow ON THE EMBEDDED LOCAL STACK, then 100 changes onto that
branch (spread over the key space, then on consecutive keys); prints timings, the peak memory of each task and
the range files each 100-change commit read and wrote.

Usage: .venv/bin/python bench/commit_workflow_stack.py [N] [SLICES]   (default 1,000,000 objects, 16 slices)

What runs where:
- ``LocalStack(api_port=0)``: moto's server (DynamoDB, S3, Step Functions with its ASL interpreter, Lambda) and
  the Lambda app behind the lakeFS API, in this process. moto's DynamoDB queries go through
  lakelet/stack/moto_speedups.py, as always on the local stack.
- Staging: the N objects are staged straight into the DynamoDB staging table with the stack's own
  ``graveler.staging.set_many`` (DynamoStagingStore: batch writes of 25), in chunks. Uploading them through the
  API would only add N object PUTs that a commit never reads: their physical addresses are fake. The 100-change
  batches are real API calls (uploads with data, deletes).
- Commits: POST /api/v1/repositories/{r}/branches/main/commits/async, then GET .../commits/status?id= until
  completed. The stack runs with LAKELET_COMMIT_WORKFLOW_THRESHOLD=50, so every commit here above 50 staged
  changes (all of them) runs the commit state machine: Seal, Plan, a Map of BuildSlice, Finish, Drop.
- Tasks: moto's interpreter invokes the Lambda tasks; the bench routes each invoke to a pool of worker
  processes (SLICES of them, started ahead and kept warm, as Lambda containers would be), which run the same
  handler (chalicelib/workflows/commit.py) with services built from the stack's environment, talking to moto
  over HTTP. Each task builds its services afresh, so it starts with a cold range cache (as a new container),
  and reports its own memory figures: the peak
  RSS of its process during the task (VmHWM, reset before the task through /proc/self/clear_refs), the RSS when
  it began, and the peak of Python allocations during the task (tracemalloc, started and stopped around it).
  Because a task is alone in its process, these figures are the task's own; moto's work for it (answering its
  queries and PUTs) is done in the stack's process and is not in them. tracemalloc is on during every task, so
  task and commit times include its overhead (they are upper bounds). The state's ``max_slices`` is set to
  SLICES by the routed Plan task (the API does not take it).
- Range files: each worker counts the block store's reads and writes under ``<namespace>/_lakefs/`` during its
  task; ranges and metaranges are told apart by the range ids the metaranges before and after list.
- The stack's own process: its RSS and peak RSS (ru_maxrss) are printed too; they hold moto's N items.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import re
import resource
import sys
import threading
import time
import tracemalloc
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import requests

from chalicelib import wiring
from chalicelib.adapters.dynamodb.staging import DynamoStagingStore
from chalicelib.graveler.plan_json import Json
from chalicelib.graveler.records import (
    BranchID,
    Entry,
    Key,
    RepositoryID,
    StagedEntry,
    StagingToken,
)
from chalicelib.graveler.staging import branch_tokens, staged_changes
from chalicelib.workflows import tasks as workflow_tasks
from lakelet.stack import moto_speedups
from lakelet.stack.devserver import DechunkingRequestHandler
from lakelet.stack.local import LocalStack
from lakelet.stack.stepfunctions_local import route_lambda_invokes

REPO = "bench-stack"
BRANCH = "main"
THRESHOLD = "50"
# Both workflows run above 50 changes: every commit and merge here takes them.
THRESHOLDS = ("LAKELET_COMMIT_WORKFLOW_THRESHOLD", "LAKELET_MERGE_WORKFLOW_THRESHOLD")
STAGE_CHUNK = 10_000
MIB = 2**20


def key_of(i: int) -> str:
    # As bench/commit_workflow.py: i % 7 spreads consecutive i over 7 prefixes.
    return f"data/year={i % 7}/part-{i:07d}.parquet"


def new_key_of(i: int) -> str:
    return f"data/year={i % 7}/part-{i:07d}-new.parquet"


def _status_kib(field: str) -> int:
    with open("/proc/self/status") as status:
        found = re.search(rf"^{field}:\s+(\d+) kB", status.read(), re.MULTILINE)
    return int(found.group(1)) if found else 0


# ---- the worker processes (one task at a time each, like a Lambda container) --------------------------------


def _worker_init() -> None:
    logging.disable(logging.WARNING)
    wiring.get_services()  # built from the environment the stack set (moto's URL, tables, bucket, KMS key)


def _warm(_: int) -> int:
    time.sleep(0.3)  # long enough that each warm-up call lands on its own worker
    return os.getpid()


def _run_task(name: str, event: Json) -> Json:
    # Services built afresh: a cold range cache, as in a new container, so every read of a range is counted.
    wiring.set_services(None)
    services = wiring.get_services()
    blocks = services.graveler.blocks
    reads: list[str] = []
    writes: list[str] = []
    get, put = blocks.get, blocks.put

    def counting_get(address: str, start: int | None = None, end: int | None = None) -> bytes:
        if "/_lakefs/" in address:
            reads.append(address.rsplit("/", 1)[-1])
        return get(address, start, end)

    def counting_put(address: str, data: bytes) -> Any:
        if "/_lakefs/" in address:
            writes.append(address.rsplit("/", 1)[-1])
        return put(address, data)

    blocks.get = counting_get  # type: ignore[method-assign]
    blocks.put = counting_put  # type: ignore[method-assign]
    try:
        with open("/proc/self/clear_refs", "w") as clear:
            clear.write("5")  # resets VmHWM to the current RSS
        rss_start = _status_kib("VmRSS")
        tracemalloc.start()
        started = time.perf_counter()
        try:
            result = workflow_tasks.HANDLERS[name](event)
        finally:
            seconds = time.perf_counter() - started
            traced_peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
    finally:
        del blocks.get, blocks.put  # back to the class's methods
    return {
        "result": result,
        "name": name,
        "pid": os.getpid(),
        "seconds": seconds,
        "rss_start_kib": rss_start,
        "hwm_kib": _status_kib("VmHWM"),
        "traced_peak": traced_peak,
        "reads": reads,
        "writes": writes,
    }


class Tasks:
    """Routes the workflow's Lambda invokes to the worker pool and keeps what each task reported."""

    def __init__(self, slices: int) -> None:
        self.slices = slices
        self.pool = ProcessPoolExecutor(
            slices, mp_context=multiprocessing.get_context("spawn"), initializer=_worker_init
        )
        self.lock = threading.Lock()
        self.runs: list[Json] = []

    def warm_up(self) -> int:
        return len(set(self.pool.map(_warm, range(self.slices * 2))))

    def handlers(self) -> dict[str, Callable[[Json], Any]]:
        def routed(name: str) -> Callable[[Json], Any]:
            def invoke(event: Json) -> Any:
                if name in ("commit_plan", "merge_plan"):
                    event = {**event, "max_slices": self.slices}
                outcome = self.pool.submit(_run_task, name, event).result()
                with self.lock:
                    self.runs.append(outcome)
                return outcome["result"]

            return invoke

        return {name: routed(name) for name in workflow_tasks.HANDLERS}

    def take(self) -> list[Json]:
        with self.lock:
            runs, self.runs = self.runs, []
        return runs


# ---- the stack side ---------------------------------------------------------------------------------------


class Api:
    def __init__(self, stack: LocalStack) -> None:
        self.base = stack.api_url
        self.session = requests.Session()
        self.session.trust_env = False  # loopback: no proxy from the environment
        self.session.auth = (stack.credentials.access_key_id, stack.credentials.secret_access_key)

    def call(self, method: str, path: str, expect: int, **kwargs: Any) -> Any:
        response = self.session.request(method, self.base + path, timeout=600, **kwargs)
        if response.status_code != expect:
            raise SystemExit(f"{method} {path}: {response.status_code} {response.text[:500]}")
        if not response.content:
            return None
        # Creating a branch answers with the commit id as plain text, as lakeFS does.
        return response.json() if "json" in response.headers.get("Content-Type", "") else response.text

    def commit(self, message: str, poll: float, branch: str = BRANCH) -> tuple[float, Json]:
        return self._task(f"/repositories/{REPO}/branches/{branch}/commits", message, poll)

    def merge(self, source: str, poll: float) -> tuple[float, Json]:
        return self._task(f"/repositories/{REPO}/refs/{source}/merge/{BRANCH}", f"merge {source}", poll)

    def _task(self, path: str, message: str, poll: float) -> tuple[float, Json]:
        """POST {path}/async, then GET {path}/status until completed; the seconds and the status. Fails unless
        the task ran as a workflow and succeeded."""
        started = time.perf_counter()
        task = self.call("POST", f"{path}/async", 202, json={"message": message})["id"]
        while True:
            status = self.call("GET", f"{path}/status", 200, params={"id": task})
            if status["completed"]:
                break
            time.sleep(poll)
        seconds = time.perf_counter() - started
        if status.get("error") or not str(task).startswith("w-"):
            raise SystemExit(f"{message}: task {task} ended with {status}")
        return seconds, status


def stage_bulk(namespace: str, count: int) -> float:
    graveler = wiring.get_services().graveler
    staging = graveler.staging
    assert isinstance(staging, DynamoStagingStore)
    token = graveler.refs.get_branch(RepositoryID(REPO), BranchID(BRANCH)).staging_token
    started = time.perf_counter()
    for start in range(0, count, STAGE_CHUNK):
        staging.set_many(
            token,
            [
                StagedEntry(
                    Key(key_of(i)),
                    Entry(
                        f"{namespace}/data/bench/{i:07x}",
                        1000 + i % 1000,
                        f"{i:032x}",
                        1_700_000_000,
                        "application/octet-stream",
                    ),
                )
                for i in range(start, min(count, start + STAGE_CHUNK))
            ],
        )
        done = min(count, start + STAGE_CHUNK)
        if done % (STAGE_CHUNK * 10) == 0 or done == count:
            elapsed = time.perf_counter() - started
            print(f"  staged {done:,} in {elapsed:.0f} s ({done / elapsed:,.0f}/s)", flush=True)
    return time.perf_counter() - started


def check_commit(namespace: str, expected_objects: int, sealed: str) -> tuple[int, int]:
    """(objects in the head commit, by its ranges' counts; ranges). Fails if anything is left staged."""
    graveler = wiring.get_services().graveler
    head = graveler.get_commit(REPO, BRANCH)
    ranges = graveler.committed.ranges(namespace, head.meta_range_id)
    objects = sum(r.count for r in ranges)
    if objects != expected_objects:
        raise SystemExit(f"the head commit has {objects} objects, expected {expected_objects}")
    branch = graveler.refs.get_branch(RepositoryID(REPO), BranchID(BRANCH))
    left = next(iter(staged_changes(graveler.staging, branch_tokens(branch))), None)
    if branch.sealed_tokens or left is not None:
        raise SystemExit(f"still staged after the commit: sealed {branch.sealed_tokens}, first change {left}")
    if sealed and next(iter(graveler.staging.iterate(StagingToken(sealed))), None) is not None:
        raise SystemExit(f"the committed token {sealed} was not dropped")
    return objects, len(ranges)


def range_ids(namespace: str) -> set[str]:
    graveler = wiring.get_services().graveler
    head = graveler.get_commit(REPO, BRANCH)
    return {r.id for r in graveler.committed.ranges(namespace, head.meta_range_id)}


def sealed_token(runs: list[Json]) -> str:
    return next((str(r["result"]["sealed_token"]) for r in runs if r["name"] == "commit_seal"), "")


def task_table(runs: list[Json]) -> list[str]:
    by_name: dict[str, list[Json]] = defaultdict(list)
    for run in runs:
        by_name[run["name"]].append(run)
    lines = [
        (
            f"    {'task':<20} {'runs':>4} {'max s':>8} {'sum s':>8} {'peak RSS MiB':>13} {'RSS at start':>13} "
            f"{'peak-start':>11} {'py peak MiB':>12}"
        )
    ]
    for name in workflow_tasks.HANDLERS:
        done = by_name.get(name, [])
        if not done:
            continue
        worst = max(done, key=lambda r: r["hwm_kib"] - r["rss_start_kib"])
        lines.append(
            f"    {name:<20} {len(done):>4} {max(r['seconds'] for r in done):>8.1f} "
            f"{sum(r['seconds'] for r in done):>8.1f} {max(r['hwm_kib'] for r in done) / 1024:>13.1f} "
            f"{worst['rss_start_kib'] / 1024:>13.1f} {(worst['hwm_kib'] - worst['rss_start_kib']) / 1024:>11.1f} "
            f"{max(r['traced_peak'] for r in done) / MIB:>12.1f}"
        )
    return lines


def main_rss() -> str:
    return (
        f"stack process RSS {_status_kib('VmRSS') / 1024:,.0f} MiB, "
        f"peak {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MiB"
    )


def hundred(
    api: Api, tasks: Tasks, namespace: str, label: str, positions: list[int], objects: int
) -> tuple[list[str], int]:
    """Stages 100 changes through the API (a third deleted, a third overwritten, a third new keys next to
    existing ones), commits them through the workflow, and reports; returns the lines and the new object count."""
    before = range_ids(namespace)
    added = removed = 0
    started = time.perf_counter()
    for n, i in enumerate(positions):
        path = key_of(i)
        if n % 3 == 0:
            api.call("DELETE", f"/repositories/{REPO}/branches/{BRANCH}/objects", 204, params={"path": path})
            removed += 1
        else:
            if n % 3 == 2:
                path = new_key_of(i)
                added += 1
            api.call(
                "POST",
                f"/repositories/{REPO}/branches/{BRANCH}/objects",
                201,
                params={"path": path},
                data=f"{label} {i}\n".encode(),
                headers={"Content-Type": "application/octet-stream"},
            )
    stage_seconds = time.perf_counter() - started
    tasks.take()
    seconds, _ = api.commit(f"100 changes {label}", poll=0.2)
    runs = tasks.take()
    objects += added - removed
    total, ranges = check_commit(namespace, objects, sealed_token(runs))
    after = range_ids(namespace)
    known = before | after
    reads = [a for r in runs for a in r["reads"]]
    writes = [a for r in runs for a in r["writes"]]
    range_reads = [a for a in reads if a in known]
    range_writes = [a for a in writes if a in known]
    slices = sum(1 for r in runs if r["name"] == "commit_build_slice")
    lines = [
        (
            f"100 changes {label} ({removed} deleted, {len(positions) - removed - added} overwritten, {added} new; "
            f"staged through the API in {stage_seconds:.1f} s):"
        ),
        f"  workflow commit: {seconds:.1f} s; {slices} slice(s); now {total:,} objects in {ranges} ranges",
        (
            f"  range files read {len(range_reads)} ({len(set(range_reads))} distinct), written {len(range_writes)} "
            f"({len(after - before)} range ids new in the metarange, {len(before - after)} gone)"
        ),
        (
            f"  metarange files read {len(reads) - len(range_reads)}, written {len(writes) - len(range_writes)} "
            f"(base, one per slice, the result)"
        ),
        *task_table(runs),
    ]
    return lines, objects


def merge(api: Api, tasks: Tasks, namespace: str, count: int, objects: int) -> tuple[list[str], int]:
    """A branch with 100 changes spread over the key space, merged through the merge workflow into main, which
    has 100 changes of its own on consecutive keys since; returns the lines and the new object count."""
    graveler = wiring.get_services().graveler
    api.call("POST", f"/repositories/{REPO}/branches", 201, json={"name": "feature", "source": BRANCH})
    for branch, positions in (
        ("feature", range(3, count, max(1, count // 100))),
        (BRANCH, range(count // 3, count // 3 + 100)),
    ):
        for i in list(positions)[:100]:
            api.call(
                "POST",
                f"/repositories/{REPO}/branches/{branch}/objects",
                201,
                params={"path": key_of(i)},
                data=f"{branch} {i}\n".encode(),
                headers={"Content-Type": "application/octet-stream"},
            )
        api.commit(f"100 overwrites on {branch}", poll=0.2, branch=branch)
    before = range_ids(namespace)
    source = graveler.get_commit(REPO, "feature")
    sources = {r.id for r in graveler.committed.ranges(namespace, source.meta_range_id)}
    tasks.take()
    seconds, status = api.merge("feature", poll=0.2)
    runs = tasks.take()
    head = graveler.get_commit(REPO, BRANCH)
    if status["result"]["reference"] != head.id or head.parents != (head.parents[0], source.id):
        raise SystemExit(f"the merge did not land as expected: {status}")
    total, ranges = check_commit(namespace, objects, "")
    after = range_ids(namespace)
    known = before | after | sources
    reads = [a for r in runs for a in r["reads"]]
    writes = [a for r in runs for a in r["writes"]]
    range_reads = [a for a in reads if a in known]
    range_writes = [a for a in writes if a in known]
    slices = sum(1 for r in runs if r["name"] == "merge_build_slice")
    lines = [
        "merge of a branch with 100 overwrites spread over the key space into main (100 overwrites of its own since):",
        f"  merge workflow: {seconds:.1f} s; {slices} slice(s); now {total:,} objects in {ranges} ranges",
        (
            f"  range files read {len(range_reads)} ({len(set(range_reads))} distinct), written {len(range_writes)}; "
            f"the result's ranges: {len(after & before)} the destination's, {len((after & sources) - before)} the "
            f"source's, {len(after - before - sources)} new"
        ),
        *task_table(runs),
    ]
    return lines, total


def main(count: int, slices: int) -> None:
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    # One line per API request (the status polls) would bury the figures.
    DechunkingRequestHandler.log_message = lambda self, *args: None  # type: ignore[method-assign,assignment]
    saved = {name: os.environ.get(name) for name in THRESHOLDS}
    os.environ.update(dict.fromkeys(THRESHOLDS, THRESHOLD))
    report: list[str] = []

    def say(line: str) -> None:
        report.append(line)
        print(line, flush=True)

    try:
        with LocalStack(api_port=0) as stack:
            print(f"stack up at {stack.endpoint} (moto {stack.moto_url}); {main_rss()}", flush=True)
            tasks = Tasks(slices)
            print(f"{tasks.warm_up()} worker processes warm", flush=True)
            api = Api(stack)
            namespace = f"{stack.default_namespace_prefix}/{REPO}"
            api.call(
                "POST",
                "/repositories",
                201,
                json={"name": REPO, "storage_namespace": namespace, "default_branch": BRANCH},
            )

            with route_lambda_invokes(tasks.handlers()):
                print(f"staging {count:,} objects with set_many ...", flush=True)
                stage_seconds = stage_bulk(namespace, count)
                say(f"N = {count:,} objects, {slices} slices at most, workflow threshold {THRESHOLD}")
                say(
                    f"staging {count:,} objects (set_many, batch writes of 25): {stage_seconds:.1f} s "
                    f"({count / stage_seconds:,.0f}/s); {main_rss()}"
                )
                print("committing through the workflow ...", flush=True)
                queries = dict(moto_speedups.counters)
                seconds, _status = api.commit(f"{count} objects", poll=2.0)
                runs = tasks.take()
                objects, ranges = check_commit(namespace, count, sealed_token(runs))
                say(
                    f"commit of {count:,} staged objects through the workflow: {seconds:.1f} s; head has "
                    f"{objects:,} objects in {ranges} ranges; nothing left staged; {main_rss()}"
                )
                say(
                    f"  DynamoDB queries during it: {moto_speedups.counters['fast'] - queries['fast']:,} answered "
                    f"by moto_speedups, {moto_speedups.counters['moto'] - queries['moto']:,} by moto's own query"
                )
                for line in task_table(runs):
                    say(line)

                spread = list(range(0, count, max(1, count // 100)))[:100]
                touched = set(spread)
                start = count // 2 + 1
                consecutive = [i for i in range(start, count, 7) if i not in touched][:100]
                for label, positions in (("spread over the key space", spread), ("on consecutive keys", consecutive)):
                    lines, objects = hundred(api, tasks, namespace, label, positions, objects)
                    for line in lines:
                        say(line)
                lines, objects = merge(api, tasks, namespace, count, objects)
                for line in lines:
                    say(line)
                say(main_rss())
            tasks.pool.shutdown()
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    print("\n==== summary ====")
    print("\n".join(report))
    print("Task memory: 'peak RSS' is the worker process's peak resident set during the task (VmHWM after a reset),")
    print("'RSS at start' its resident set when the task began (interpreter, imports, clients, what earlier tasks")
    print("left), 'peak-start' their difference for the task with the largest one, 'py peak' the peak of Python")
    print("allocations made during the task (tracemalloc). moto's work for a task is in the stack process, not here.")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000, int(sys.argv[2]) if len(sys.argv) > 2 else 16)
