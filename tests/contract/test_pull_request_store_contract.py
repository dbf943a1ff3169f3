"""PullRequestStore contract: the in-memory twin and the DynamoDB store (on moto) behave the same."""

from __future__ import annotations

from dataclasses import replace

import pytest

from chalicelib.adapters.dynamodb import TableNames
from chalicelib.adapters.dynamodb.pull_requests import DynamoPullRequestStore
from chalicelib.adapters.memory_pulls import MemoryPullRequestStore
from chalicelib.graveler import errors
from chalicelib.graveler.ports import PullRequestStore
from chalicelib.graveler.records import BranchID, Repository, RepositoryID
from chalicelib.graveler.usecases.pull_requests import PullRequest, PullRequestStatus, new_pull_request_id

from .conftest import REGION

REPO = Repository(RepositoryID("repo1"), "s3://bucket/repo1", BranchID("main"), 1_700_000_000, generation="g1")
AGAIN = replace(REPO, generation="g2")  # the same id, deleted and created again
OTHER = replace(REPO, id=RepositoryID("repo2"))


def _pr(pr_id: str, title: str = "t", description: str = "d") -> PullRequest:
    return PullRequest(pr_id, title, description, "alice", "dev", "main", PullRequestStatus.OPEN, 1_700_000_000.25)


@pytest.fixture
def store(table_names: TableNames | None) -> PullRequestStore:
    if table_names is None:
        return MemoryPullRequestStore()
    return DynamoPullRequestStore(table_names, REGION)


def test_create_get_and_duplicate(store: PullRequestStore) -> None:
    pr = _pr("a" * 20, description="ünïcode\nand lines")
    store.create(REPO, pr)
    assert store.get(REPO, pr.id) == pr
    with pytest.raises(errors.PullRequestExists):
        store.create(REPO, replace(pr, title="other"))
    assert store.get(REPO, pr.id) == pr
    with pytest.raises(errors.PullRequestNotFound):
        store.get(REPO, "b" * 20)


def test_generations_and_repositories_are_apart(store: PullRequestStore) -> None:
    store.create(REPO, _pr("a" * 20))
    with pytest.raises(errors.PullRequestNotFound):
        store.get(AGAIN, "a" * 20)
    with pytest.raises(errors.PullRequestNotFound):
        store.get(OTHER, "a" * 20)
    assert store.list(AGAIN) == [] and store.list(OTHER) == []


def test_list_in_id_order_after_and_limit(store: PullRequestStore) -> None:
    ids = [new_pull_request_id(1_700_000_000 + i / 10) for i in range(5)]
    for pr_id in reversed(ids):
        store.create(REPO, _pr(pr_id))
    assert [p.id for p in store.list(REPO)] == ids
    assert [p.id for p in store.list(REPO, "", 2)] == ids[:2]
    assert [p.id for p in store.list(REPO, ids[1], 2)] == ids[2:4]
    assert store.list(REPO, ids[-1]) == []


def test_update_is_a_compare_and_swap(store: PullRequestStore) -> None:
    pr = _pr("c" * 20)
    store.create(REPO, pr)
    closed = replace(pr, status=PullRequestStatus.CLOSED, closed_date=1_700_000_100.5)
    store.update(REPO, closed, pr)
    assert store.get(REPO, pr.id) == closed
    # The expected state is stale: refused, nothing changed.
    with pytest.raises(errors.PreconditionFailed):
        store.update(REPO, replace(pr, title="late"), pr)
    assert store.get(REPO, pr.id) == closed
    merged = replace(closed, status=PullRequestStatus.MERGED, merged_commit_id="f" * 64)
    store.update(REPO, merged, closed)
    assert store.get(REPO, pr.id) == merged
    with pytest.raises(errors.PullRequestNotFound):
        store.update(REPO, _pr("d" * 20), _pr("d" * 20))


def test_delete_all_removes_one_generation_only(store: PullRequestStore) -> None:
    ids = [new_pull_request_id(1_700_000_000 + i / 10) for i in range(30)]  # more than one batch of 25
    for pr_id in ids:
        store.create(REPO, _pr(pr_id))
    store.create(AGAIN, _pr(ids[0]))
    store.create(OTHER, _pr(ids[0]))
    assert store.delete_all(REPO) == 30
    assert store.list(REPO) == []
    with pytest.raises(errors.PullRequestNotFound):
        store.get(REPO, ids[0])
    assert [p.id for p in store.list(AGAIN)] == [ids[0]] and [p.id for p in store.list(OTHER)] == [ids[0]]
    assert store.delete_all(REPO) == 0
