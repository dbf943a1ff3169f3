"""POST .../branches/{branch}/commits/async and GET .../commits/status: inline below the threshold, the commit
state machine (moto's interpreter, tasks in process) above it. Through app.py, as the other API tests.
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
from chalicelib.workflows import commit as commit_tasks
from lakelet.stepfunctions_local import (
    MOTO_CONFIG,
    create_state_machines,
    route_lambda_invokes,
)

from .support import BUCKET, Api, assert_error, body_of, conforms

THRESHOLD = 5


@pytest.fixture
def services() -> Iterator[wiring.Services]:
    with mock_aws(config=MOTO_CONFIG):
        arn = create_state_machines(boto3.client("stepfunctions", region_name="us-east-1"), "us-east-1")["commit"]
        settings = Settings(bucket=BUCKET, commit_state_machine_arn=arn, commit_workflow_threshold=THRESHOLD)
        built = wiring.memory_services(settings)
        wiring.set_services(built)
        with route_lambda_invokes(commit_tasks.HANDLERS):
            yield built
        wiring.set_services(None)


@pytest.fixture
def repo(services: wiring.Services, credentials: tuple[str, str]) -> str:
    services.graveler.create_repository("repo1", f"s3://{BUCKET}/repo1")
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
    g = wiring.get_services().graveler
    for i in range(objects):
        g.upload_object(repo, "main", f"f{i:03d}.txt", b"x%d" % i)
    response = api.post(f"/repositories/{repo}/branches/main/commits/async",
                        json_body={"message": "async", "metadata": {"k": "v"}})
    assert response.status_code == 202
    task_id = conforms(lakefs_sdk.TaskCreation, body_of(response)).id
    assert task_id.startswith("w-" if objects > THRESHOLD else "c-")
    status = wait(api, repo, task_id)
    assert status["task_id"] == task_id and "error" not in status and status["update_time"].endswith("Z")
    commit = conforms(lakefs_sdk.Commit, status["result"])
    assert commit.message == "async" and commit.metadata == {"k": "v"} and commit.committer == "admin"
    assert g.get_branch(repo, "main").commit_id == commit.id
    assert len(g.list_objects(repo, "main", amount=1000).results) == objects
    assert not g.is_dirty(repo, "main")


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
    g = wiring.get_services().graveler
    g.upload_object(repo, "main", "a.txt", b"a")
    viewer, developer = user_in(api, "Viewers"), user_in(api, "Developers")
    assert_error(viewer.post(f"/repositories/{repo}/branches/main/commits/async", json_body={"message": "no"}), 403)
    assert g.is_dirty(repo, "main")  # the refused request committed nothing
    response = developer.post(f"/repositories/{repo}/branches/main/commits/async", json_body={"message": "yes"})
    assert response.status_code == 202
    task_id = body_of(response)["id"]
    status = wait(viewer, repo, task_id)  # reading the status needs read access only
    assert status["result"]["committer"] == "developers"
    assert g.get_branch(repo, "main").commit_id == status["result"]["id"]
