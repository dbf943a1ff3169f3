"""The merge as steps: the same commit as engine.merges.merge for any slicing, conflicts, idempotent steps, races."""

from __future__ import annotations

import random

import pytest

from chalicelib.adapters.memory import (
    MemoryBlockStore,
    MemoryRefStore,
    MemoryStagingStore,
)
from chalicelib.graveler import errors
from chalicelib.graveler.commit import COMMITTED, REPLAN, Finish
from chalicelib.graveler.committed import CommittedManager, RangeParams
from chalicelib.graveler.engine import build_engine, engine_parts
from chalicelib.graveler.errors import MergeConflicts
from chalicelib.graveler.merge import (
    MergeRequest,
    MergeSteps,
    conflicts_address,
    read_conflicts,
)
from chalicelib.graveler.records import (
    BranchID,
    Entry,
    Key,
    RangeID,
    RangeInfo,
    RepositoryID,
    StagedEntry,
)
from chalicelib.graveler.runs.slicing import spread_bounds
from chalicelib.graveler.writes.staging import stage

PARAMS = RangeParams(max_range_bytes=4000, min_range_bytes=600, raggedness=7)
NOW = 1_700_000_000
NS = "s3://bucket/repo"

Ops = list[tuple[str, int | None]]


class Env:
    def __init__(self) -> None:
        self.refs, self.staging, self.blocks = MemoryRefStore(), MemoryStagingStore(), MemoryBlockStore()
        self.g = build_engine(
            engine_parts(
                self.refs,
                self.staging,
                self.blocks,
                CommittedManager(self.blocks, PARAMS),
                clock=lambda: NOW,
                sleep=lambda s: None,
            )
        )
        self.steps = MergeSteps(self.refs, self.staging, self.blocks, self.g.ports.committed, sleep=lambda s: None)
        self.g.repositories.create_repository("repo", NS)

    def apply(self, branch: str, ops: Ops) -> None:
        for k, version in ops:
            entry = None if version is None else Entry(f"{NS}/data/{k}/{version}", len(k) + version, f"e{version}", 1)
            stage(self.refs, self.staging, RepositoryID("repo"), BranchID(branch), StagedEntry(Key(k), entry))

    def commit(self, branch: str, ops: Ops, message: str) -> None:
        self.apply(branch, ops)
        self.g.commits.commit("repo", branch, "alice", message, allow_empty=True)

    def listing(self, ref: str) -> dict[str, str]:
        head = self.g.commits.get_commit("repo", ref)
        return {r.key: r.entry.physical_address for r in self.g.ports.committed.iterate(NS, head.meta_range_id)}

    def request(self, request_id: str = "m1", **kw: object) -> MergeRequest:
        source = self.g.commits.get_commit("repo", "feature").id
        fields: dict[str, object] = {"message": "", "metadata": {}, "strategy": None, "path_strategies": ()}
        fields.update(kw)
        return MergeRequest("repo", "feature", source, "main", request_id, "alice", date=NOW, **fields)  # type: ignore[arg-type]


def key(i: int) -> str:
    return f"data/part-{i:05d}.parquet"


def history(rng: random.Random, size: int) -> tuple[Ops, Ops, Ops]:
    """A base of ``size`` keys, then changes on a feature branch and on main: spread and clustered edits,
    adds and deletes, some keys changed on both sides the same way."""
    base: Ops = [(key(i), 0) for i in range(0, size * 2, 2)]
    feature: Ops = []
    main: Ops = []
    for side, out in ((1, feature), (2, main)):
        for _ in range(rng.randint(0, 12)):  # spread
            i = rng.randrange(size * 2)
            out.append((key(i), None if rng.random() < 0.3 else side))
        start = rng.randrange(size * 2)
        for i in range(start, min(size * 2, start + rng.randint(0, 80))):  # a cluster
            out.append((key(i), side * 10 + i % 3))
    shared = rng.randrange(size * 2)
    feature.append((key(shared), 7))
    main.append((key(shared), 7))
    return base, feature, main


def build(base: Ops, feature: Ops, main: Ops) -> Env:
    env = Env()
    env.commit("main", base, "base")
    env.g.branches.create_branch("repo", "feature", "main")
    env.commit("feature", feature, "feature work")
    env.commit("main", main, "main work")
    return env


def without_conflicts(feature: Ops, main: Ops) -> Ops:
    """The feature ops minus those on keys main also changed (differently): a merge with no conflict."""
    mine = dict(main)
    return [(k, v) for k, v in feature if k not in mine or mine[k] == v]


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("max_slices", [1, 3, 16])
def test_sliced_merge_is_the_merge_graveler_makes(seed: int, max_slices: int) -> None:
    rng = random.Random(seed)
    base, feature, main = history(rng, 400)
    strategy = None if seed % 2 else "source-wins"
    feature = feature if strategy else without_conflicts(feature, main)
    a, b = build(base, feature, main), build(base, feature, main)
    expected = a.g.merges.merge("repo", "feature", "main", "alice", strategy=strategy)
    planned = b.steps.plan(b.request(strategy=strategy), max_slices)
    assert len(planned.slices) <= max_slices
    assert b.steps.run(b.request(strategy=strategy), max_slices) == expected
    assert b.g.commits.get_commit("repo", "main") == expected
    assert b.listing("main") == a.listing("main")


def test_a_large_merge_gets_several_slices_each_of_whole_ranges() -> None:
    rng = random.Random(5)
    base, feature, main = history(rng, 1500)
    env = build(base, without_conflicts(feature, main), main)
    planned = env.steps.plan(env.request(), 8)
    assert len(planned.slices) >= 4
    for item in planned.slices:
        lo, hi = item.lo, item.hi
        for side in ("base", "source", "dest"):
            for r in env.steps._ranges(NS, getattr(item, side)):
                inside = r.min_key >= lo and (hi is None or r.min_key < hi)
                assert not inside or hi is None or r.max_key < hi, (side, r, lo, hi)


def info(lo: str, hi: str) -> RangeInfo:
    return RangeInfo(RangeID(lo + hi), lo, hi, 1, 1)


def test_bounds_skip_keys_another_listing_straddles() -> None:
    lead = [info("a", "b"), info("c", "d"), info("e", "f"), info("g", "h")]
    other = [info("a", "c5"), info("e", "h")]  # straddles c (inside a..c5) but not e; g is inside e..h
    bounds = spread_bounds([r.min_key for r in lead[1:]], [lead, other], 16)
    assert bounds == [("", "e"), ("e", None)]
    assert spread_bounds(["c", "e", "g"], [lead], 1) == [("", None)]
    assert spread_bounds([], [[]], 4) == [("", None)]


def test_conflicts_fail_the_merge_with_the_same_conflicts_and_nothing_moves() -> None:
    rng = random.Random(3)
    base, feature, main = history(rng, 400)
    feature += [(key(10), 1), (key(500), None)]
    main += [(key(10), 2), (key(500), 3)]
    a, b = build(base, feature, main), build(base, feature, main)
    with pytest.raises(MergeConflicts) as expected:
        a.g.merges.merge("repo", "feature", "main", "alice")
    head = b.g.branches.get_branch("repo", "main")
    with pytest.raises(MergeConflicts) as got:
        b.steps.run(b.request(), 5)
    assert [c.key for c in got.value.unresolved] == [c.key for c in expected.value.unresolved]
    assert [(c.source, c.destination) for c in got.value.conflicts] == [
        (c.source, c.destination) for c in expected.value.unresolved
    ]
    assert b.g.branches.get_branch("repo", "main").commit_id == head.commit_id
    assert not any("/workflows/" in address for address in b.blocks.blobs)  # inline: conflicts stay in memory

    # As workflow tasks, the slices keep their conflicts in files and finish gathers them for the answer.
    planned = b.steps.plan(b.request("m2"), 5)
    built = [b.steps.build_slice(item) for item in planned.slices]
    assert sum(item.unresolved for item in built) == len(expected.value.unresolved)
    with pytest.raises(MergeConflicts) as failed:
        b.steps.finish(b.request("m2"), planned, built)
    assert [c.key for c in failed.value.unresolved] == [c.key for c in expected.value.unresolved]
    assert read_conflicts(b.blocks.get(conflicts_address(NS, "m2"))) == failed.value.conflicts
    assert b.g.branches.get_branch("repo", "main").commit_id == head.commit_id


def test_path_strategies_settle_conflicts_like_graveler() -> None:
    base: Ops = [(key(i), 0) for i in range(300)]
    feature: Ops = [(key(i), 1) for i in range(0, 300, 7)]
    main: Ops = [(key(i), 2) for i in range(0, 300, 5)]
    rules = (("data/part-000*", "dest-wins"),)
    a, b = build(base, feature, main), build(base, feature, main)
    expected = a.g.merges.merge("repo", "feature", "main", "alice", strategy="source-wins", path_strategies=rules)
    assert b.steps.run(b.request(strategy="source-wins", path_strategies=rules), 4).id == expected.id


def test_squash_metadata_and_message_match() -> None:
    base, feature, main = history(random.Random(9), 200)
    feature = without_conflicts(feature, main)
    a, b = build(base, feature, main), build(base, feature, main)
    expected = a.g.merges.merge("repo", "feature", "main", "alice", "msg", {"x": "y"}, squash_merge=True)
    assert b.steps.run(b.request(message="msg", metadata={"x": "y"}, squash_merge=True), 3).id == expected.id
    commit = b.g.commits.get_commit("repo", "main")
    assert commit.parents == expected.parents and commit.metadata == expected.metadata


def test_refusals_before_anything_is_written() -> None:
    base, feature, main = history(random.Random(1), 100)
    env = build(base, without_conflicts(feature, main), main)
    env.apply("main", [(key(1), 9)])
    with pytest.raises(errors.DirtyBranch):
        env.steps.plan(env.request())
    env.g.rewrites.reset_branch("repo", "main")
    env.g.merges.merge("repo", "feature", "main", "alice")
    with pytest.raises(errors.NoChanges):
        env.steps.plan(env.request("m2"))
    with pytest.raises(errors.Invalid):
        env.request(strategy="bogus")


def test_a_fast_forwardable_merge_needs_no_slice() -> None:
    env = Env()
    env.commit("main", [(key(i), 0) for i in range(50)], "base")
    env.g.branches.create_branch("repo", "feature", "main")
    env.commit("feature", [(key(3), 1)], "one change")
    planned = env.steps.plan(env.request())
    assert planned.slices == ()
    assert planned.fixed.metarange == env.g.commits.get_commit("repo", "feature").meta_range_id
    env.steps.run(env.request())
    assert env.listing("main") == env.listing("feature")
    assert env.g.commits.get_commit("repo", "main").parents[1] == env.g.commits.get_commit("repo", "feature").id


def test_every_step_can_run_twice_and_a_moved_branch_replans() -> None:
    base, feature, main = history(random.Random(4), 400)
    feature = without_conflicts(feature, main)
    a, b = build(base, feature, main), build(base, feature, main)
    expected = a.g.merges.merge("repo", "feature", "main", "alice")
    request = b.request()
    planned = b.steps.plan(request, 4)
    assert b.steps.plan(request, 4) == planned
    built = [b.steps.build_slice(item) for item in planned.slices]
    assert [b.steps.build_slice(item) for item in planned.slices] == built
    first = b.steps.finish(request, planned, built)
    assert first.status == COMMITTED and first.commit_id == expected.id
    assert b.steps.finish(request, planned, built) == first  # a retry after the swap
    assert b.listing("main") == a.listing("main")

    # The destination moves between plan and finish: finish answers replan, and a new plan merges onto it.
    c = build(base, feature, main)
    request = c.request()
    planned = c.steps.plan(request, 4)
    built = [c.steps.build_slice(item) for item in planned.slices]
    c.commit("main", [("zzz/late", 1)], "late")
    assert c.steps.finish(request, planned, built) == Finish(REPLAN)
    c.steps.run(request, 4)
    assert c.listing("main") == {**a.listing("main"), "zzz/late": f"{NS}/data/zzz/late/1"}


def test_writes_during_the_merge_stay_staged() -> None:
    base, feature, main = history(random.Random(6), 300)
    env = build(base, without_conflicts(feature, main), main)
    request = env.request()
    planned = env.steps.plan(request, 4)
    built = [env.steps.build_slice(item) for item in planned.slices]
    env.apply("main", [("late/write", 1)])  # acknowledged while the merge runs
    assert env.steps.finish(request, planned, built).status == COMMITTED
    assert "late/write" not in env.listing("main")
    assert env.g.objects.stat_object("repo", "main", "late/write").physical_address == f"{NS}/data/late/write/1"


@pytest.mark.parametrize("seed", range(6))
def test_seams_where_a_slice_ends_mid_range_are_recut(seed: int) -> None:
    """Both sides delete about half the keys of alternate runs of seven: output ranges shrink below the minimum
    size where the inputs' did not, so some slices end on a range that closed only because the slice ended,
    and the concatenation must re-cut across the seam to write the ranges a single pass writes."""
    rng = random.Random(seed)
    base: Ops = [(key(i), 0) for i in range(600)]
    feature: Ops = [(key(i), None) for i in range(600) if rng.random() < 0.5 and (i // 7) % 2 == 0]
    main: Ops = [(key(i), None) for i in range(600) if rng.random() < 0.5 and (i // 7) % 2 == 1]
    a, b = build(base, feature, main), build(base, feature, main)
    expected = a.g.merges.merge("repo", "feature", "main", "alice")
    assert len(b.steps.plan(b.request(), 16).slices) > 4
    assert b.steps.run(b.request(), 16).id == expected.id
