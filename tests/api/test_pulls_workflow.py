"""A pull request whose merge runs as the merge workflow (moto's interpreter, tasks in process) and outlives the
synchronous wait: 202 with the task, the pull request open meanwhile, then merged once the task is done."""

from __future__ import annotations

import time

import pytest

from chalicelib import wiring

from .support import Api, body_of
from .test_tasks import THRESHOLD, executions, repo, services  # noqa: F401 (fixtures)


@pytest.fixture
def wait_seconds() -> float:
    return 0.0


def test_a_merge_that_goes_on_as_a_workflow_settles_the_pull_request(api: Api, repo: str) -> None:  # noqa: F811
    g = wiring.get_services().engine
    # Arranged with commits that wait for their own workflows; only the pull request's merge gives up at once.
    g.objects.upload_object(repo, "main", "base.txt", b"base")
    g.commits.commit(repo, "main", "admin", "base", wait_seconds=30)
    g.branches.create_branch(repo, "feature", "main")
    for i in range(THRESHOLD + 7):
        g.objects.upload_object(repo, "feature", f"f{i:03d}.txt", b"x%d" % i)
    g.commits.commit(repo, "feature", "admin", "feature work", wait_seconds=30)
    g.objects.upload_object(repo, "main", "main-only.txt", b"m")
    g.commits.commit(repo, "main", "admin", "main work", wait_seconds=30)
    created = api.post(
        f"/repositories/{repo}/pulls",
        json_body={"title": "big", "source_branch": "feature", "destination_branch": "main"},
    )
    pr_id = body_of(created)["id"]
    response = api.request("PUT", f"/repositories/{repo}/pulls/{pr_id}/merge")
    assert response.status_code == 202, response.body
    task_id = body_of(response)["id"]
    location = {k.lower(): v for k, v in response.headers.items()}["location"]
    assert location.endswith(f"/refs/feature/merge/main/status?id={task_id}")
    assert executions("merge") == [task_id]
    for _ in range(400):
        pr = body_of(api.get(f"/repositories/{repo}/pulls/{pr_id}"))
        if pr["status"] != "open":
            break
        time.sleep(0.05)
    assert pr["status"] == "merged" and pr["merged_commit_id"] == g.commits.get_commit(repo, "main").id
    assert "merge_task_id" not in pr
    assert len(executions("merge")) == 1  # reading it settled it; nothing merged twice
