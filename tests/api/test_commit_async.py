"""POST .../branches/{branch}/commits/async and GET .../commits/status: inline below the threshold, the commit
state machine (moto's interpreter, tasks in process) above it.

app.py does not serve these routes yet: lakefs-sdk 1.88 lacks the two operations and tests/conformance insists
that every served route is one of its operations. So they are tested on an app of their own here.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import boto3
import lakefs_sdk
import pytest
from chalice import Chalice
from chalice.test import Client
from moto import mock_aws

from chalicelib import wiring
from chalicelib.api import URL_PREFIX
from chalicelib.api.commit_async import bp as commit_async_blueprint
from chalicelib.api.endpoint import accept_anything_by_default, lakefs_error_shape
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


# A blueprint registers its routes once: one app for the module.
APP = Chalice(app_name="lakelet-commit-async")
APP.register_middleware(accept_anything_by_default, "http")
APP.register_middleware(lakefs_error_shape, "http")
APP.register_blueprint(commit_async_blueprint, url_prefix=URL_PREFIX)


@pytest.fixture
def client(services: wiring.Services) -> Iterator[Client]:
    with Client(APP) as test_client:
        yield test_client


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
