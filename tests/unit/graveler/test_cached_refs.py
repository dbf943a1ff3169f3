"""CachedRefStore: commits remembered for good (bounded), repositories for a TTL, branches never; and the staging
write still re-reads the branch after writing, whatever the caller read before."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from chalicelib.adapters.memory import MemoryRefStore, MemoryStagingStore
from chalicelib.graveler import errors
from chalicelib.graveler.records import (
    Branch,
    BranchID,
    Commit,
    CommitID,
    Key,
    MetaRangeID,
    Repository,
    RepositoryID,
    StagedEntry,
    StagingToken,
)
from chalicelib.graveler.storage.cached_refs import CachedRefStore
from chalicelib.graveler.writes.staging import stage

REPO = RepositoryID("r")


class CountingRefs(MemoryRefStore):
    def __init__(self) -> None:
        super().__init__()
        self.reads: Counter[str] = Counter()

    def get_repository(self, repo_id: RepositoryID) -> Repository:
        self.reads["repository"] += 1
        return super().get_repository(repo_id)

    def get_commit(self, repo_id: RepositoryID, commit_id: CommitID) -> Commit:
        self.reads["commit"] += 1
        return super().get_commit(repo_id, commit_id)

    def get_branch(self, repo_id: RepositoryID, branch_id: BranchID) -> Branch:
        self.reads["branch"] += 1
        return super().get_branch(repo_id, branch_id)


def _commit(n: int) -> Commit:
    return Commit(CommitID(f"{n:064x}"), "me", f"c{n}", 0.0, MetaRangeID(""))


@pytest.fixture
def inner() -> CountingRefs:
    refs = CountingRefs()
    refs.create_repository(Repository(REPO, "s3://b/r", BranchID("main"), 0))
    return refs


def test_a_commit_is_read_once_and_the_bound_holds(inner: CountingRefs) -> None:
    cached = CachedRefStore(inner, max_commits=2)
    for n in range(3):
        cached.add_commit(REPO, _commit(n))
    assert cached.get_commit(REPO, _commit(2).id) == _commit(2)
    assert cached.get_commit(REPO, _commit(1).id) == _commit(1)
    assert inner.reads["commit"] == 0  # both kept from add_commit
    cached.get_commit(REPO, _commit(0).id)  # pushed out by the bound: read from the store
    cached.get_commit(REPO, _commit(0).id)
    assert inner.reads["commit"] == 1
    with pytest.raises(errors.CommitNotFound):
        cached.get_commit(REPO, _commit(9).id)


def test_a_repository_is_remembered_for_the_ttl_and_dropped_by_a_delete(inner: CountingRefs) -> None:
    now = [0.0]
    cached = CachedRefStore(inner, repository_ttl_seconds=2.0, clock=lambda: now[0])
    cached.get_repository(REPO)
    cached.get_repository(REPO)
    assert inner.reads["repository"] == 1
    now[0] = 2.5
    cached.get_repository(REPO)
    assert inner.reads["repository"] == 2
    cached.delete_repository(REPO)
    with pytest.raises(errors.RepositoryNotFound):
        cached.get_repository(REPO)


def test_branches_are_never_cached(inner: CountingRefs) -> None:
    cached = CachedRefStore(inner)
    inner.create_branch(REPO, Branch(BranchID("main"), CommitID(""), StagingToken("t1")))
    cached.get_branch(REPO, BranchID("main"))
    cached.get_branch(REPO, BranchID("main"))
    assert inner.reads["branch"] == 2


def test_staging_with_the_callers_branch_still_rechecks_and_follows_a_seal(inner: CountingRefs) -> None:
    """The caller's branch saves the read before the write, never the re-check after it: a seal that lands
    between the caller's read and the write sends the change to the new token too."""
    inner.create_branch(REPO, Branch(BranchID("main"), CommitID(""), StagingToken("t1")))
    read_by_caller = inner.get_branch(REPO, BranchID("main"))
    sealed = Branch(BranchID("main"), CommitID(""), StagingToken("t2"), (StagingToken("t1"),))
    inner.set_branch(REPO, sealed, read_by_caller)
    staging = MemoryStagingStore()
    inner.reads.clear()
    change = StagedEntry(Key("k"), None)
    stage(inner, staging, REPO, BranchID("main"), change, read_by_caller)
    assert staging.get(StagingToken("t1"), Key("k")) == change
    assert staging.get(StagingToken("t2"), Key("k")) == change
    # The re-check after the first write, and the one after the write to the new token: no other read.
    assert inner.reads["branch"] == 2


def test_unknown_attributes_reach_the_wrapped_store(inner: CountingRefs) -> None:
    cached: Any = CachedRefStore(inner)
    assert cached.list_repositories()[0].id == REPO


def test_a_cached_repository_keeps_its_range_format():
    inner = CountingRefs()
    refs = CachedRefStore(inner)
    refs.create_repository(Repository(REPO, "s3://b/r", BranchID("main"), 1, range_format=2))
    inner.create_repository(Repository(RepositoryID("old"), "s3://b/old", BranchID("main"), 1))
    assert [refs.get_repository(REPO).range_format for _ in range(2)] == [2, 2]
    assert refs.get_repository(RepositoryID("old")).range_format == 1
    assert inner.reads["repository"] == 2  # one per repository: the second read of r came from the cache
