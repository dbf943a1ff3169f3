"""CachedRefStore: commits remembered for good (bounded), repositories for a TTL, branches and tags only under a
witness that their table is unchanged; and the staging write still re-reads the branch after writing, whatever the
caller read before."""

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
    Tag,
    TagID,
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

    def get_tag(self, repo_id: RepositoryID, tag_id: TagID) -> Tag:
        self.reads["tag"] += 1
        return super().get_tag(repo_id, tag_id)


class Writes:
    """A ChangeWitness whose table's writes the test counts by hand."""

    def __init__(self) -> None:
        self.count = 0

    def mark(self) -> object:
        return self.count

    def unchanged_since(self, mark: object) -> bool:
        return self.count == mark


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


def test_branches_are_never_cached_without_a_witness(inner: CountingRefs) -> None:
    cached = CachedRefStore(inner)
    inner.create_branch(REPO, Branch(BranchID("main"), CommitID(""), StagingToken("t1")))
    cached.get_branch(REPO, BranchID("main"))
    cached.get_branch(REPO, BranchID("main"))
    assert inner.reads["branch"] == 2


MAIN = BranchID("main")


def test_under_a_witness_a_branch_is_read_again_only_after_its_table_was_written(inner: CountingRefs) -> None:
    writes = Writes()
    cached = CachedRefStore(inner, branch_witness=writes)
    inner.create_branch(REPO, Branch(MAIN, CommitID("c1"), StagingToken("t1")))
    assert [cached.get_branch(REPO, MAIN).commit_id for _ in range(3)] == ["c1"] * 3
    assert inner.reads["branch"] == 1
    # Another writer moves it, unseen by this container: only the witness tells (a real one counts the write as
    # soon as it is answered, lakelet/stack/table_writes.py; this one when the test says).
    inner.set_branch(REPO, Branch(MAIN, CommitID("c2"), StagingToken("t1")), inner.get_branch(REPO, MAIN))
    assert cached.get_branch(REPO, MAIN).commit_id == "c1"
    writes.count += 1
    assert cached.get_branch(REPO, MAIN).commit_id == "c2"
    assert cached.get_branch(REPO, MAIN).commit_id == "c2"
    assert inner.reads["branch"] == 3  # 1 + the test's own read + 1 after the write


def test_the_mark_is_taken_before_the_read(inner: CountingRefs) -> None:
    """A write that completes while the read is under way may or may not be in what it returned: the record is
    not answered again after it."""
    writes = Writes()
    cached = CachedRefStore(inner, branch_witness=writes)
    inner.create_branch(REPO, Branch(MAIN, CommitID("c1"), StagingToken("t1")))
    original = inner.get_branch

    def read_then_a_write_lands(repo_id: RepositoryID, branch_id: BranchID) -> Branch:
        found = original(repo_id, branch_id)
        writes.count += 1
        return found

    inner.get_branch = read_then_a_write_lands  # type: ignore[method-assign]
    cached.get_branch(REPO, MAIN)
    inner.get_branch = original  # type: ignore[method-assign]
    cached.get_branch(REPO, MAIN)
    assert inner.reads["branch"] == 2


def test_a_missing_branch_or_tag_is_remembered_as_missing_with_the_stores_error(inner: CountingRefs) -> None:
    branches, tags = Writes(), Writes()
    cached = CachedRefStore(inner, branch_witness=branches, tag_witness=tags)
    messages = []
    for _ in range(2):
        with pytest.raises(errors.BranchNotFound) as missing:
            cached.get_branch(REPO, BranchID("nope"))
        messages.append(str(missing.value))
        with pytest.raises(errors.TagNotFound):
            cached.get_tag(REPO, TagID("v1"))
    assert messages[0] == messages[1] and "nope" in messages[0]
    assert (inner.reads["branch"], inner.reads["tag"]) == (1, 1)
    inner.create_tag(REPO, Tag(TagID("v1"), CommitID("c1")))
    tags.count += 1
    assert [cached.get_tag(REPO, TagID("v1")).commit_id for _ in range(2)] == ["c1", "c1"]
    assert inner.reads["tag"] == 2


def test_this_containers_own_writes_drop_what_it_remembered(inner: CountingRefs) -> None:
    """Even under a witness that missed them."""
    cached = CachedRefStore(inner, branch_witness=Writes(), tag_witness=Writes())
    with pytest.raises(errors.BranchNotFound):
        cached.get_branch(REPO, MAIN)
    cached.create_branch(REPO, Branch(MAIN, CommitID("c1"), StagingToken("t1")))
    first = cached.get_branch(REPO, MAIN)
    cached.set_branch(REPO, Branch(MAIN, CommitID("c2"), StagingToken("t2")), first)
    assert cached.get_branch(REPO, MAIN).commit_id == "c2"
    cached.delete_branch(REPO, MAIN)
    with pytest.raises(errors.BranchNotFound):
        cached.get_branch(REPO, MAIN)
    cached.create_tag(REPO, Tag(TagID("v1"), CommitID("c1")))
    assert cached.get_tag(REPO, TagID("v1")).commit_id == "c1"
    cached.delete_tag(REPO, TagID("v1"))
    with pytest.raises(errors.TagNotFound):
        cached.get_tag(REPO, TagID("v1"))
    cached.create_branch(REPO, Branch(MAIN, CommitID("c3"), StagingToken("t3")))
    cached.get_branch(REPO, MAIN)
    cached.delete_repository(REPO)
    with pytest.raises(errors.BranchNotFound):
        cached.get_branch(REPO, MAIN)


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
