"""How many strongly consistent reads of the branch record an object read and an upload cost (counted): the figures
behind docs/performance.md's "Branch reads" (one branch item takes ~3,000 such reads/s on DynamoDB)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from chalicelib.adapters.memory import MemoryBlockStore, MemoryRefStore, MemoryStagingStore
from chalicelib.graveler.committed import CommittedManager, RangeParams
from chalicelib.graveler.engine import build_engine, engine_parts
from chalicelib.graveler.records import Branch, BranchID, RepositoryID


class CountingRefs(MemoryRefStore):
    def __init__(self) -> None:
        super().__init__()
        self.branch_reads: Counter[str] = Counter()

    def get_branch(self, repo_id: RepositoryID, branch_id: BranchID) -> Branch:
        self.branch_reads[branch_id] += 1
        return super().get_branch(repo_id, branch_id)


def _engine() -> tuple[Any, CountingRefs]:
    refs, blocks = CountingRefs(), MemoryBlockStore()
    g = build_engine(
        engine_parts(
            refs,
            MemoryStagingStore(),
            blocks,
            CommittedManager(blocks, RangeParams(4000, 600, 7)),
            sleep=lambda s: None,
        )
    )
    g.repositories.create_repository("repo", "s3://bucket/repo")
    return g, refs


def test_a_read_costs_one_branch_read_and_an_upload_two() -> None:
    g, refs = _engine()
    g.objects.upload_object("repo", "main", "committed", b"1")
    g.commits.commit("repo", "main", "alice", "c")
    g.objects.upload_object("repo", "main", "staged", b"2")

    refs.branch_reads.clear()
    g.objects.stat_object("repo", "main", "committed")
    g.objects.stat_object("repo", "main", "staged")
    assert refs.branch_reads["main"] == 2  # one per read: the record names the tokens and the commit

    refs.branch_reads.clear()
    g.objects.upload_object("repo", "main", "new", b"3")
    # The record the previous upload's re-check read names the token to write into; then the re-check that no
    # seal took the token meanwhile (staging.py). An upload with nothing recent reads the record first.
    assert refs.branch_reads["main"] == 1
    g.ports.upload_branches.drop(("repo", "main"))
    refs.branch_reads.clear()
    g.objects.upload_object("repo", "main", "newer", b"4")
    assert refs.branch_reads["main"] == 2
