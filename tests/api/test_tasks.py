"""Commits and merges as tasks: POST .../commits/async, GET .../commits/status, POST .../merge/{dest}/async, GET
.../merge/{dest}/status, and the synchronous POST .../commits and .../merge/{dest} handing off to the workflows.
Inline below the thresholds, the state machines (moto's interpreter, tasks in process) above them. Through
app.py, as the other API tests.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import boto3
import lakefs_sdk
import pytest
from moto import mock_aws

from chalicelib import wiring
from chalicelib.settings import Settings
from chalicelib.workflows import tasks
from lakelet.stack.stepfunctions_local import MOTO_CONFIG, create_state_machines, route_lambda_invokes

from .support import BUCKET, Api, assert_error, body_of, conforms

THRESHOLD = 5


@pytest.fixture
def wait_seconds() -> float:
    """How long synchronous calls wait for a workflow (a test overrides this fixture to see them give up)."""
    return 20.0


@pytest.fixture
def services(wait_seconds: float) -> Iterator[wiring.Services]:
    with mock_aws(config=MOTO_CONFIG):
        arns = create_state_machines(boto3.client("stepfunctions", region_name="us-east-1"), "us-east-1")
        settings = Settings(
            bucket=BUCKET,
            commit_state_machine_arn=arns["commit"],
            commit_workflow_threshold=THRESHOLD,
            merge_state_machine_arn=arns["merge"],
            merge_workflow_threshold=THRESHOLD,
            workflow_wait_seconds=wait_seconds,
        )
        built = wiring.memory_services(settings)
        wiring.set_services(built)
        with route_lambda_invokes(tasks.HANDLERS):
            yield built
        wiring.set_services(None)


@pytest.fixture
def repo(services: wiring.Services, credentials: tuple[str, str]) -> str:
    services.engine.repositories.create_repository("repo1", f"s3://{BUCKET}/repo1")
    return "repo1"


def wait(api: Api, repo: str, task_id: str) -> dict:
    for _ in range(400):
        status = body_of(api.get(f"/repositories/{repo}/branches/main/commits/status", query={"id": task_id}))
        if status["completed"]:
            return status
        time.sleep(0.05)
    raise AssertionError("the commit did not complete")


@pytest.mark.parametrize("objects", [THRESHOLD - 2, THRESHOLD + 7])
def test_async_commit_inline_and_as_a_workflow(api: Api, repo: str, objects: int) -> None:
    g = wiring.get_services().engine
    for i in range(objects):
        g.objects.upload_object(repo, "main", f"f{i:03d}.txt", b"x%d" % i)
    response = api.post(
        f"/repositories/{repo}/branches/main/commits/async", json_body={"message": "async", "metadata": {"k": "v"}}
    )
    assert response.status_code == 202
    task_id = conforms(lakefs_sdk.TaskCreation, body_of(response)).id
    assert task_id.startswith("w-" if objects > THRESHOLD else "c-")
    status = wait(api, repo, task_id)
    assert status["task_id"] == task_id and "error" not in status and status["update_time"].endswith("Z")
    commit = conforms(lakefs_sdk.Commit, status["result"])
    assert commit.message == "async" and commit.metadata == {"k": "v"} and commit.committer == "admin"
    assert g.branches.get_branch(repo, "main").commit_id == commit.id
    assert len(g.objects.list_objects(repo, "main", amount=1000).results) == objects
    assert not g.history.is_dirty(repo, "main")


def test_async_commit_errors(api: Api, repo: str) -> None:
    assert_error(api.post(f"/repositories/{repo}/branches/main/commits/async", json_body={"message": "x"}), 400)
    assert_error(api.post(f"/repositories/{repo}/branches/nope/commits/async", json_body={"message": "x"}), 404)
    assert_error(api.get(f"/repositories/{repo}/branches/main/commits/status", query={"id": "w-unknown"}), 404)


def user_in(api: Api, group: str) -> Api:
    user_id = group.lower()
    assert api.post("/auth/users", json_body={"id": user_id}).status_code == 201
    assert api.request("PUT", f"/auth/groups/{group}/members/{user_id}").status_code == 201
    pair = body_of(api.post(f"/auth/users/{user_id}/credentials"))
    return Api(api.client, (pair["access_key_id"], pair["secret_access_key"]))


def test_async_commit_needs_create_commit_and_its_status_read_access(api: Api, repo: str) -> None:
    g = wiring.get_services().engine
    g.objects.upload_object(repo, "main", "a.txt", b"a")
    viewer, developer = user_in(api, "Viewers"), user_in(api, "Developers")
    assert_error(viewer.post(f"/repositories/{repo}/branches/main/commits/async", json_body={"message": "no"}), 403)
    assert g.history.is_dirty(repo, "main")  # the refused request committed nothing
    response = developer.post(f"/repositories/{repo}/branches/main/commits/async", json_body={"message": "yes"})
    assert response.status_code == 202
    task_id = body_of(response)["id"]
    status = wait(viewer, repo, task_id)  # reading the status needs read access only
    assert status["result"]["committer"] == "developers"
    assert g.branches.get_branch(repo, "main").commit_id == status["result"]["id"]


def executions(machine: str) -> list[str]:
    sfn = boto3.client("stepfunctions", region_name="us-east-1")
    arn = next(m["stateMachineArn"] for m in sfn.list_state_machines()["stateMachines"] if m["name"].endswith(machine))
    return [e["name"] for e in sfn.list_executions(stateMachineArn=arn)["executions"]]


@pytest.mark.parametrize("objects", [THRESHOLD - 2, THRESHOLD + 7])
def test_the_synchronous_commit_waits_for_the_workflow(api: Api, repo: str, objects: int) -> None:
    g = wiring.get_services().engine
    for i in range(objects):
        g.objects.upload_object(repo, "main", f"f{i:03d}.txt", b"x%d" % i)
    response = api.post(f"/repositories/{repo}/branches/main/commits", json_body={"message": "sync"})
    assert response.status_code == 201, response.body
    commit = conforms(lakefs_sdk.Commit, body_of(response))
    assert g.branches.get_branch(repo, "main").commit_id == commit.id
    assert len(executions("commit")) == (1 if objects > THRESHOLD else 0)
    assert len(g.objects.list_objects(repo, "main", amount=1000).results) == objects


@pytest.mark.parametrize("wait_seconds", [0.0])
def test_a_synchronous_commit_still_running_answers_202_with_the_task(api: Api, repo: str) -> None:
    g = wiring.get_services().engine
    for i in range(THRESHOLD + 3):
        g.objects.upload_object(repo, "main", f"f{i:03d}.txt", b"x")
    response = api.post(f"/repositories/{repo}/branches/main/commits", json_body={"message": "slow"})
    assert response.status_code == 202
    body = body_of(response)
    task_id = body["id"]
    assert task_id.startswith("w-") and task_id in body["message"]
    status_url = f"/api/v1/repositories/{repo}/branches/main/commits/status?id={task_id}"
    assert response.headers["Location"] == status_url
    status = wait(api, repo, task_id)
    assert status["result"]["message"] == "slow"
    assert g.branches.get_branch(repo, "main").commit_id == status["result"]["id"]


def test_a_failed_workflow_commit_reports_its_own_error(api: Api, repo: str) -> None:
    g = wiring.get_services().engine
    for i in range(THRESHOLD + 3):
        g.objects.upload_object(repo, "main", f"f{i:03d}.txt", b"x")
        g.objects.delete_object(repo, "main", f"f{i:03d}.txt")  # staged tombstones of keys never committed
    head = g.branches.get_branch(repo, "main").commit_id
    message = assert_error(api.post(f"/repositories/{repo}/branches/main/commits", json_body={"message": "x"}), 400)
    assert message == "no changes to commit on branch main"
    task_id = executions("commit")[0]
    status = body_of(api.get(f"/repositories/{repo}/branches/main/commits/status", query={"id": task_id}))
    assert status["completed"] and status["status_code"] == 400 and status["error"]["message"] == message
    assert "result" not in status
    assert g.branches.get_branch(repo, "main").commit_id == head


def diverged(g, repo: str, changes: int, conflict: bool = False) -> None:
    """main and feature diverge from a common base: ``changes`` new objects on feature, one on main."""
    g.objects.upload_object(repo, "main", "base.txt", b"base")
    g.commits.commit(repo, "main", "admin", "base")
    g.branches.create_branch(repo, "feature", "main")
    for i in range(changes):
        g.objects.upload_object(repo, "feature", f"f{i:03d}.txt", b"x%d" % i)
    if conflict:
        g.objects.upload_object(repo, "feature", "base.txt", b"feature's")
    g.commits.commit(repo, "feature", "admin", "feature work")
    g.objects.upload_object(repo, "main", "main-only.txt", b"m")
    if conflict:
        g.objects.upload_object(repo, "main", "base.txt", b"main's")
    g.commits.commit(repo, "main", "admin", "main work")


@pytest.mark.parametrize("changes", [THRESHOLD - 4, THRESHOLD + 7])
def test_merge_sync_and_async_inline_and_as_a_workflow(api: Api, repo: str, changes: int) -> None:
    g = wiring.get_services().engine
    diverged(g, repo, changes)
    response = api.post(f"/repositories/{repo}/refs/feature/merge/main/async", json_body={"message": "async"})
    assert response.status_code == 202
    task_id = conforms(lakefs_sdk.TaskCreation, body_of(response)).id
    assert task_id.startswith("w-" if changes > THRESHOLD else "c-")
    for _ in range(400):
        status = body_of(api.get(f"/repositories/{repo}/refs/feature/merge/main/status", query={"id": task_id}))
        if status["completed"]:
            break
        time.sleep(0.05)
    assert status["task_id"] == task_id and "error" not in status
    result = conforms(lakefs_sdk.MergeResult, status["result"])
    head = g.commits.get_commit(repo, "main")
    assert result.reference == head.id and head.message == "async"
    assert head.parents[1] == g.commits.get_commit(repo, "feature").id
    assert len(g.objects.list_objects(repo, "main", amount=1000).results) == changes + 2
    assert len(executions("merge")) == (1 if changes > THRESHOLD else 0)

    # The synchronous merge of the next round (more work on feature) takes the same path and waits.
    for i in range(changes):
        g.objects.upload_object(repo, "feature", f"g{i:03d}.txt", b"y")
    g.commits.commit(repo, "feature", "admin", "more")
    response = api.post(f"/repositories/{repo}/refs/feature/merge/main", json_body={})
    assert response.status_code == 200, response.body
    assert conforms(lakefs_sdk.MergeResult, body_of(response)).reference == g.commits.get_commit(repo, "main").id
    if changes > THRESHOLD:
        assert len(executions("merge")) == 2
    assert len(g.objects.list_objects(repo, "main", amount=1000).results) == 2 * changes + 2


@pytest.mark.parametrize("changes", [THRESHOLD - 3, THRESHOLD + 7])
def test_merge_conflicts_through_the_workflow_answer_409_with_the_conflicts(api: Api, repo: str, changes: int) -> None:
    g = wiring.get_services().engine
    diverged(g, repo, changes, conflict=True)
    head = g.branches.get_branch(repo, "main").commit_id
    response = api.post(f"/repositories/{repo}/refs/feature/merge/main", json_body={})
    assert response.status_code == 409
    body = body_of(response)
    assert body["message"] == "conflict found: 1 conflicting path(s) in the merge of feature into main"
    assert body["conflicts"] == [{"path": "base.txt", "source": "changed", "destination": "changed"}]
    assert g.branches.get_branch(repo, "main").commit_id == head
    if changes > THRESHOLD:
        status = body_of(
            api.get(f"/repositories/{repo}/refs/feature/merge/main/status", query={"id": executions("merge")[0]})
        )
        assert status["completed"] and status["status_code"] == 409
        assert "conflict" in status["error"]["message"]


def test_merge_task_errors(api: Api, repo: str) -> None:
    g = wiring.get_services().engine
    diverged(g, repo, 1)
    base = f"/repositories/{repo}/refs"
    assert_error(api.post(f"{base}/nope/merge/main/async", json_body={}), 404)
    assert_error(api.post(f"{base}/feature/merge/nope/async", json_body={}), 404)
    assert_error(api.post(f"{base}/feature/merge/main/async", json_body={"strategy": "bogus"}), 400)
    assert_error(api.get(f"{base}/feature/merge/main/status", query={"id": "w-unknown"}), 404)
    assert_error(api.get(f"{base}/feature/merge/main/status"), 400)
    g.objects.upload_object(repo, "main", "dirty.txt", b"d")
    assert_error(api.post(f"{base}/feature/merge/main/async", json_body={}), 400)
    g.rewrites.reset_branch(repo, "main")
    assert api.post(f"{base}/feature/merge/main/async", json_body={}).status_code == 202
    assert_error(api.post(f"{base}/feature/merge/main/async", json_body={}), 400)  # nothing left to merge


def test_a_commit_above_the_threshold_on_a_protected_branch_starts_no_workflow(api: Api, repo: str) -> None:
    services = wiring.get_services()
    g = services.engine
    for i in range(THRESHOLD + 3):
        g.objects.upload_object(repo, "main", f"f{i:03d}.txt", b"x")
    assert g.ports.protection is not None
    g.ports.protection.set_rules(g.repositories.get_repository(repo), ["main"])
    head = g.branches.get_branch(repo, "main")
    for route in ("commits", "commits/async"):
        response = api.post(f"/repositories/{repo}/branches/main/{route}", json_body={"message": "direct"})
        assert assert_error(response, 403) == "cannot commit to protected branch"
    sfn = boto3.client("stepfunctions", region_name="us-east-1")
    assert sfn.list_executions(stateMachineArn=services.settings.commit_state_machine_arn)["executions"] == []
    assert g.branches.get_branch(repo, "main") == head
