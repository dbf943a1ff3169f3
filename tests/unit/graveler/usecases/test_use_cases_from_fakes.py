"""Use cases built from their own records alone: the in-memory twins of the stores they name and plain functions for
the shared reads they call (no ``EngineParts``, no ``Reads``, no wiring, no engine). What a use case may touch is
what its record names; the fakes below count what it called."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from chalicelib.adapters.memory_blocks import MemoryBlockStore
from chalicelib.adapters.memory_refs import MemoryRefStore
from chalicelib.adapters.memory_staging import MemoryStagingStore
from chalicelib.graveler import errors
from chalicelib.graveler.actions import HookEvent
from chalicelib.graveler.actions.events import EventType
from chalicelib.graveler.branches.protection import NoProtection
from chalicelib.graveler.committed import CommittedManager
from chalicelib.graveler.reads.collected import CollectedCheck
from chalicelib.graveler.records import Branch, BranchID, Commit, Repository, RepositoryID, ResolvedRef
from chalicelib.graveler.refs import resolve_ref
from chalicelib.graveler.storage.caches import TTLCache
from chalicelib.graveler.usecases.branches_and_tags import BranchesAndTags, BranchParts
from chalicelib.graveler.usecases.diffs import History, HistoryParts
from chalicelib.graveler.usecases.objects import ObjectParts, Objects
from chalicelib.graveler.usecases.repositories import Repositories, RepositoryParts


@dataclass
class Fakes:
    """The stores (memory twins) and the shared reads as functions over them, counting their calls."""

    refs: MemoryRefStore = field(default_factory=MemoryRefStore)
    blocks: MemoryBlockStore = field(default_factory=MemoryBlockStore)
    calls: list[str] = field(default_factory=list)
    forgotten: list[str] = field(default_factory=list)
    events: list[EventType] = field(default_factory=list)
    now: float = 1_700_000_000.0

    def __post_init__(self) -> None:
        self.staging = MemoryStagingStore(self.refs)
        self.committed = CommittedManager(self.blocks)

    def clock(self) -> float:
        self.now += 1
        return self.now

    def get_repository(self, repo_id: str) -> Repository:
        self.calls.append("get_repository")
        return self.refs.get_repository(RepositoryID(repo_id))

    def repository_for_write(self, repo_id: str, force: bool = False) -> Repository:
        self.calls.append("repository_for_write")
        return self.refs.get_repository(RepositoryID(repo_id))

    def get_branch(self, repo_id: str, branch_id: str) -> Branch:
        return self.refs.get_branch(RepositoryID(repo_id), BranchID(branch_id))

    def resolve(self, repo_id: str, ref: str) -> ResolvedRef:
        self.calls.append("resolve")
        return resolve_ref(self.refs, RepositoryID(repo_id), ref)

    def commit_of(self, repo_id: RepositoryID, ref: str, branches: dict[BranchID, Branch] | None = None) -> Commit:
        return self.refs.get_commit(repo_id, resolve_ref(self.refs, repo_id, ref, branches).commit_id)

    def run_pre_hooks(self, event: HookEvent, branch: Branch | None = None) -> str:
        self.events.append(event.event_type)
        return ""

    def run_post_hooks(self, event: HookEvent) -> None:
        self.events.append(event.event_type)

    def forget(self, repo: Repository) -> None:
        self.forgotten.append(repo.id)

    def repositories(self) -> Repositories:
        return Repositories(
            RepositoryParts(
                self.refs,
                self.staging,
                self.blocks,
                self.committed,
                self.clock,
                None,
                self.get_repository,
                self.repository_for_write,
                self.forget,
            )
        )

    def objects(self) -> Objects:
        return Objects(
            ObjectParts(
                self.refs,
                self.staging,
                self.blocks,
                self.committed,
                self.clock,
                NoProtection(),
                CollectedCheck(self.blocks),
                TTLCache(2.0),
                self.get_repository,
                self.resolve,
                self.repository_for_write,
            )
        )

    def branches(self, hooks: bool) -> BranchesAndTags:
        return BranchesAndTags(
            BranchParts(
                self.refs,
                self.staging,
                NoProtection(),
                TTLCache(2.0),
                object() if hooks else None,  # type: ignore[arg-type]  # only tested for None
                self.get_repository,
                self.get_branch,
                self.resolve,
                self.repository_for_write,
                self.run_pre_hooks,
                self.run_post_hooks,
            )
        )

    def history(self) -> History:
        return History(
            HistoryParts(self.refs, self.staging, self.committed, self.get_repository, self.resolve, self.commit_of)
        )


@pytest.fixture
def fakes() -> Fakes:
    made = Fakes()
    made.repositories().create_repository("repo", "s3://bucket/repo")
    return made


def test_repositories_create_and_delete_forgetting_what_hangs_off_them(fakes: Fakes) -> None:
    repositories = fakes.repositories()
    assert repositories.get_repository("repo").default_branch_id == "main"
    assert [repo.id for repo in repositories.list_repositories().results] == ["repo"]
    repositories.delete_repository("repo")
    assert fakes.forgotten == ["repo"]
    assert repositories.list_repositories().results == []


def test_objects_write_through_the_write_read_and_read_through_resolve(fakes: Fakes) -> None:
    objects = fakes.objects()
    fakes.calls.clear()
    objects.upload_object("repo", "main", "a.txt", b"hello")
    assert "repository_for_write" in fakes.calls and "get_repository" not in fakes.calls
    fakes.calls.clear()
    found = objects.stat_object("repo", "main", "a.txt")
    assert fakes.calls == ["get_repository", "resolve"]
    assert objects.read_object("repo", found) == b"hello"
    with pytest.raises(errors.ObjectNotFound):
        objects.stat_object("repo", "main", "missing.txt")


def test_branches_call_the_hooks_they_are_given(fakes: Fakes) -> None:
    branches = fakes.branches(hooks=True)
    branches.create_branch("repo", "dev", "main")
    branches.create_tag("repo", "v1", "dev")
    branches.delete_tag("repo", "v1")
    branches.delete_branch("repo", "dev")
    assert fakes.events == [
        EventType.PRE_CREATE_BRANCH,
        EventType.POST_CREATE_BRANCH,
        EventType.PRE_CREATE_TAG,
        EventType.POST_CREATE_TAG,
        EventType.PRE_DELETE_TAG,
        EventType.POST_DELETE_TAG,
        EventType.PRE_DELETE_BRANCH,
        EventType.POST_DELETE_BRANCH,
    ]


def test_a_tag_deleted_without_hooks_runs_none(fakes: Fakes) -> None:
    branches = fakes.branches(hooks=False)
    branches.create_tag("repo", "v1", "main")
    branches.delete_tag("repo", "v1")
    assert EventType.PRE_DELETE_TAG not in fakes.events
    with pytest.raises(errors.TagNotFound):
        branches.get_tag("repo", "v1")


def test_history_shows_uncommitted_changes_and_the_log(fakes: Fakes) -> None:
    fakes.objects().upload_object("repo", "main", "a.txt", b"hello")
    history = fakes.history()
    assert history.is_dirty("repo", "main")
    assert [d.key for d in history.diff_uncommitted("repo", "main").results] == ["a.txt"]
    assert [c.message for c in history.log("repo", "main").results] == ["Repository created"]
