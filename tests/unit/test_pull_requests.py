"""graveler/usecases/pull_requests.py on the memory twin and fakes of the engine's reads and merge entry: ids, status
rules, the status filter and paging, the edit loop's compare-and-swap, and the merge's bookkeeping."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import pytest

from chalicelib.adapters.memory_pulls import MemoryPullRequestStore
from chalicelib.graveler import errors
from chalicelib.graveler.records import BranchID, Commit, CommitID, MetaRangeID, Repository, RepositoryID
from chalicelib.graveler.usecases.pull_requests import (
    UPDATE_TRIES,
    PullRequest,
    PullRequestParts,
    PullRequests,
    PullRequestStatus,
    PullRequestUpdate,
    new_pull_request_id,
)

REPO = Repository(RepositoryID("repo1"), "s3://b/repo1", BranchID("main"), 1, generation="g")


@dataclass
class FakeEngine:
    now: float = 1_800_000_000.0
    branches: set[str] = field(default_factory=lambda: {"main", "dev", "f1", "f2"})
    merges: list[tuple[Any, ...]] = field(default_factory=list)
    fail_merge: Exception | None = None
    tasks: dict[str, Any] = field(default_factory=dict)

    def repository(self, repo_id: str) -> Repository:
        if repo_id != REPO.id:
            raise errors.RepositoryNotFound(repo_id)
        return REPO

    def check_branch(self, repo_id: str, branch_id: str) -> None:
        if branch_id not in self.branches:
            raise errors.BranchNotFound(branch_id)

    def merge(self, *args: Any, **kwargs: Any) -> Commit:
        if self.fail_merge is not None:
            raise self.fail_merge
        self.merges.append(args)
        return Commit(CommitID("c" * 64), "u", "m", self.now, MetaRangeID(""))

    def merge_status(self, repo_id: str, destination: str, task_id: str) -> Any:
        return self.tasks[task_id]

    def clock(self) -> float:
        self.now += 0.001
        return self.now


def use_case(store: Any | None = None) -> tuple[PullRequests, FakeEngine, Any]:
    engine = FakeEngine()
    store = store or MemoryPullRequestStore()
    parts = PullRequestParts(
        store, engine.repository, engine.check_branch, engine.merge, engine.clock, engine.merge_status
    )
    return PullRequests(parts), engine, store


def test_ids_are_xid_shaped_and_sort_by_time() -> None:
    ids = [new_pull_request_id(1_800_000_000 + i / 1000) for i in range(50)]
    assert all(re.fullmatch(r"[0-9a-v]{20}", i) for i in ids)
    assert ids == sorted(ids)


def test_status_filter_prefix_and_paging() -> None:
    pulls, _, _ = use_case()
    made = [pulls.create("repo1", f"t{i}", "", "dev" if i % 2 else "f1", "main", "u") for i in range(7)]
    pulls.update("repo1", made[1].id, PullRequestUpdate(status="closed"))
    assert [p.id for p in pulls.list("repo1", status="open").results] == [m.id for i, m in enumerate(made) if i != 1]
    assert [p.id for p in pulls.list("repo1", status="CLOSED").results] == [made[1].id]
    assert len(pulls.list("repo1", status="anything else").results) == 7  # lakeFS: all
    page = pulls.list("repo1", amount=3, status="open")
    assert [p.id for p in page.results] == [made[0].id, made[2].id, made[3].id] and page.has_more
    rest = pulls.list("repo1", after=page.next_offset, amount=3, status="open")
    assert [p.id for p in rest.results] == [made[4].id, made[5].id, made[6].id] and not rest.has_more
    assert [p.id for p in pulls.list("repo1", prefix=made[5].id).results] == [made[5].id]


def test_status_rules() -> None:
    pulls, engine, _ = use_case()
    pr = pulls.create("repo1", "t", "d", "dev", "main", "u")
    with pytest.raises(errors.Invalid):
        pulls.update("repo1", pr.id, PullRequestUpdate(status="merged"))
    closed = pulls.update("repo1", pr.id, PullRequestUpdate(status="closed"))
    assert closed.closed_date is not None
    with pytest.raises(errors.Invalid, match="bad pull request status"):
        pulls.merge("repo1", pr.id, "u", lambda dest: None)
    assert engine.merges == []
    reopened = pulls.update("repo1", pr.id, PullRequestUpdate(status="open", title="t2"))
    assert reopened.status is PullRequestStatus.OPEN and reopened.closed_date is None and reopened.title == "t2"
    merged = pulls.merge("repo1", pr.id, "alice", lambda dest: None, "msg", {"k": "v"}, "source-wins")
    assert engine.merges == [("repo1", "dev", "main", "alice", "msg", {"k": "v"}, "source-wins")]
    assert merged.status is PullRequestStatus.MERGED and merged.merged_commit_id == "c" * 64
    with pytest.raises(errors.Invalid):
        pulls.update("repo1", pr.id, PullRequestUpdate(status="closed"))


def test_merge_checks_the_caller_first_and_a_failed_merge_changes_nothing() -> None:
    pulls, engine, store = use_case()
    pr = pulls.create("repo1", "t", "d", "dev", "main", "u")

    def refuse(destination: str) -> None:
        assert destination == "main"
        raise errors.Forbidden("no fs:CreateCommit")

    with pytest.raises(errors.Forbidden):
        pulls.merge("repo1", pr.id, "u", refuse)
    engine.fail_merge = errors.DirtyBranch("main")
    with pytest.raises(errors.DirtyBranch):
        pulls.merge("repo1", pr.id, "u", lambda dest: None)
    assert engine.merges == [] and store.get(REPO, pr.id) == pr


class RacingStore(MemoryPullRequestStore):
    """Another edit wins the compare-and-swap ``losses`` times."""

    def __init__(self, losses: int) -> None:
        super().__init__()
        self.losses = losses
        self.updates = 0

    def update(self, repo: Repository, pr: PullRequest, expected: PullRequest) -> None:
        self.updates += 1
        if self.losses > 0:
            self.losses -= 1
            raise errors.PreconditionFailed("changed meanwhile")
        super().update(repo, pr, expected)


def test_the_edit_loop_retries_a_lost_compare_and_swap() -> None:
    store = RacingStore(losses=2)
    pulls, _, _ = use_case(store)
    pr = pulls.create("repo1", "t", "d", "dev", "main", "u")
    assert pulls.update("repo1", pr.id, PullRequestUpdate(title="new")).title == "new"
    assert store.updates == 3
    store.losses = UPDATE_TRIES
    with pytest.raises(errors.TooManyTries):
        pulls.update("repo1", pr.id, PullRequestUpdate(title="newer"))


def test_create_refuses_bad_branches() -> None:
    pulls, _, _ = use_case()
    with pytest.raises(errors.Invalid, match="same branch"):
        pulls.create("repo1", "t", "", "main", "main", "u")
    with pytest.raises(errors.BranchNotFound):
        pulls.create("repo1", "t", "", "nope", "main", "u")
    with pytest.raises(errors.InvalidName):
        pulls.create("repo1", "t", "", "a b", "main", "u")
    with pytest.raises(errors.RepositoryNotFound):
        pulls.create("other", "t", "", "dev", "main", "u")
    with pytest.raises(errors.Invalid):
        pulls.get("repo1", "../etc")


def test_a_merge_that_goes_on_as_a_workflow_is_settled_when_read() -> None:
    from chalicelib.graveler.runs.workflow_runner import TaskStatus

    pulls, engine, store = use_case()
    pr = pulls.create("repo1", "t", "d", "dev", "main", "u")
    engine.fail_merge = errors.StillRunning("w-1")
    with pytest.raises(errors.StillRunning):
        pulls.merge("repo1", pr.id, "u", lambda dest: None)
    assert store.get(REPO, pr.id).merge_task_id == "w-1"
    engine.tasks["w-1"] = TaskStatus("w-1", False, 1.0)
    assert pulls.get("repo1", pr.id).status is PullRequestStatus.OPEN
    # Asked again while it runs: the same task, no second merge.
    engine.fail_merge = None
    with pytest.raises(errors.StillRunning, match="w-1"):
        pulls.merge("repo1", pr.id, "u", lambda dest: None)
    assert engine.merges == []
    done = Commit(CommitID("d" * 64), "u", "m", 2.0, MetaRangeID(""))
    engine.tasks["w-1"] = TaskStatus("w-1", True, 1_800_000_100.0, result=done)
    [listed] = pulls.list("repo1").results
    assert listed.status is PullRequestStatus.MERGED and listed.merged_commit_id == "d" * 64
    assert listed.closed_date == 1_800_000_100.0 and listed.merge_task_id is None

    other = pulls.create("repo1", "t", "d", "f1", "main", "u")
    engine.fail_merge = errors.StillRunning("w-2")
    with pytest.raises(errors.StillRunning):
        pulls.merge("repo1", other.id, "u", lambda dest: None)
    engine.tasks["w-2"] = TaskStatus("w-2", True, 3.0, error=errors.MergeConflicts("conflict", ()))
    failed = pulls.get("repo1", other.id)
    assert failed.status is PullRequestStatus.OPEN and failed.merge_task_id is None
