"""The dump and restore state machines on moto's Step Functions interpreter, their Lambda tasks routed to the app's
handlers: every task crashing once after its side effect (Step Functions retries it: each must be idempotent), the
commits loaded a chunk at a time, and a crash that outlasts the retries rolling the restore back."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from chalicelib.adapters.stepfunctions import StepFunctionsWorkflows
from chalicelib.graveler import errors
from chalicelib.graveler.dumps import dump_files, refs_restore
from chalicelib.graveler.dumps.refs_restore import RestorePlan
from chalicelib.graveler.records import Commit, CommitID, MetaRangeID, RepositoryID
from chalicelib.graveler.usecases.dump_tasks import DumpTask, DumpTasks
from chalicelib.settings import Settings
from chalicelib.wiring import Services, memory_services, set_services
from chalicelib.workflows import dumps as dump_tasks
from lakelet.stack.stepfunctions_local import MOTO_CONFIG, create_state_machines, route_lambda_invokes
from tests.clocks import SettableClock, engine_clock

from .support import Injected, crashing_once

REGION = "us-east-1"


@pytest.fixture
def services(monkeypatch: pytest.MonkeyPatch) -> Iterator[Services]:
    monkeypatch.setattr(refs_restore, "CHUNK_BYTES", 400)  # a record or two a chunk: LoadCommits loops
    monkeypatch.setattr(dump_files, "DUMP_CHUNK_BYTES", 400)  # and Dump too
    with mock_aws(config=MOTO_CONFIG):
        arns = create_state_machines(boto3.client("stepfunctions", region_name=REGION), REGION)
        settings = Settings(
            bucket="bucket",
            dump_state_machine_arn=arns["dump"],
            restore_state_machine_arn=arns["restore"],
            dump_inline_threshold=0,
            restore_inline_threshold=0,
        )
        built = memory_services(settings, clock=SettableClock(), sleep=lambda s: None)
        g = built.engine
        g.repositories.create_repository("repo", "s3://bucket/repo")
        for i in range(5):
            g.objects.upload_object("repo", "main", f"f{i}", b"%d" % i)
            g.commits.commit("repo", "main", "alice", f"commit {i}")
        g.branches.create_branch("repo", "dev", "main~2")
        g.branches.create_tag("repo", "v1", "main~1")
        set_services(built)
        yield built
        _wind_down(boto3.client("stepfunctions", region_name=REGION))
        set_services(None)


def _wind_down(sfn: object) -> None:
    """Waits for this test's executions to end: a step retried after its task was already recorded done (a crash
    injected after the side effect) would otherwise run on in moto's thread into the next test's handlers."""
    client: Any = sfn
    machines = [m["stateMachineArn"] for m in client.list_state_machines()["stateMachines"]]
    for _ in range(400):
        running = [
            e
            for arn in machines
            for e in client.list_executions(stateMachineArn=arn, statusFilter="RUNNING")["executions"]
        ]
        if not running:
            return
        time.sleep(0.05)


def _wait(tasks: DumpTasks, repo: str, kind: str, task_id: str) -> DumpTask:
    for _ in range(600):
        status = tasks.status(repo, kind, task_id)
        if status.done:
            return status
        time.sleep(0.05)
    raise AssertionError(f"{kind} task did not end")


def _refs(services: Services, repo: str) -> tuple[dict[str, str], dict[str, str], list[str]]:
    refs = services.engine.ports.refs
    branches = {b.id: b.commit_id for b in refs.list_branches(repo)}  # type: ignore[arg-type]
    tags = {t.id: t.commit_id for t in refs.list_tags(repo)}  # type: ignore[arg-type]
    return branches, tags, [c.id for c in refs.iterate_commits(repo)]  # type: ignore[arg-type]


def test_runners_are_the_state_machines(services: Services) -> None:
    workflows = services.engine.dumps.workflows
    assert isinstance(workflows.dump, StepFunctionsWorkflows) and isinstance(workflows.restore, StepFunctionsWorkflows)


@pytest.mark.parametrize("task", [None, *sorted(dump_tasks.HANDLERS)])
def test_dump_and_restore_survive_a_crash_of_any_task(services: Services, task: str | None) -> None:
    failed: list[str] = []
    handlers = dict(dump_tasks.HANDLERS)
    if task is not None:
        handlers[task] = crashing_once(task, handlers[task], "after", failed)
    tasks = services.engine.dumps
    with route_lambda_invokes(handlers):
        dumped = _wait(tasks, "repo", "dump", tasks.submit_dump("repo").id)
        assert dumped.error == "" and dumped.dumped is not None
        services.engine.repositories.create_bare_repository("copy", "s3://bucket/repo")
        restored = _wait(tasks, "copy", "restore", tasks.submit_restore("copy", dumped.dumped).id)
    assert restored.error == ""
    assert _refs(services, "copy") == _refs(services, "repo")
    # A failure task only runs on a failure: a crash injected there never fired.
    assert failed == (
        [task] if task in ("dump_run", "dump_finish", "restore_check", "restore_commits", "restore_refs") else []
    )
    # The dump's scratch chunks are gone once it is done; only the joined result's ids stay.
    scratch = [a for a, _ in services.engine.ports.blocks.list_blobs("s3://bucket/repo/_lakefs/refs_dump/scratch/")]
    assert scratch and all(a.endswith("/result.json") for a in scratch)


def test_a_crash_past_the_retries_rolls_back(services: Services) -> None:
    tasks = services.engine.dumps
    dump = tasks.dump("repo")
    calls: list[str] = []

    def always_crashing(event: dict) -> dict:
        calls.append(event["task_id"])
        # The branches and tags are written, then the step dies every time before it records the task done.
        tasks.restorer.load_refs(RestorePlan.from_json(event["plan"]))
        raise Injected("restore_refs crashed")

    with route_lambda_invokes({**dump_tasks.HANDLERS, "restore_refs": always_crashing}):
        services.engine.repositories.create_bare_repository("copy", "s3://bucket/repo")
        task_id = tasks.submit_restore("copy", dump).id
        failed = _wait(tasks, "copy", "restore", task_id)
    # The first try and the state machine's 4 retries (of this task: an earlier test's execution may still be
    # winding down in moto's background thread).
    assert calls.count(task_id) == 5
    assert "restore_refs crashed" in failed.error and "nothing of it kept" in failed.error
    assert _refs(services, "copy") == ({}, {}, [])


def test_each_step_moves_the_running_task_update_time(services: Services) -> None:
    ticks = iter(range(1_000_000, 2_000_000))
    engine_clock(services).source = lambda: float(next(ticks))
    tasks = services.engine.dumps
    dump = tasks.dump("repo")
    seen: list[DumpTask] = []
    load = dump_tasks.HANDLERS["restore_commits"]

    def watched(event: dict) -> dict:
        answer = load(event)
        seen.append(tasks.status("copy", "restore", event["task_id"]))
        return answer

    with route_lambda_invokes({**dump_tasks.HANDLERS, "restore_commits": watched}):
        services.engine.repositories.create_bare_repository("copy", "s3://bucket/repo")
        submitted = tasks.submit_restore("copy", dump)
        done = _wait(tasks, "copy", "restore", submitted.id)
    assert done.error == "" and len(seen) > 2  # the commits took several chunks
    assert all(not s.done for s in seen)
    times = [submitted.update_time, *(s.update_time for s in seen), done.update_time]
    assert times == sorted(set(times))  # strictly later at each step: lakectl's timeout counts from the last


def test_a_dump_holds_one_chunk_of_commits_at_a_time(services: Services, monkeypatch: pytest.MonkeyPatch) -> None:
    """6 MB of commits, dumped in 256 KiB chunks and joined as a multipart upload of 5 MiB parts: no step takes
    more than a chunk of commits from the store, and the joined file restores to the same commits."""
    g = services.engine
    rid = RepositoryID("repo")
    padding = "x" * 4000
    extra = [
        Commit(CommitID(f"{n:064x}"), "bot", f"bulk {n}", 1_700_000_000, MetaRangeID(""), {"pad": padding}, (), 1)
        for n in range(1500)
    ]
    g.ports.refs.add_commits(rid, extra)
    monkeypatch.setattr(dump_files, "DUMP_CHUNK_BYTES", 256 * 1024)
    monkeypatch.setattr(dump_files, "PART_BYTES", 5 * 1024 * 1024)

    pulled: list[int] = []  # commits taken from the store by each listing call
    listing = g.ports.refs.iterate_commits

    def counted(repo_id: RepositoryID, after: str = "") -> Iterator[Commit]:
        pulled.append(0)
        for commit in listing(repo_id, after):
            pulled[-1] += 1
            yield commit

    monkeypatch.setattr(g.ports.refs, "iterate_commits", counted)
    chunk_sizes: list[int] = []
    put = g.ports.blocks.put

    def watched_put(address: str, data: bytes) -> Any:
        if "/scratch/" in address and address.endswith(".jsonl"):
            chunk_sizes.append(len(data))
        return put(address, data)

    monkeypatch.setattr(g.ports.blocks, "put", watched_put)
    tasks = services.engine.dumps
    dump = tasks.dump("repo")

    total = len(list(listing(rid)))
    record = max(chunk_sizes) - 256 * 1024
    assert total == 1506 and sum(pulled) <= total + len(pulled)  # each commit listed once (plus one look ahead)
    # Each step: one listing call, at most a chunk of records (the last record passes the bound, no more).
    assert len(pulled) == len(chunk_sizes) and max(pulled) <= 256 * 1024 // 4000 + 1
    assert all(size < 256 * 1024 + 4200 for size in chunk_sizes) and 0 <= record < 4200
    assert len(chunk_sizes) >= 6_000_000 // (256 * 1024)
    address = f"s3://bucket/repo/_lakefs/refs_dump/{dump.commits_id}.jsonl"
    assert g.ports.blocks.stat(address).etag.endswith("-2")  # joined as a multipart upload of two parts
    assert [
        a for a, _ in g.ports.blocks.list_blobs("s3://bucket/repo/_lakefs/refs_dump/scratch/") if a.endswith(".jsonl")
    ] == []

    g.repositories.create_bare_repository("copy", "s3://bucket/repo")
    tasks.restore("copy", dump)
    assert [c.id for c in listing(RepositoryID("copy"))] == [c.id for c in listing(rid)]
    assert g.ports.refs.get_commit(RepositoryID("copy"), extra[7].id) == extra[7]


def _reachable(services: Services, repo: str, head: str) -> set[str]:
    refs, seen, todo = services.engine.ports.refs, set(), [head]
    while todo:
        commit = refs.get_commit(RepositoryID(repo), CommitID(todo.pop()))  # raises if history was cut
        if commit.id not in seen:
            seen.add(commit.id)
            todo.extend(commit.parents)
    return seen


def test_a_roll_back_keeps_a_branch_committed_to_during_the_restore(services: Services) -> None:
    g = services.engine
    tasks = services.engine.dumps
    dump = tasks.dump("repo")
    tries: list[str] = []

    def refs_then_a_write_then_a_crash(event: dict) -> dict:
        if not tries:
            tasks.restorer.load_refs(RestorePlan.from_json(event["plan"]))
            # Someone commits to the restored dev branch before the step could record the task done.
            g.objects.upload_object("copy", "dev", "during.txt", b"written during the restore")
            g.commits.commit("copy", "dev", "bob", "during the restore")
        tries.append(event["task_id"])
        # An error the state machine does not retry: straight to the roll-back.
        raise errors.Invalid("restore_refs failed")

    with route_lambda_invokes({**dump_tasks.HANDLERS, "restore_refs": refs_then_a_write_then_a_crash}):
        g.repositories.create_bare_repository("copy", "s3://bucket/repo")
        failed = _wait(tasks, "copy", "restore", tasks.submit_restore("copy", dump).id)
    assert "restore_refs failed" in failed.error and "kept with their history): dev:" in failed.error, failed.error
    branches, tags, commits = _refs(services, "copy")
    # dev and everything it reaches stay; main and the tag (untouched) are gone, and so are the commits only they
    # reached (main~1 and main: dev was made from main~2).
    assert list(branches) == ["dev"] and tags == {}
    assert set(commits) == _reachable(services, "copy", branches["dev"])
    original = _refs(services, "repo")[0]
    assert original["main"] not in commits and original["dev"] in commits
    assert (
        g.objects.read_object("copy", g.objects.stat_object("copy", "dev", "during.txt"))
        == b"written during the restore"
    )


def test_a_roll_back_keeps_a_branch_with_staged_changes(services: Services) -> None:
    g = services.engine
    tasks = services.engine.dumps
    dump = tasks.dump("repo")
    g.repositories.create_bare_repository("copy", "s3://bucket/repo")
    plan = tasks.restorer.check("copy", dump)
    tasks.restorer.load(plan)
    g.objects.upload_object("copy", "main", "staged.txt", b"not committed yet")
    assert tasks.restorer.roll_back(plan) == ["main"]
    branches, tags, commits = _refs(services, "copy")
    assert list(branches) == ["main"] and tags == {}
    assert set(commits) == _reachable(services, "copy", branches["main"])
    assert g.objects.read_object("copy", g.objects.stat_object("copy", "main", "staged.txt")) == b"not committed yet"
    # Without writes, a roll-back leaves the target bare, as before.
    g.repositories.create_bare_repository("copy2", "s3://bucket/repo")
    plan2 = tasks.restorer.check("copy2", dump)
    tasks.restorer.load(plan2)
    assert tasks.restorer.roll_back(plan2) == []
    assert _refs(services, "copy2") == ({}, {}, [])
