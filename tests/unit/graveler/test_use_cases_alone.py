"""The main use cases, each built from its ports alone (the in-memory twins of the stores, a clock, a sleep): no
wiring, no engine record, no other use case but the one that makes the repository they work in. What they do is
what the engine's callers see through ``engine.<use case>``."""

from __future__ import annotations

import json

import pytest

from chalicelib.adapters.memory_blocks import MemoryBlockStore
from chalicelib.adapters.memory_refs import MemoryRefStore
from chalicelib.adapters.memory_staging import MemoryStagingStore
from chalicelib.graveler import errors
from chalicelib.graveler.commit import CommitSteps
from chalicelib.graveler.committed import CommittedManager
from chalicelib.graveler.engine import build_hook_runner
from chalicelib.graveler.merge import MergeSteps
from chalicelib.graveler.parts import EngineParts, engine_parts
from chalicelib.graveler.reads.shared import Reads
from chalicelib.graveler.runs.workflow_runner import Runner, inline_task_id
from chalicelib.graveler.usecases.branches_and_tags import BranchesAndTags, BranchParts
from chalicelib.graveler.usecases.commit_records import CommitRecordParts, CommitRecords
from chalicelib.graveler.usecases.commits import CommitParts, Commits
from chalicelib.graveler.usecases.merges import MergeParts, Merges
from chalicelib.graveler.usecases.objects import ObjectParts, Objects
from chalicelib.graveler.usecases.repositories import Repositories, RepositoryParts


class Clock:
    def __init__(self) -> None:
        self.now = 1_700_000_000.0

    def __call__(self) -> float:
        self.now += 1
        return self.now


@pytest.fixture
def ports() -> EngineParts:
    refs, blocks = MemoryRefStore(), MemoryBlockStore()
    return engine_parts(
        refs,
        MemoryStagingStore(refs),
        blocks,
        CommittedManager(blocks),
        clock=Clock(),
        sleep=lambda seconds: None,
    )


def _repositories(p: EngineParts, r: Reads) -> Repositories:
    forget = lambda repo: None  # noqa: E731  # no pull requests here
    reads = (r.get_repository, r.repository_for_write)
    return Repositories(RepositoryParts(p.refs, p.staging, p.blocks, p.committed, p.clock, None, *reads, forget))


def _objects(p: EngineParts, r: Reads) -> Objects:
    return Objects(
        ObjectParts(
            p.refs,
            p.staging,
            p.blocks,
            p.committed,
            p.clock,
            p.guard,
            p.collected,
            p.upload_branches,
            r.get_repository,
            r.resolve,
            r.repository_for_write,
        )
    )


def _branches(p: EngineParts, r: Reads) -> BranchesAndTags:
    return BranchesAndTags(
        BranchParts(
            p.refs,
            p.staging,
            p.guard,
            p.upload_branches,
            p.hooks,
            r.get_repository,
            r.get_branch,
            r.resolve,
            r.repository_for_write,
            r.run_pre_hooks,
            r.run_post_hooks,
        )
    )


@pytest.fixture
def reads(ports: EngineParts) -> Reads:
    _repositories(ports, Reads(ports)).create_repository("repo", "s3://bucket/repo")
    return Reads(ports)


def _runner(ports: EngineParts, reads: Reads) -> tuple[Runner, CommitSteps, MergeSteps]:
    commit_steps = CommitSteps(ports.refs, ports.staging, ports.blocks, ports.committed.params, sleep=ports.sleep)
    merge_steps = MergeSteps(ports.refs, ports.staging, ports.blocks, ports.committed, sleep=ports.sleep)
    return Runner(ports, reads, commit_steps, merge_steps), commit_steps, merge_steps


def test_objects_upload_stat_read_list_and_delete(ports: EngineParts, reads: Reads) -> None:
    objects = _objects(ports, reads)
    written = objects.upload_object("repo", "main", "a/b.txt", b"hello")
    found = objects.stat_object("repo", "main", "a/b.txt")
    assert found.etag == written.etag and found.size == 5
    assert objects.read_object("repo", found) == b"hello"
    assert [item.key for item in objects.list_objects("repo", "main", prefix="a/").results] == ["a/b.txt"]
    objects.delete_object("repo", "main", "a/b.txt")
    with pytest.raises(errors.ObjectNotFound):
        objects.stat_object("repo", "main", "a/b.txt")


def test_objects_refuse_a_missing_branch(ports: EngineParts, reads: Reads) -> None:
    with pytest.raises(errors.BranchNotFound):
        _objects(ports, reads).upload_object("repo", "nope", "k", b"v")


def test_branches_and_tags(ports: EngineParts, reads: Reads) -> None:
    branches = _branches(ports, reads)
    made = branches.create_branch("repo", "dev", "main")
    assert branches.get_branch("repo", "dev").commit_id == made.commit_id
    assert [b.id for b in branches.list_branches("repo").results] == ["dev", "main"]
    tag = branches.create_tag("repo", "v1", "dev")
    assert branches.get_tag("repo", "v1").commit_id == tag.commit_id == made.commit_id
    branches.delete_branch("repo", "dev")
    with pytest.raises(errors.BranchNotFound):
        branches.get_branch("repo", "dev")


def test_commits_inline_and_their_status(ports: EngineParts, reads: Reads) -> None:
    runner, commit_steps, _ = _runner(ports, reads)
    commits = Commits(
        CommitParts(
            runner,
            commit_steps,
            CommitRecords(CommitRecordParts(ports.refs, ports.blocks, reads.repository_for_write)),
            25.0,
            reads.resolve,
            reads.get_commit,
            reads.now,
        )
    )
    _objects(ports, reads).upload_object("repo", "main", "k", b"v")
    made = commits.commit("repo", "main", "alice", "first")
    assert commits.resolve("repo", "main").commit_id == made.id
    assert commits.get_commit("repo", "main").message == "first"
    status = commits.commit_status("repo", "main", inline_task_id(made.id, "main"))
    assert status.completed and status.result is not None and status.result.id == made.id
    with pytest.raises(errors.NoChanges):
        commits.commit("repo", "main", "alice", "nothing staged")


def test_merges_bring_a_branch_in(ports: EngineParts, reads: Reads) -> None:
    runner, commit_steps, merge_steps = _runner(ports, reads)
    commits = Commits(
        CommitParts(
            runner,
            commit_steps,
            CommitRecords(CommitRecordParts(ports.refs, ports.blocks, reads.repository_for_write)),
            25.0,
            reads.resolve,
            reads.get_commit,
            reads.now,
        )
    )
    merges = Merges(MergeParts(ports.refs, runner, merge_steps, 25.0, reads.get_repository, reads.commit_of, reads.now))
    objects = _objects(ports, reads)
    _branches(ports, reads).create_branch("repo", "dev", "main")
    objects.upload_object("repo", "dev", "new.txt", b"from dev")
    commits.commit("repo", "dev", "alice", "on dev")
    merged = merges.merge("repo", "dev", "main", "alice")
    assert len(merged.parents) == 2
    assert objects.read_object("repo", objects.stat_object("repo", "main", "new.txt")) == b"from dev"
    with pytest.raises(errors.NoChanges):
        merges.merge("repo", "dev", "main", "alice")


def test_the_hooks_are_built_in_graveler_from_the_ports_alone(ports: EngineParts, reads: Reads) -> None:
    """build_hook_runner: the hooks' own reads (no hooks of their own), the action files on a ref as the
    action-file use case reads them, and the runs kept in the repository's namespace; wiring only picks adapters."""
    _objects(ports, reads).upload_object("repo", "main", "_lakefs_actions/a.yaml", b"name: a\n")
    _objects(ports, reads).upload_object("repo", "main", "elsewhere.yaml", b"x")
    runner = build_hook_runner(ports, {}, json.loads, max_hook_seconds=3.0, max_run_seconds=4.0)
    assert runner.namespace_of("repo") == "s3://bucket/repo"
    assert runner.files("repo", "main") == [("_lakefs_actions/a.yaml", b"name: a\n")]
    assert runner.cache is ports.action_files_cache
    assert (runner.max_hook_seconds, runner.max_run_seconds, runner.invokers) == (3.0, 4.0, {})
