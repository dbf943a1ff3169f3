"""The official lakefs-sdk against the embedded stack (DynamoDB and S3 on moto): a pull request opened, listed and
merged; a repository dumped, deleted, created again bare on its namespace and restored from the dump."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from pathlib import Path

import lakefs_sdk
import pytest
from lakefs_sdk import ApiException

from .conftest import LocalProcess

pytestmark = pytest.mark.e2e


@pytest.fixture
def admin(local_stack: LocalProcess) -> lakefs_sdk.ApiClient:
    configuration = lakefs_sdk.Configuration(
        host=local_stack.api_url, username=local_stack.access_key_id, password=local_stack.secret_access_key
    )
    return lakefs_sdk.ApiClient(configuration)


def _repository(admin: lakefs_sdk.ApiClient) -> tuple[str, str]:
    name = f"prd-{uuid.uuid4().hex[:10]}"
    prefix = lakefs_sdk.ConfigApi(admin).get_config().storage_config.default_namespace_prefix
    namespace = f"{prefix}/{name}"
    lakefs_sdk.RepositoriesApi(admin).create_repository(
        lakefs_sdk.RepositoryCreation(name=name, storage_namespace=namespace)
    )
    return name, namespace


def _write(admin: lakefs_sdk.ApiClient, repo: str, branch: str, path: str, data: bytes, tmp: Path) -> None:
    # The SDK uploads a file by its name.
    source = tmp / uuid.uuid4().hex
    source.write_bytes(data)
    lakefs_sdk.ObjectsApi(admin).upload_object(repo, branch, path, content=str(source))
    lakefs_sdk.CommitsApi(admin).commit(repo, branch, lakefs_sdk.CommitCreation(message=f"add {path}"))


def _read(admin: lakefs_sdk.ApiClient, repo: str, ref: str, path: str) -> bytes:
    return bytes(lakefs_sdk.ObjectsApi(admin).get_object(repo, ref, path))


def test_pull_request_create_list_and_merge(admin: lakefs_sdk.ApiClient, tmp_path: Path) -> None:
    repo, _ = _repository(admin)
    lakefs_sdk.BranchesApi(admin).create_branch(repo, lakefs_sdk.BranchCreation(name="feature", source="main"))
    _write(admin, repo, "feature", "data/a.csv", b"1,2,3\n", tmp_path)
    pulls = lakefs_sdk.PullsApi(admin)
    created = pulls.create_pull_request(
        repo,
        lakefs_sdk.PullRequestCreation(
            title="add a.csv", description="first data", source_branch="feature", destination_branch="main"
        ),
    )
    listed = pulls.list_pull_requests(repo, status="open")
    assert [p.id for p in listed.results] == [created.id]
    pulls.update_pull_request(repo, created.id, lakefs_sdk.PullRequestBasic(title="add the a file"))
    assert pulls.get_pull_request(repo, created.id).title == "add the a file"

    merged = pulls.merge_pull_request(repo, created.id)
    pr = pulls.get_pull_request(repo, created.id)
    assert pr.status == "merged" and pr.merged_commit_id == merged.reference and pr.closed_date is not None
    assert _read(admin, repo, "main", "data/a.csv") == b"1,2,3\n"
    assert pulls.list_pull_requests(repo, status="open").results == []
    assert [p.id for p in pulls.list_pull_requests(repo, status="closed").results] == [created.id]
    with pytest.raises(ApiException) as refused:
        pulls.merge_pull_request(repo, created.id)
    assert refused.value.status == 400


def _wait[T](poll: Callable[[], T], done: Callable[[T], bool]) -> T:
    deadline = time.monotonic() + 30
    while True:
        state = poll()
        if done(state) or time.monotonic() > deadline:
            return state
        time.sleep(0.2)


def test_dump_delete_and_restore_into_a_bare_repository(admin: lakefs_sdk.ApiClient, tmp_path: Path) -> None:
    repo, namespace = _repository(admin)
    _write(admin, repo, "main", "a.csv", b"first", tmp_path)
    lakefs_sdk.BranchesApi(admin).create_branch(repo, lakefs_sdk.BranchCreation(name="dev", source="main"))
    _write(admin, repo, "dev", "b.csv", b"second", tmp_path)
    lakefs_sdk.TagsApi(admin).create_tag(repo, lakefs_sdk.TagCreation(id="v1", ref="main"))
    repos = lakefs_sdk.RepositoriesApi(admin)
    log_before = [c.id for c in lakefs_sdk.RefsApi(admin).log_commits(repo, "dev").results]

    task = repos.dump_submit(repo)
    dump = _wait(lambda: repos.dump_status(repo, task.id), lambda s: s.done)
    assert dump.done and dump.error is None and dump.refs is not None
    # lakectl's older route gives the same ids.
    assert lakefs_sdk.InternalApi(admin).dump_refs(repo) == dump.refs

    repos.delete_repository(repo)
    bare = repos.create_repository(
        lakefs_sdk.RepositoryCreation(name=repo, storage_namespace=namespace, default_branch="main"), bare=True
    )
    assert bare.id == repo
    assert lakefs_sdk.BranchesApi(admin).list_branches(repo).results == []

    restore = repos.restore_submit(repo, lakefs_sdk.RefsRestore(**dump.refs.to_dict()))
    state = _wait(lambda: repos.restore_status(repo, restore.id), lambda s: s.done)
    assert state.done and state.error is None
    assert [c.id for c in lakefs_sdk.RefsApi(admin).log_commits(repo, "dev").results] == log_before
    assert _read(admin, repo, "dev", "b.csv") == b"second"
    assert _read(admin, repo, "v1", "a.csv") == b"first"
    # Writable again, on fresh staging areas.
    _write(admin, repo, "main", "c.csv", b"third", tmp_path)
    with pytest.raises(ApiException) as refused:
        repos.restore_submit(repo, lakefs_sdk.RefsRestore(**dump.refs.to_dict()))
    assert refused.value.status == 400
