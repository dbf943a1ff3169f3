"""The repository dump and restore tasks (POST|GET .../dump, POST|GET .../restore) inline and as workflows (moto's
Step Functions interpreter, tasks in process), and a restore that fails part-way: rolled back, the target left bare,
the status saying what failed. Through app.py, as the other API tests."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterator
from typing import Any

import boto3
import lakefs_sdk
import pytest
from moto import mock_aws

from chalicelib import wiring
from chalicelib.graveler.dumps import refs_restore
from chalicelib.settings import Settings
from chalicelib.workflows import tasks
from lakelet.stack.stepfunctions_local import MOTO_CONFIG, create_state_machines, route_lambda_invokes

from .support import BUCKET, Api, assert_error, body_of, conforms

# Commits of a repository (its initial commit included) above which a dump or restore runs as a workflow.
THRESHOLD = 5


@pytest.fixture
def services() -> Iterator[wiring.Services]:
    with mock_aws(config=MOTO_CONFIG):
        arns = create_state_machines(boto3.client("stepfunctions", region_name="us-east-1"), "us-east-1")
        settings = Settings(
            bucket=BUCKET,
            dump_state_machine_arn=arns["dump"],
            restore_state_machine_arn=arns["restore"],
            dump_inline_threshold=THRESHOLD,
            restore_inline_threshold=THRESHOLD,
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


def _history(api: Api, repo: str, commits: int) -> None:
    for i in range(commits):
        api.upload(repo, "main", f"f{i}.csv", b"%d" % i)
        api.commit(repo, "main", f"commit {i}")
    assert api.post(f"/repositories/{repo}/branches", json_body={"name": "dev", "source": "main~1"}).status_code == 201
    assert api.post(f"/repositories/{repo}/tags", json_body={"id": "v1", "ref": "main~2"}).status_code == 201


def _refs(api: Api, repo: str) -> dict[str, Any]:
    branches = {b["id"]: b["commit_id"] for b in body_of(api.get(f"/repositories/{repo}/branches"))["results"]}
    tags = {t["id"]: t["commit_id"] for t in body_of(api.get(f"/repositories/{repo}/tags"))["results"]}
    return {"branches": branches, "tags": tags}


def _wait(api: Api, repo: str, kind: str, task_id: str) -> dict[str, Any]:
    for _ in range(400):
        status = api.get(f"/repositories/{repo}/{kind}", query={"task_id": task_id})
        assert status.status_code == 200, status.body
        body = body_of(status)
        if body["done"]:
            return body
        time.sleep(0.05)
    raise AssertionError(f"the {kind} task did not end")


def _bare(api: Api, name: str, namespace: str) -> None:
    body = {"name": name, "storage_namespace": namespace, "default_branch": "main"}
    assert api.post("/repositories", json_body=body, query={"bare": "true"}).status_code == 201


def _is_bare(services: wiring.Services, api: Api, repo: str) -> None:
    assert _refs(api, repo) == {"branches": {}, "tags": {}}
    assert list(services.engine.ports.refs.iterate_commits(repo)) == []  # type: ignore[arg-type]


def _executions(kind: str) -> list[str]:
    sfn = boto3.client("stepfunctions", region_name="us-east-1")
    arn = next(m["stateMachineArn"] for m in sfn.list_state_machines()["stateMachines"] if m["name"].endswith(kind))
    return [e["name"] for e in sfn.list_executions(stateMachineArn=arn)["executions"]]


@pytest.mark.parametrize("commits", [3, THRESHOLD + 1])
def test_dump_and_restore_inline_and_as_workflows(api: Api, repo: str, services: wiring.Services, commits: int) -> None:
    _history(api, repo, commits)
    as_workflow = commits + 1 > THRESHOLD  # the initial commit too
    before = _refs(api, repo)
    submitted = api.post(f"/repositories/{repo}/dump")
    assert submitted.status_code == 202, submitted.body
    task_id = conforms(lakefs_sdk.TaskInfo, body_of(submitted)).id
    assert (task_id in _executions("dump")) is as_workflow
    status = lakefs_sdk.RepositoryDumpStatus.from_dict(_wait(api, repo, "dump", task_id))
    assert status.id == task_id and status.error is None and status.refs is not None
    assert body_of(api.get(f"/repositories/{repo}/dump", query={"task_id": task_id}))["update_time"].endswith("Z")
    # The dump task wrote what the synchronous dump writes.
    assert body_of(api.request("PUT", f"/repositories/{repo}/refs/dump")) == status.refs.to_dict()

    namespace = body_of(api.get(f"/repositories/{repo}"))["storage_namespace"]
    _bare(api, "copy1", namespace)
    restore = api.post("/repositories/copy1/restore", json_body=status.refs.to_dict())
    assert restore.status_code == 202, restore.body
    restore_id = conforms(lakefs_sdk.TaskInfo, body_of(restore)).id
    assert (restore_id in _executions("restore")) is as_workflow
    done = lakefs_sdk.RepositoryRestoreStatus.from_dict(_wait(api, "copy1", "restore", restore_id))
    assert done.error is None
    assert _refs(api, "copy1") == before
    log = [c["id"] for c in body_of(api.get("/repositories/copy1/refs/main/commits"))["results"]]
    assert log == [c["id"] for c in body_of(api.get(f"/repositories/{repo}/refs/main/commits"))["results"]]
    # A task answers only through its own repository and kind.
    assert_error(api.get(f"/repositories/{repo}/restore", query={"task_id": restore_id}), 404)
    assert_error(api.get("/repositories/copy1/dump", query={"task_id": restore_id}), 404)


def _damaged(services: wiring.Services, namespace: str, refs: dict[str, str], position: int) -> dict[str, str]:
    """The dump with its commits file rebuilt so that the record at ``position`` is damaged (its parents are not a
    list) while the file itself is whole: header, count and hash all right. Only loading it can tell."""
    blocks = services.engine.ports.blocks
    lines = blocks.get(f"{namespace}/_lakefs/refs_dump/{refs['commits_meta_range_id']}.jsonl").decode().splitlines()
    record = json.loads(lines[1 + position])
    record["parents"] = "not-a-list"
    lines[1 + position] = json.dumps(record, sort_keys=True)
    data = ("\n".join(lines) + "\n").encode()
    dump_id = hashlib.sha256(data).hexdigest()
    blocks.put(f"{namespace}/_lakefs/refs_dump/{dump_id}.jsonl", data)
    return {**refs, "commits_meta_range_id": dump_id}


def _missing_commit(services: wiring.Services, namespace: str, refs: dict[str, str]) -> dict[str, str]:
    """The dump with a tag naming a commit its commits file lacks (the file whole)."""
    blocks = services.engine.ports.blocks
    lines = blocks.get(f"{namespace}/_lakefs/refs_dump/{refs['tags_meta_range_id']}.jsonl").decode().splitlines()
    lines[1] = json.dumps({"id": "v1", "commit_id": "f" * 64}, sort_keys=True)
    data = ("\n".join(lines) + "\n").encode()
    dump_id = hashlib.sha256(data).hexdigest()
    blocks.put(f"{namespace}/_lakefs/refs_dump/{dump_id}.jsonl", data)
    return {**refs, "tags_meta_range_id": dump_id}


@pytest.mark.parametrize("commits", [3, THRESHOLD + 2])
def test_a_restore_failing_part_way_rolls_back(
    api: Api, repo: str, services: wiring.Services, commits: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Chunks of a record or two: the damaged record is met after earlier chunks were written.
    monkeypatch.setattr(refs_restore, "CHUNK_BYTES", 300)
    _history(api, repo, commits)
    refs = body_of(api.request("PUT", f"/repositories/{repo}/refs/dump"))
    namespace = body_of(api.get(f"/repositories/{repo}"))["storage_namespace"]
    count = len(list(services.engine.ports.refs.iterate_commits(repo)))  # type: ignore[arg-type]

    for name, broken, says in (
        ("late", _damaged(services, namespace, refs, count - 1), "damaged commit record"),
        ("missing", _missing_commit(services, namespace, refs), "which its commits lack"),
    ):
        target = f"copy-{name}"
        _bare(api, target, namespace)
        submitted = api.post(f"/repositories/{target}/restore", json_body=broken)
        assert submitted.status_code == 202, submitted.body
        status = lakefs_sdk.RepositoryRestoreStatus.from_dict(_wait(api, target, "restore", body_of(submitted)["id"]))
        assert status.done and status.error is not None
        assert says in status.error and "nothing of it kept" in status.error, status.error
        _is_bare(services, api, target)
        # Left as it was: the good dump restores into it afterwards.
        again = api.post(f"/repositories/{target}/restore", json_body=refs)
        assert _wait(api, target, "restore", body_of(again)["id"]).get("error") is None
        assert _refs(api, target) == _refs(api, repo)

    # The synchronous restore rolls back the same way and answers the error.
    _bare(api, "copy-sync", namespace)
    failed = api.request(
        "PUT", "/repositories/copy-sync/refs/restore", json_body=_damaged(services, namespace, refs, 1)
    )
    assert "damaged commit record" in assert_error(failed, 400)
    _is_bare(services, api, "copy-sync")


def test_restore_submit_refusals(api: Api, repo: str, services: wiring.Services) -> None:
    _history(api, repo, 3)
    refs = body_of(api.request("PUT", f"/repositories/{repo}/refs/dump"))
    # Not bare: refused at once (400, lakeFS's message), no task.
    assert "bare repository" in assert_error(api.post(f"/repositories/{repo}/restore", json_body=refs), 400)
    assert_error(api.post("/repositories/nope/restore", json_body=refs), 404)
    assert_error(api.post("/repositories/nope/dump"), 404)
    assert_error(api.post(f"/repositories/{repo}/restore", json_body={"force": True}), 400)
    # A dump file that is not there fails the task (as lakeFS's task does), recorded, nothing written.
    namespace = body_of(api.get(f"/repositories/{repo}"))["storage_namespace"]
    _bare(api, "copy2", namespace)
    gone = api.post("/repositories/copy2/restore", json_body={**refs, "branches_meta_range_id": "0" * 64})
    failed = _wait(api, "copy2", "restore", body_of(gone)["id"])
    assert failed["error"]
    _is_bare(services, api, "copy2")


def test_a_restore_writes_each_chunk_of_commits_in_one_batch(
    api: Api, repo: str, services: wiring.Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    _history(api, repo, 3)  # 4 commits with the initial one
    refs = body_of(api.request("PUT", f"/repositories/{repo}/refs/dump"))
    namespace = body_of(api.get(f"/repositories/{repo}"))["storage_namespace"]
    _bare(api, "copy", namespace)
    store = services.engine.ports.refs
    batches: list[int] = []
    singles: list[str] = []
    add_commits = store.add_commits
    monkeypatch.setattr(
        store, "add_commits", lambda rid, commits: (batches.append(len(commits)), add_commits(rid, commits))
    )
    monkeypatch.setattr(store, "add_commit", lambda rid, commit: singles.append(commit.id))
    monkeypatch.setattr(refs_restore, "CHUNK_BYTES", 900)  # about two records a chunk
    assert api.request("PUT", "/repositories/copy/refs/restore", json_body=refs).status_code == 200
    # Every commit went through a batch, one call per chunk of the file; none was put alone.
    assert singles == [] and sum(batches) == 4 and 1 < len(batches) < 4
    assert _refs(api, "copy") == _refs(api, repo)


def test_an_inline_dump_leaves_no_scratch_file(api: Api, repo: str, services: wiring.Services) -> None:
    _history(api, repo, 2)
    assert api.request("PUT", f"/repositories/{repo}/refs/dump").status_code == 201
    assert api.post(f"/repositories/{repo}/dump").status_code == 202
    namespace = body_of(api.get(f"/repositories/{repo}"))["storage_namespace"]
    assert list(services.engine.ports.blocks.list_blobs(f"{namespace}/_lakefs/refs_dump/scratch/")) == []
