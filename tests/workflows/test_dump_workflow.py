"""The dump and restore state machines on moto's Step Functions interpreter, their Lambda tasks routed to the app's
handlers: every task crashing once after its side effect (Step Functions retries it: each must be idempotent), the
commits loaded a chunk at a time, and a crash that outlasts the retries rolling the restore back."""

from __future__ import annotations

import time
from collections.abc import Iterator

import boto3
import pytest
from moto import mock_aws

from chalicelib.adapters.stepfunctions import StepFunctionsWorkflows
from chalicelib.graveler import refs_restore
from chalicelib.graveler.dump_tasks import DumpTask, DumpTasks
from chalicelib.graveler.refs_restore import RestorePlan
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
        g = built.graveler
        g.create_repository("repo", "s3://bucket/repo")
        for i in range(5):
            g.upload_object("repo", "main", f"f{i}", b"%d" % i)
            g.commit("repo", "main", "alice", f"commit {i}")
        g.create_branch("repo", "dev", "main~2")
        g.create_tag("repo", "v1", "main~1")
        set_services(built)
        yield built
        set_services(None)


def _wait(tasks: DumpTasks, repo: str, kind: str, task_id: str) -> DumpTask:
    for _ in range(600):
        status = tasks.status(repo, kind, task_id)
        if status.done:
            return status
        time.sleep(0.05)
    raise AssertionError(f"{kind} task did not end")


def _refs(services: Services, repo: str) -> tuple[dict[str, str], dict[str, str], list[str]]:
    refs = services.graveler.refs
    branches = {b.id: b.commit_id for b in refs.list_branches(repo)}  # type: ignore[arg-type]
    tags = {t.id: t.commit_id for t in refs.list_tags(repo)}  # type: ignore[arg-type]
    return branches, tags, [c.id for c in refs.iterate_commits(repo)]  # type: ignore[arg-type]


def test_runners_are_the_state_machines(services: Services) -> None:
    workflows = services.dumps().workflows
    assert isinstance(workflows.dump, StepFunctionsWorkflows) and isinstance(workflows.restore, StepFunctionsWorkflows)


@pytest.mark.parametrize("task", [None, *sorted(dump_tasks.HANDLERS)])
def test_dump_and_restore_survive_a_crash_of_any_task(services: Services, task: str | None) -> None:
    failed: list[str] = []
    handlers = dict(dump_tasks.HANDLERS)
    if task is not None:
        handlers[task] = crashing_once(task, handlers[task], "after", failed)
    tasks = services.dumps()
    with route_lambda_invokes(handlers):
        dumped = _wait(tasks, "repo", "dump", tasks.submit_dump("repo").id)
        assert dumped.error == "" and dumped.dumped is not None
        services.graveler.create_bare_repository("copy", "s3://bucket/repo")
        restored = _wait(tasks, "copy", "restore", tasks.submit_restore("copy", dumped.dumped).id)
    assert restored.error == ""
    assert _refs(services, "copy") == _refs(services, "repo")
    # A failure task only runs on a failure: a crash injected there never fired.
    assert failed == ([task] if task in ("dump_run", "restore_check", "restore_commits", "restore_refs") else [])


def test_a_crash_past_the_retries_rolls_back(services: Services) -> None:
    tasks = services.dumps()
    dump = tasks.dump("repo")
    calls: list[str] = []

    def always_crashing(event: dict) -> dict:
        calls.append(event["task_id"])
        # The branches and tags are written, then the step dies every time before it records the task done.
        tasks.restorer.load_refs(RestorePlan.from_json(event["plan"]))
        raise Injected("restore_refs crashed")

    with route_lambda_invokes({**dump_tasks.HANDLERS, "restore_refs": always_crashing}):
        services.graveler.create_bare_repository("copy", "s3://bucket/repo")
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
    tasks = services.dumps()
    dump = tasks.dump("repo")
    seen: list[DumpTask] = []
    load = dump_tasks.HANDLERS["restore_commits"]

    def watched(event: dict) -> dict:
        answer = load(event)
        seen.append(tasks.status("copy", "restore", event["task_id"]))
        return answer

    with route_lambda_invokes({**dump_tasks.HANDLERS, "restore_commits": watched}):
        services.graveler.create_bare_repository("copy", "s3://bucket/repo")
        submitted = tasks.submit_restore("copy", dump)
        done = _wait(tasks, "copy", "restore", submitted.id)
    assert done.error == "" and len(seen) > 2  # the commits took several chunks
    assert all(not s.done for s in seen)
    times = [submitted.update_time, *(s.update_time for s in seen), done.update_time]
    assert times == sorted(set(times))  # strictly later at each step: lakectl's timeout counts from the last
