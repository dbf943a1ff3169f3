"""Commit N staged objects through the commit workflow ON THE EMBEDDED LOCAL STACK, then 100 changes onto that
branch (spread over the key space, then on consecutive keys); prints timings, the peak memory of each task and
the range files each 100-change commit read and wrote.

Usage: .venv/bin/python bench/commit_workflow_stack.py [N] [SLICES] [--aws-limits] [--json PATH] [--no-drop]
(default 1,000,000 objects, 16 slices)

``--aws-limits``: the stack enforces what ``lakelet up --aws-limits`` enforces (lakelet/stack/aws_limits.py): API
Gateway's and Lambda's limits in front of the API, and a state over 256 KiB fails the execution. Each workflow task
is cut at its function's deployed timeout (.chalice/config.json) in the worker that runs it, counted from its start
there, and fails as a timed-out Lambda does (Sandbox.Timedout, which the state machine's Retry and Catch see): on
AWS each of the Map's 16 tasks has a vCPU of its own, here --workers tasks share the cores, so a task is charged
for its own work, not for the tasks queued with it (the stack's own cut, from the invoke, would count the queue).
``--json PATH`` writes the figures (times, per-task times and memory, RSS) as JSON; bench/results-stack-commit.json
keeps the runs recorded in docs/workflows.md. Unless ``--no-drop``, the committed token's rows are then
dropped as the scheduled ``drop_retired`` function drops them, run after run within its budget of
chalicelib/gc/schedule.py's DROP_BUDGET_SECONDS, and each run's time is reported.

What runs where:
- ``LocalStack(api_port=0)``: moto's server (DynamoDB, S3, Step Functions with its ASL interpreter, Lambda) and
  the Lambda app behind the lakeFS API, in this process. moto's DynamoDB queries go through
  lakelet/stack/moto_speedups.py, as always on the local stack.
- Staging: the N objects are staged straight into the DynamoDB staging table with the stack's own
  ``engine.ports.staging.set_many`` (DynamoStagingStore: batch writes of 25), in chunks of 10,000 written by the worker
  processes at once (the encoding off the stack's process, which answers them). Uploading them through the
  API would only add N object PUTs that a commit never reads: their physical addresses are fake. The 100-change
  batches are real API calls (uploads with data, deletes).
- Commits: POST /api/v1/repositories/{r}/branches/main/commits/async, then GET .../commits/status?id= until
  completed. The stack runs with LAKELET_COMMIT_WORKFLOW_THRESHOLD=50, so every commit here above 50 staged
  changes (all of them) runs the commit state machine: Seal, Plan, a Map of BuildSlice, Finish, Landed. The commit
  retires the sealed token (it stays readable for its grace period); the drop is the sweep's, measured apart.
- Tasks: moto's interpreter invokes the Lambda tasks; the bench routes each invoke to a pool of worker
  processes (WORKERS of them, the machine's cores by default, started ahead and kept warm, as Lambda containers
  would be; the Map's other slices wait for a free one), which run the same
  handler (chalicelib/workflows/commit.py) with services built from the stack's environment, talking to moto
  over HTTP. Each task builds its services afresh, so it starts with a cold range cache (as a new container),
  and reports its own memory figures: the peak
  RSS of its process during the task (VmHWM, reset before the task through /proc/self/clear_refs), the RSS when
  it began, and the peak of Python allocations during the task above what was allocated when it began
  (tracemalloc, on for the worker's life, its peak reset before each task).
  Because a task is alone in its process, these figures are the task's own; moto's work for it (answering its
  queries and PUTs) is done in the stack's process and is not in them. tracemalloc is on in every worker, so
  task and commit times include its overhead (they are upper bounds). The state's ``max_slices`` is set to
  SLICES by the routed Plan task (the API does not take it).
- Range files: each worker counts the block store's reads and writes under ``<namespace>/_lakefs/`` during its
  task; ranges and metaranges are told apart by the range ids the metaranges before and after list.
- The stack's own process: its RSS and peak RSS (ru_maxrss) are printed too; they hold moto's N items.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import multiprocessing
import os
import re
import resource
import signal
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
from chalicelib.gc.schedule import DROP_BUDGET_SECONDS
from chalicelib.graveler.branches.branch_moves import retired_tokens
from chalicelib.graveler.records import (
    BranchID,
    Entry,
    Key,
    RepositoryID,
    StagedEntry,
    StagingToken,
)
from chalicelib.graveler.runs.plan_json import Json
from chalicelib.graveler.writes.deferred_drop import drop_within
from chalicelib.graveler.writes.staging import branch_tokens, staged_changes
from chalicelib.workflows import tasks as workflow_tasks
from lakelet.stack import moto_speedups
from lakelet.stack.aws_limits import LAMBDA_TIMEOUT_ERROR, AwsLimits
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
    # On for the worker's life, its peak reset per task: stopping it while a task's threads (a sharded token's
    # queries, the drop's deletes) still allocate crashed the interpreter (a segfault in CPython 3.12.1).
    tracemalloc.start()
    wiring.get_services()  # built from the environment the stack set (moto's URL, tables, bucket, KMS key)


def _warm(_: int) -> int:
    time.sleep(0.3)  # long enough that each warm-up call lands on its own worker
    return os.getpid()


class _Cut(BaseException):
    """Raised in a worker's task at its function's deployed timeout (past the application's ``except Exception``,
    as lakelet/stack/lambda_clock.py cuts a task on the stack)."""


def _cut(signum: int, frame: Any) -> None:
    raise _Cut()


# What the routed invoke raises for a task its timeout cut: the stack's Lambda answers its class name as the
# errorType, and a timed-out Lambda's errorType is this name, which the state machines' Retry and Catch see.
TimedOut = type(LAMBDA_TIMEOUT_ERROR, (Exception,), {})


def _run_task(name: str, event: Json, timeout: float | None = None) -> Json:
    """The task in this worker; with ``timeout``, cut there (SIGALRM) and reported as timed out."""
    if timeout is None:
        return _measured_task(name, event)
    signal.signal(signal.SIGALRM, _cut)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    started = time.perf_counter()
    try:
        return _measured_task(name, event)
    except _Cut:
        return {"name": name, "timed_out": True, "seconds": time.perf_counter() - started, "pid": os.getpid()}
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def _measured_task(name: str, event: Json) -> Json:
    # Services built afresh: a cold range cache, as in a new container, so every read of a range is counted.
    wiring.set_services(None)
    services = wiring.get_services()
    blocks = services.engine.ports.blocks
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
        tracemalloc.reset_peak()
        traced_start = tracemalloc.get_traced_memory()[0]
        started = time.perf_counter()
        try:
            result = workflow_tasks.HANDLERS[name](event)
        finally:
            seconds = time.perf_counter() - started
            traced_peak = tracemalloc.get_traced_memory()[1] - traced_start
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


def _drop_run(token: str, budget: float, timeout: float | None) -> Json:
    """One run of the drop_retired sweep's work on one token, within its budget, in a worker (as its Lambda),
    cut at ``timeout`` (its function's) if it runs that long."""
    wiring.set_services(None)
    staging = wiring.get_services().engine.ports.staging
    with open("/proc/self/clear_refs", "w") as clear:
        clear.write("5")
    started = time.perf_counter()
    if timeout is not None:
        signal.signal(signal.SIGALRM, _cut)
        signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        done = drop_within(staging, StagingToken(token), time.time() + budget, time.time)
    except _Cut:
        return {"seconds": time.perf_counter() - started, "done": False, "timed_out": True, "hwm_kib": 0}
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    return {"seconds": time.perf_counter() - started, "done": done, "hwm_kib": _status_kib("VmHWM")}


class Tasks:
    """Routes the workflow's Lambda invokes to the worker pool and keeps what each task reported. ``timeouts``
    (function name -> seconds): each task is cut at its function's, counted from when it starts on a worker."""

    def __init__(self, slices: int, workers: int | None = None, timeouts: dict[str, float] | None = None) -> None:
        self.slices = slices
        self.workers = workers or slices  # one a slice unless told (bench/import_1m.py runs them all at once)
        self.timeouts = timeouts or {}
        self.pool = ProcessPoolExecutor(
            self.workers, mp_context=multiprocessing.get_context("spawn"), initializer=_worker_init
        )
        self.lock = threading.Lock()
        self.runs: list[Json] = []

    def warm_up(self) -> int:
        return len(set(self.pool.map(_warm, range(self.workers * 2))))

    def handlers(self) -> dict[str, Callable[[Json], Any]]:
        def routed(name: str) -> Callable[[Json], Any]:
            def invoke(event: Json) -> Any:
                if name in ("commit_plan", "merge_plan"):
                    event = {**event, "max_slices": self.slices}
                outcome = self.pool.submit(_run_task, name, event, self.timeouts.get(name)).result()
                with self.lock:
                    self.runs.append(outcome)
                if outcome.get("timed_out"):
                    raise TimedOut(f"Task timed out after {self.timeouts[name]:.2f} seconds")
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


def _stage_chunk(token: str, namespace: str, start: int, stop: int) -> int:
    """Stages objects start..stop-1 with the stack's own set_many (batch writes of 25), in a worker."""
    staging = wiring.get_services().engine.ports.staging
    assert isinstance(staging, DynamoStagingStore)
    staging.set_many(
        StagingToken(token),
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
            for i in range(start, stop)
        ],
    )
    return stop - start


def stage_bulk(tasks: Tasks, namespace: str, count: int) -> float:
    """Stages ``count`` objects straight into the branch's token, chunks written by the worker processes at once
    (their batch writes' encoding off the stack's process, which answers them)."""
    engine = wiring.get_services().engine
    token = engine.ports.refs.get_branch(RepositoryID(REPO), BranchID(BRANCH)).staging_token
    started = time.perf_counter()
    chunks = [(start, min(count, start + STAGE_CHUNK)) for start in range(0, count, STAGE_CHUNK)]
    done = 0
    for staged in tasks.pool.map(_stage_chunk, *zip(*[(token, namespace, a, b) for a, b in chunks], strict=True)):
        done += staged
        if done % (STAGE_CHUNK * 10) == 0 or done == count:
            elapsed = time.perf_counter() - started
            print(f"  staged {done:,} in {elapsed:.0f} s ({done / elapsed:,.0f}/s)", flush=True)
    return time.perf_counter() - started


def check_commit(namespace: str, expected_objects: int, sealed: str) -> tuple[int, int]:
    """(objects in the head commit, by its ranges' counts; ranges). Fails if anything is left staged."""
    engine = wiring.get_services().engine
    head = engine.commits.get_commit(REPO, BRANCH)
    ranges = engine.ports.committed.ranges(namespace, head.meta_range_id)
    objects = sum(r.count for r in ranges)
    if objects != expected_objects:
        raise SystemExit(f"the head commit has {objects} objects, expected {expected_objects}")
    branch = engine.ports.refs.get_branch(RepositoryID(REPO), BranchID(BRANCH))
    left = next(iter(staged_changes(engine.ports.staging, branch_tokens(branch))), None)
    if branch.sealed_tokens or left is not None:
        raise SystemExit(f"still staged after the commit: sealed {branch.sealed_tokens}, first change {left}")
    # The commit retires its sealed token (readable for the grace period); the scheduled sweep drops it later.
    if sealed and StagingToken(sealed) not in retired_tokens(branch):
        raise SystemExit(f"the committed token {sealed} is not retired on the branch: {branch.retired_tokens}")
    return objects, len(ranges)


def range_ids(namespace: str) -> set[str]:
    engine = wiring.get_services().engine
    head = engine.commits.get_commit(REPO, BRANCH)
    return {r.id for r in engine.ports.committed.ranges(namespace, head.meta_range_id)}


def sealed_token(runs: list[Json]) -> str:
    return next((str(r["result"]["sealed_token"]) for r in runs if r["name"] == "commit_seal"), "")


def task_figures(runs: list[Json]) -> dict[str, Json]:
    """Per task name: its runs (and how many its timeout cut), the longest and the summed time, and its memory
    (of the runs that ended)."""
    by_name: dict[str, list[Json]] = defaultdict(list)
    for run in runs:
        by_name[run["name"]].append(run)
    figures: dict[str, Json] = {}
    for name in workflow_tasks.HANDLERS:
        every = by_name.get(name, [])
        done = [r for r in every if not r.get("timed_out")]
        if not every:
            continue
        figures[name] = {
            "runs": len(every),
            "cut": len(every) - len(done),
            "max_seconds": round(max(r["seconds"] for r in every), 2),
            "sum_seconds": round(sum(r["seconds"] for r in every), 2),
        }
        if done:
            worst = max(done, key=lambda r: r["hwm_kib"] - r["rss_start_kib"])
            figures[name].update(
                {
                    "peak_rss_mib": round(max(r["hwm_kib"] for r in done) / 1024, 1),
                    "rss_at_start_mib": round(worst["rss_start_kib"] / 1024, 1),
                    "peak_minus_start_mib": round((worst["hwm_kib"] - worst["rss_start_kib"]) / 1024, 1),
                    "python_peak_mib": round(max(r["traced_peak"] for r in done) / MIB, 1),
                }
            )
    return figures


def task_table(runs: list[Json]) -> list[str]:
    lines = [
        (
            f"    {'task':<20} {'runs':>4} {'cut':>4} {'max s':>8} {'sum s':>8} {'peak RSS MiB':>13} "
            f"{'RSS at start':>13} {'peak-start':>11} {'py peak MiB':>12}"
        )
    ]
    for name, f in task_figures(runs).items():
        memory = (
            f"{f['peak_rss_mib']:>13.1f} {f['rss_at_start_mib']:>13.1f} {f['peak_minus_start_mib']:>11.1f} "
            f"{f['python_peak_mib']:>12.1f}"
            if "peak_rss_mib" in f
            else f"{'(every run cut)':>52}"
        )
        lines.append(
            f"    {name:<20} {f['runs']:>4} {f['cut']:>4} {f['max_seconds']:>8.1f} {f['sum_seconds']:>8.1f} {memory}"
        )
    return lines


def stack_rss_mib() -> tuple[float, float]:
    return _status_kib("VmRSS") / 1024, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main_rss() -> str:
    return (
        f"stack process RSS {_status_kib('VmRSS') / 1024:,.0f} MiB, "
        f"peak {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MiB"
    )


def hundred(
    api: Api, tasks: Tasks, namespace: str, label: str, positions: list[int], objects: int, record: Json
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
            record.setdefault("deleted", []).append(i)
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
    record[f"100 changes {label}"] = {"seconds": round(seconds, 2), "slices": slices, "tasks": task_figures(runs)}
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


def merge(api: Api, tasks: Tasks, namespace: str, count: int, objects: int, record: Json) -> tuple[list[str], int]:
    """A branch with 100 changes spread over the key space, merged through the merge workflow into main, which
    has 100 changes of its own on consecutive keys since; returns the lines and the new object count."""
    engine = wiring.get_services().engine
    api.call("POST", f"/repositories/{REPO}/branches", 201, json={"name": "feature", "source": BRANCH})
    # Overwrites of objects that exist: never a key the 100-change commits deleted (that would add an object).
    gone = set(record.get("deleted", []))
    feature = [i for i in range(3, count, max(1, count // 100)) if i not in gone][:100]
    # main's own overwrites stay off the feature's keys (at small N the two ranges would meet: a conflict).
    taken = set(feature) | gone
    own = [i for i in range(count // 3, count) if i not in taken][:100]
    for branch, positions in (("feature", feature), (BRANCH, own)):
        for i in positions:
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
    source = engine.commits.get_commit(REPO, "feature")
    sources = {r.id for r in engine.ports.committed.ranges(namespace, source.meta_range_id)}
    tasks.take()
    seconds, status = api.merge("feature", poll=0.2)
    runs = tasks.take()
    head = engine.commits.get_commit(REPO, BRANCH)
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
    record["merge"] = {"seconds": round(seconds, 2), "slices": slices, "tasks": task_figures(runs)}
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


def drop(tasks: Tasks, token: str, record: Json) -> list[str]:
    """Drops the committed token's rows as the drop_retired schedule would: runs of at most its budget, in a
    worker, until none is left."""
    runs: list[Json] = []
    while True:
        run = tasks.pool.submit(_drop_run, token, DROP_BUDGET_SECONDS, tasks.timeouts.get("drop_retired")).result()
        runs.append(run)
        print(f"  drop run {len(runs)}: {run['seconds']:.1f} s, done {run['done']}", flush=True)
        if run["done"] or len(runs) >= 50:
            break
    if not runs[-1]["done"]:
        raise SystemExit(f"the drop of {token} did not end in {len(runs)} runs")
    if next(iter(wiring.get_services().engine.ports.staging.iterate(StagingToken(token))), None) is not None:
        raise SystemExit(f"rows of {token} are left after the drop")
    record["drop"] = {
        "runs": len(runs),
        "cut": sum(1 for r in runs if r.get("timed_out")),
        "seconds": [round(r["seconds"], 1) for r in runs],
        "budget_seconds": DROP_BUDGET_SECONDS,
        "peak_rss_mib": round(max(r["hwm_kib"] for r in runs) / 1024, 1),
    }
    return [
        (
            f"drop of the committed token (the drop_retired sweep's work, budget {DROP_BUDGET_SECONDS:g} s a run): "
            f"{len(runs)} run(s), {sum(r['seconds'] for r in runs):.1f} s in all, "
            f"longest {max(r['seconds'] for r in runs):.1f} s, "
            f"peak RSS {record['drop']['peak_rss_mib']:.0f} MiB"
        )
    ]


def main(count: int, slices: int, workers: int, aws_limits: bool, json_path: str | None, with_drop: bool) -> None:
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    # One line per API request (the status polls) would bury the figures.
    DechunkingRequestHandler.log_message = lambda self, *args: None  # type: ignore[method-assign,assignment]
    saved = {name: os.environ.get(name) for name in THRESHOLDS}
    os.environ.update(dict.fromkeys(THRESHOLDS, THRESHOLD))
    report: list[str] = []
    deployed = AwsLimits.deployed() if aws_limits else None
    # The stack cuts its API and gateway; the workflow tasks (and drop_retired's run) are cut in the worker that
    # runs them, from their start there (Tasks): each Lambda of a Map has a vCPU of its own, here ``workers`` of
    # them share the machine's cores, so a task queued behind others must not be charged for their time.
    in_workers = set(workflow_tasks.HANDLERS) | {"drop_retired"}
    limits = (
        None
        if deployed is None
        else dataclasses.replace(deployed, timeouts={k: v for k, v in deployed.timeouts.items() if k not in in_workers})
    )
    task_timeouts = {} if deployed is None else {k: v for k, v in deployed.timeouts.items() if k in in_workers}
    record: Json = {
        "generated_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "objects": count,
        "slices": slices,
        "workers": workers,
        "aws_limits": deployed.summary() if deployed is not None else None,
        "task_timeouts": task_timeouts,
        # The machine is shared: its load when the run began and ended says how much of it the run had.
        "machine": {"cpus": os.cpu_count(), "nice": os.nice(0), "load_average_start": os.getloadavg()[0]},
    }

    def say(line: str) -> None:
        report.append(line)
        print(line, flush=True)

    try:
        with LocalStack(api_port=0, aws_limits=limits) as stack:
            print(f"stack up at {stack.endpoint} (moto {stack.moto_url}); {main_rss()}", flush=True)
            if deployed is not None:
                say(deployed.summary() + f"; tasks cut in their worker ({workers} at once)")
            tasks = Tasks(slices, workers, task_timeouts)
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
                print(f"staging {count:,} objects with set_many from {workers} workers ...", flush=True)
                stage_seconds = stage_bulk(tasks, namespace, count)
                record["staging"] = {"seconds": round(stage_seconds, 1), "rate": round(count / stage_seconds)}
                record["stack_rss_mib_after_staging"] = round(stack_rss_mib()[0])
                say(f"N = {count:,} objects, {slices} slices at most, workflow threshold {THRESHOLD}")
                say(
                    f"staging {count:,} objects (set_many, batch writes of 25, {workers} workers): "
                    f"{stage_seconds:.1f} s ({count / stage_seconds:,.0f}/s); {main_rss()}"
                )
                print("committing through the workflow ...", flush=True)
                queries = dict(moto_speedups.counters)
                seconds, _status = api.commit(f"{count} objects", poll=2.0)
                runs = tasks.take()
                objects, ranges = check_commit(namespace, count, sealed_token(runs))
                record["commit"] = {
                    "seconds": round(seconds, 1),
                    "ranges": ranges,
                    "tasks": task_figures(runs),
                    "stack_rss_mib": round(stack_rss_mib()[0]),
                }
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
                if with_drop:
                    for line in drop(tasks, sealed_token(runs), record):
                        say(line)

                spread = list(range(0, count, max(1, count // 100)))[:100]
                touched = set(spread)
                start = count // 2 + 1
                consecutive = [i for i in range(start, count, 7) if i not in touched][:100]
                for label, positions in (("spread over the key space", spread), ("on consecutive keys", consecutive)):
                    lines, objects = hundred(api, tasks, namespace, label, positions, objects, record)
                    for line in lines:
                        say(line)
                lines, objects = merge(api, tasks, namespace, count, objects, record)
                for line in lines:
                    say(line)
                say(main_rss())
                record["stack_rss_mib"], record["stack_peak_rss_mib"] = map(round, stack_rss_mib())
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
    if json_path:
        record["machine"]["load_average_end"] = os.getloadavg()[0]
        record.pop("deleted", None)  # the merge's bookkeeping, not a figure
        with open(json_path, "w") as out:
            json.dump(record, out, indent=2)
            out.write("\n")
        print(f"figures written to {json_path}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("objects", nargs="?", type=int, default=1_000_000)
    parser.add_argument("slices", nargs="?", type=int, default=16)
    parser.add_argument(
        "--workers", type=int, default=os.cpu_count() or 2, help="tasks run at once, one per process (the cores)"
    )
    parser.add_argument("--aws-limits", action="store_true", help="enforce the deployed limits (lakelet up's flag)")
    parser.add_argument("--json", help="write the figures to this JSON file")
    parser.add_argument("--no-drop", dest="drop", action="store_false", help="leave out the drop sweep's runs")
    options = parser.parse_args()
    main(options.objects, options.slices, options.workers, options.aws_limits, options.json, options.drop)
