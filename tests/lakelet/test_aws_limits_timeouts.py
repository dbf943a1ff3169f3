"""``lakelet up --aws-limits``: API Gateway's integration timeout and the Lambdas' own timeouts, as a client of the
deployed stack meets them. A request still running at the integration timeout is answered 504 and goes on in the
background until it ends or its function's timeout cuts it; a workflow task over its function's timeout fails as
Lambda reports it, and the state machine's Retry and Catch decide the rest. The times are the deployed ones scaled
down (a test does not wait 29 s); a pre-commit webhook that waits for the test stands in for slow work, so what
happens first is decided by the test, not by the clock."""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import boto3
import lakefs
import pytest
from lakefs.client import Client
from lakefs.exceptions import ServerException

from chalicelib.graveler.records import BranchID, Entry, Key, RepositoryID, StagedEntry
from chalicelib.graveler.writes.staging import stage
from chalicelib.wiring import get_services
from chalicelib.workflows import tasks
from lakelet.stack import lambda_clock
from lakelet.stack.app_environment import Credentials
from lakelet.stack.aws_limits import API_FUNCTION, ENDPOINT_TIMED_OUT, LAMBDA_TIMEOUT_ERROR, AwsLimits
from lakelet.stack.local import LocalStack
from lakelet.stack.stepfunctions_local import route_lambda_invokes

KEYS = Credentials("AKIAIOSFODNN7LIMITS02", "limits-timeouts-secret")
ASL = Path(__file__).resolve().parents[2] / "stepfunctions" / "commit.asl.json"
DEPLOYED = AwsLimits.deployed()
# 29 s -> 2.9 s; the API function's 30 s -> 10 s (room for a released request to finish before its cut); the
# workflow tasks' 30 s -> 3 s, except Plan's, cut at 0.3 s in the workflow test.
LIMITS = replace(
    DEPLOYED,
    integration_timeout_s=DEPLOYED.integration_timeout_s / 10,
    timeouts={
        **{name: t / 10 for name, t in DEPLOYED.timeouts.items()},
        API_FUNCTION: DEPLOYED.timeouts[API_FUNCTION] / 3,
        "commit_plan": DEPLOYED.timeouts["commit_plan"] / 100,
    },
)


class Hook:
    """A webhook on loopback that holds each call until the test releases it, and counts the calls."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.calls = 0
        hook = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                hook.calls += 1
                hook.release.wait(60)
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/hook"

    def action(self, event: str) -> bytes:
        return json.dumps(
            {
                "name": "slow",
                "on": {event: None},
                "hooks": [{"id": "wait", "type": "webhook", "properties": {"url": self.url, "timeout": "20s"}}],
            }
        ).encode()


@pytest.fixture(scope="module")
def stack() -> Iterator[LocalStack]:
    with LocalStack(api_port=0, credentials=KEYS, aws_limits=LIMITS) as running:
        yield running


@pytest.fixture
def hook() -> Iterator[Hook]:
    running = Hook()
    yield running
    running.release.set()
    running.server.shutdown()


@pytest.fixture
def new_repo(stack: LocalStack, request: pytest.FixtureRequest) -> Callable[[], lakefs.Repository]:
    client = Client(host=stack.endpoint, username=KEYS.access_key_id, password=KEYS.secret_access_key)

    def create() -> lakefs.Repository:
        name = f"t{abs(hash(request.node.name)) % 10**8}"
        return lakefs.Repository(name, client=client).create(
            storage_namespace=f"{stack.default_namespace_prefix}/{name}"
        )

    return create


def _until(condition: Callable[[], bool], what: str) -> None:
    for _ in range(600):
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"never happened: {what}")


def test_a_commit_past_the_integration_timeout_answers_504_and_lands_later(
    new_repo: Callable[[], lakefs.Repository], hook: Hook
) -> None:
    repo = new_repo()
    main = repo.branch("main")
    main.object("_lakefs_actions/slow.yaml").upload(data=hook.action("pre-commit"))
    main.object("data/a.txt").upload(data=b"a")
    before = main.head.id
    with pytest.raises(ServerException) as timed_out:
        main.commit("slow commit")
    assert (timed_out.value.status_code, timed_out.value.body) == ENDPOINT_TIMED_OUT
    assert main.head.id == before  # the client saw an error; the commit is still running
    hook.release.set()
    _until(lambda: main.head.id != before, "the commit landed")
    assert main.head.get_commit().message == "slow commit"
    assert list(main.uncommitted()) == []
    # The client that retries the commit learns it has nothing left to commit.
    with pytest.raises(ServerException) as again:
        main.commit("slow commit")
    assert again.value.status_code == 400


def test_a_merge_past_the_integration_timeout_answers_504_and_lands_later(
    new_repo: Callable[[], lakefs.Repository], hook: Hook
) -> None:
    repo = new_repo()
    main = repo.branch("main")
    feature = repo.branch("feature").create(source_reference="main")
    # The merge reads its hooks from the source.
    feature.object("_lakefs_actions/slow.yaml").upload(data=hook.action("pre-merge"))
    feature.object("data/f.txt").upload(data=b"f")
    feature.commit("feature work")
    before = main.head.id
    with pytest.raises(ServerException) as timed_out:
        feature.merge_into(main)
    assert (timed_out.value.status_code, timed_out.value.body) == ENDPOINT_TIMED_OUT
    hook.release.set()
    _until(lambda: main.head.id != before, "the merge landed")
    merged = main.head.get_commit()
    assert merged.parents == [before, feature.head.id]
    assert main.object("data/f.txt").reader(mode="rb").read() == b"f"


def test_a_hook_past_the_api_functions_timeout_leaves_the_commit_undone(
    new_repo: Callable[[], lakefs.Repository], hook: Hook
) -> None:
    """The pre-commit hook outlasts the API function's own timeout: Lambda ends the function mid-commit. Nothing
    moved; the sealed changes stay staged and the next commit takes them."""
    repo = new_repo()
    main = repo.branch("main")
    main.object("_lakefs_actions/slow.yaml").upload(data=hook.action("pre-commit"))
    main.object("data/b.txt").upload(data=b"b")
    before, cuts = main.head.id, lambda_clock.cuts()
    with pytest.raises(ServerException) as timed_out:
        main.commit("cut commit")
    assert timed_out.value.status_code == ENDPOINT_TIMED_OUT[0]
    _until(lambda: lambda_clock.cuts() > cuts, "the API function's timeout cut the commit")
    hook.release.set()  # the hook answers only after the cut: the cut commit never moves the branch
    calls = hook.calls
    _until(lambda: hook.calls == calls, "settled")
    assert main.head.id == before
    assert main.object("data/b.txt").reader(mode="rb").read() == b"b"
    assert {change.path for change in main.uncommitted()} == {"_lakefs_actions/slow.yaml", "data/b.txt"}
    committed = main.commit("after the cut")
    assert committed.get_commit().message == "after the cut"
    assert {o.path for o in main.objects()} == {"_lakefs_actions/slow.yaml", "data/b.txt"}


def _plan_retry(asl: dict[str, Any]) -> int:
    """How many times the commit state machine runs Plan when every try fails: one plus its States.ALL retries."""
    retriers = asl["States"]["Plan"]["Retry"]
    return 1 + next(r["MaxAttempts"] for r in retriers if r["ErrorEquals"] == ["States.ALL"])


def test_a_workflow_task_over_its_timeout_fails_as_aws_would_with_nothing_applied(stack: LocalStack) -> None:
    """Plan made artificially slow: each try is cut at Plan's (scaled) deployed timeout and fails with Lambda's
    Sandbox.Timedout; the state machine retries it as it says, then catches it into Failed. The branch has not
    moved, the staged changes are all still there, and the next commit takes every one of them."""
    g = get_services().engine
    ns = f"{stack.default_namespace_prefix}/slowplan"
    g.repositories.create_repository("slowplan", ns)
    for i in range(20):
        entry = Entry(f"{ns}/data/{i}", i, f"etag{i}", 1)
        stage(
            g.ports.refs,
            g.ports.staging,
            RepositoryID("slowplan"),
            BranchID("main"),
            StagedEntry(Key(f"k/{i:03d}"), entry),
        )
    head = g.branches.get_branch("slowplan", "main").commit_id
    tries = 0
    real_plan = tasks.HANDLERS["commit_plan"]

    def slow_plan(event: dict[str, Any]) -> Any:
        nonlocal tries
        tries += 1
        for _ in range(1000):  # ten seconds of work in small steps, far past the 0.3 s it is given
            time.sleep(0.01)
        return real_plan(event)

    sfn = boto3.client("stepfunctions", region_name=stack.region, endpoint_url=stack.moto_url)
    request = {
        "repository": "slowplan",
        "branch": "main",
        "request_id": "slow-1",
        "committer": "admin",
        "message": "slow plan",
        "date": 1_700_000_000,
        "metadata": {},
    }
    with route_lambda_invokes({"commit_plan": slow_plan}):
        execution = sfn.start_execution(
            stateMachineArn=os.environ["LAKELET_COMMIT_STATE_MACHINE_ARN"],
            name="slow-1",
            input=json.dumps({"request": request}),
        )["executionArn"]
        _until(lambda: sfn.describe_execution(executionArn=execution)["status"] != "RUNNING", "the execution ended")
    described = sfn.describe_execution(executionArn=execution)
    assert described["status"] == "FAILED"
    assert described.get("error") == LAMBDA_TIMEOUT_ERROR, described
    assert tries == _plan_retry(json.loads(ASL.read_text()))
    assert g.branches.get_branch("slowplan", "main").commit_id == head
    client = Client(host=stack.endpoint, username=KEYS.access_key_id, password=KEYS.secret_access_key)
    main = lakefs.Repository("slowplan", client=client).branch("main")
    assert len(list(main.uncommitted())) == 20
    main.commit("after the timeouts")
    assert len(list(main.objects())) == 20
