"""RepositoryMetadataStore contract: the in-memory twin and the DynamoDB store (on moto) behave the same, and
the DynamoDB store leaves the repository item readable by the ref store."""

from __future__ import annotations

import pytest

from chalicelib.adapters.dynamodb import TableNames
from chalicelib.adapters.dynamodb.repository_metadata import (
    DynamoRepositoryMetadataStore,
)
from chalicelib.adapters.memory import MemoryRefStore, MemoryRepositoryMetadataStore
from chalicelib.graveler import errors
from chalicelib.graveler.ports import RefStore
from chalicelib.graveler.records import (
    BranchID,
    Repository,
    RepositoryID,
    RepositoryState,
)
from chalicelib.repository_metadata import RepositoryMetadataStore

from .conftest import REGION

REPO = Repository(RepositoryID("repo1"), "s3://bucket/repo1", BranchID("main"), 1_700_000_000, RepositoryState.ACTIVE)


@pytest.fixture
def store(ref_store: RefStore, table_names: TableNames | None) -> RepositoryMetadataStore:
    if table_names is None:
        assert isinstance(ref_store, MemoryRefStore)
        return MemoryRepositoryMetadataStore(ref_store)
    return DynamoRepositoryMetadataStore(table_names, REGION)


def test_set_get_and_delete(store: RepositoryMetadataStore, ref_store: RefStore) -> None:
    ref_store.create_repository(REPO)
    assert store.get("repo1", REPO.creation_date) == {}
    store.set("repo1", REPO.creation_date, {"owner": "data-team", "a.b#c d": "x", "empty": ""})
    store.set("repo1", REPO.creation_date, {"owner": "ml-team", "tier": "gold"})
    assert store.get("repo1", REPO.creation_date) == {"owner": "ml-team", "a.b#c d": "x", "empty": "", "tier": "gold"}
    store.delete("repo1", REPO.creation_date, ["a.b#c d", "missing", "tier"])
    assert store.get("repo1", REPO.creation_date) == {"owner": "ml-team", "empty": ""}
    store.delete("repo1", REPO.creation_date, [])
    # The repository itself is untouched.
    assert ref_store.get_repository(RepositoryID("repo1")) == REPO


def test_delete_before_any_set(store: RepositoryMetadataStore, ref_store: RefStore) -> None:
    ref_store.create_repository(REPO)
    store.delete("repo1", REPO.creation_date, ["nothing"])
    assert store.get("repo1", REPO.creation_date) == {}


def test_missing_or_other_generation_is_not_found(store: RepositoryMetadataStore, ref_store: RefStore) -> None:
    with pytest.raises(errors.RepositoryNotFound):
        store.get("repo1", REPO.creation_date)
    with pytest.raises(errors.RepositoryNotFound):
        store.set("repo1", REPO.creation_date, {"k": "v"})
    with pytest.raises(errors.RepositoryNotFound):
        ref_store.get_repository(RepositoryID("repo1"))  # no partial item was created
    ref_store.create_repository(REPO)
    for call in (
        lambda: store.get("repo1", REPO.creation_date + 1),
        lambda: store.set("repo1", REPO.creation_date + 1, {"k": "v"}),
        lambda: store.delete("repo1", REPO.creation_date + 1, ["k"]),
    ):
        with pytest.raises(errors.RepositoryNotFound):
            call()
    assert store.get("repo1", REPO.creation_date) == {}
