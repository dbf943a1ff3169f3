"""BranchProtectionStore contract: the in-memory twin and the DynamoDB store (on moto) behave the same: rules
per repository generation, the ETag compare-and-swap, and a repository item the ref store still reads."""

from __future__ import annotations

import pytest

from chalicelib.adapters.dynamodb import TableNames
from chalicelib.adapters.dynamodb.branch_protection import DynamoBranchProtectionStore
from chalicelib.adapters.memory import MemoryBranchProtectionStore, MemoryRefStore
from chalicelib.graveler import errors
from chalicelib.graveler.branches.protection import (
    BranchProtectionStore,
    ProtectionRules,
    etag_of,
)
from chalicelib.graveler.ports import RefStore
from chalicelib.graveler.records import (
    BranchID,
    Repository,
    RepositoryID,
    RepositoryState,
)

from .conftest import REGION

REPO = Repository(RepositoryID("repo1"), "s3://bucket/repo1", BranchID("main"), 1_700_000_000, RepositoryState.ACTIVE)
DATE = REPO.creation_date


def rules(*patterns: str) -> ProtectionRules:
    return ProtectionRules(patterns, etag_of(patterns))


@pytest.fixture
def store(ref_store: RefStore, table_names: TableNames | None) -> BranchProtectionStore:
    if table_names is None:
        assert isinstance(ref_store, MemoryRefStore)
        return MemoryBranchProtectionStore(ref_store)
    return DynamoBranchProtectionStore(table_names, REGION)


def test_set_get_and_the_etag_compare_and_swap(store: BranchProtectionStore, ref_store: RefStore) -> None:
    ref_store.create_repository(REPO)
    assert store.get("repo1", DATE) == ProtectionRules((), "")
    with pytest.raises(errors.PreconditionFailed):
        store.set("repo1", DATE, rules("main"), "some-etag")
    store.set("repo1", DATE, rules("main", "release-*"), "")
    assert store.get("repo1", DATE) == rules("main", "release-*")
    with pytest.raises(errors.PreconditionFailed):
        store.set("repo1", DATE, rules("x"), "")
    with pytest.raises(errors.PreconditionFailed):
        store.set("repo1", DATE, rules("x"), rules("main").etag)
    store.set("repo1", DATE, rules("stable"), rules("main", "release-*").etag)
    store.set("repo1", DATE, rules(), None)
    assert store.get("repo1", DATE) == rules()
    assert ref_store.get_repository(RepositoryID("repo1")) == REPO


def test_rules_go_with_their_repository(store: BranchProtectionStore, ref_store: RefStore) -> None:
    with pytest.raises(errors.RepositoryNotFound):
        store.get("repo1", DATE)
    with pytest.raises(errors.RepositoryNotFound):
        store.set("repo1", DATE, rules("main"), None)
    ref_store.create_repository(REPO)
    store.set("repo1", DATE, rules("main"), None)
    with pytest.raises(errors.RepositoryNotFound):
        store.get("repo1", DATE + 1)
    with pytest.raises(errors.RepositoryNotFound):
        store.set("repo1", DATE + 1, rules("x"), None)
    ref_store.delete_repository(RepositoryID("repo1"))
    ref_store.create_repository(
        Repository(REPO.id, REPO.storage_namespace, REPO.default_branch_id, DATE + 5, RepositoryState.ACTIVE)
    )
    assert store.get("repo1", DATE + 5) == ProtectionRules((), "")
