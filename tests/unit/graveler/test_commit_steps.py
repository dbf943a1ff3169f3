"""The commit as steps: same metarange as engine.commits.commit for any slicing, idempotent steps, races."""

from __future__ import annotations

import contextlib
import random
import threading
from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chalicelib.adapters.memory import MemoryBlockStore, MemoryRefStore, MemoryStagingStore
from chalicelib.graveler import errors
from chalicelib.graveler.commit import COMMITTED, REPLAN, CommitRequest, CommitSteps, Finish
from chalicelib.graveler.committed import CommittedManager, RangeParams
from chalicelib.graveler.committed.writer import closes_range
from chalicelib.graveler.engine import build_engine, engine_parts
from chalicelib.graveler.records import BranchID, Entry, Key, RepositoryID, StagedEntry
from chalicelib.graveler.runs import slicing
from chalicelib.graveler.runs.slicing import slice_bounds
from chalicelib.graveler.writes.staging import stage

# Small ranges, so a few hundred keys make dozens of ranges and many seams.
PARAMS = RangeParams(max_range_bytes=4000, min_range_bytes=600, raggedness=7)


class Env:
    """One repository on in-memory ports, with a Graveler and CommitSteps over the same ports."""

    def __init__(self) -> None:
        self.refs, self.staging, self.blocks = MemoryRefStore(), MemoryStagingStore(), MemoryBlockStore()
        self.g = build_engine(
            engine_parts(
                self.refs, self.staging, self.blocks, CommittedManager(self.blocks, PARAMS), sleep=lambda s: None
            )
        )
        self.steps = CommitSteps(self.refs, self.staging, self.blocks, PARAMS)
        self.g.repositories.create_repository("repo", "s3://bucket/repo")

    def put(self, key: str, version: int = 0) -> None:
        entry = Entry(f"s3://bucket/repo/data/{key}/{version}", len(key) + version, f"etag{version}", 1)
        stage(self.refs, self.staging, RepositoryID("repo"), BranchID("main"), StagedEntry(Key(key), entry))

    def delete(self, key: str) -> None:
        stage(self.refs, self.staging, RepositoryID("repo"), BranchID("main"), StagedEntry(Key(key), None))

    def listing(self, ref: str = "main") -> dict[str, str]:
        head = self.g.commits.get_commit("repo", ref)
        return {
            r.key: r.entry.physical_address
            for r in self.g.ports.committed.iterate("s3://bucket/repo", head.meta_range_id)
        }

    def metarange(self) -> str:
        return self.g.commits.get_commit("repo", "main").meta_range_id


def request(request_id: str = "r1", message: str = "m") -> CommitRequest:
    return CommitRequest("repo", "main", request_id, "alice", message, 1_700_000_000, {"k": "v"})


def key(i: int) -> str:
    return f"data/part-{i:05d}.parquet"


def twin_commit(ops_by_round: list[list[tuple[str, int | None]]], max_slices: int) -> tuple[list[str], list[str]]:
    """Applies the same rounds of writes on two repositories, committing with engine.commits.commit on one and with
    the steps on the other; the metarange ids of every round, (graveler, steps)."""
    a, b = Env(), Env()
    ids_a: list[str] = []
    ids_b: list[str] = []
    for number, ops in enumerate(ops_by_round):
        for env in (a, b):
            for k, version in ops:
                env.delete(k) if version is None else env.put(k, version)
        a.g.commits.commit("repo", "main", "alice", f"round {number}", allow_empty=True)
        b.steps.run(
            CommitRequest("repo", "main", f"req{number}", "alice", f"round {number}", number, {}, allow_empty=True),
            max_slices,
        )
        ids_a.append(a.metarange())
        ids_b.append(b.metarange())
        assert a.listing() == b.listing()
    return ids_a, ids_b


@pytest.mark.parametrize("max_slices", [1, 2, 5, 16])
def test_sliced_commit_writes_the_same_metarange_as_graveler_commit(max_slices, monkeypatch):
    seams_recut = []
    concatenate = slicing.concatenate

    def counting(storage, namespace, params, parts):
        seams_recut.extend(p for p in parts[:-1] if p and not closes_range(p[-1].max_key, p[-1].estimated_size, PARAMS))
        return concatenate(storage, namespace, params, parts)

    monkeypatch.setattr(slicing, "concatenate", counting)
    rng = random.Random(max_slices)
    rounds = [[(key(i), 0) for i in range(0, 800, 2)]]
    for n in range(1, 5):
        ops: list[tuple[str, int | None]] = []
        for i in sorted(rng.sample(range(900), 120)):
            ops.append((key(i), None if rng.random() < 0.4 else n))
        rounds.append(ops)
    ids_a, ids_b = twin_commit(rounds, max_slices)
    assert ids_a == ids_b
    assert len(set(ids_a)) == len(ids_a)  # every round changed something
    if max_slices == 16:
        assert seams_recut  # the case that needs re-cutting across a seam did occur


@settings(max_examples=25, deadline=None)
@given(
    base=st.sets(st.integers(0, 400), min_size=0, max_size=300),
    changes=st.dictionaries(st.integers(0, 450), st.one_of(st.none(), st.integers(1, 3)), max_size=120),
    max_slices=st.integers(1, 9),
)
def test_any_slicing_matches_a_single_apply(base, changes, max_slices):
    rounds = [[(key(i), 0) for i in sorted(base)], [(key(i), v) for i, v in sorted(changes.items())]]
    ids_a, ids_b = twin_commit(rounds, max_slices)
    assert ids_a == ids_b


def test_plan_cuts_along_base_range_boundaries():
    env = Env()
    for i in range(600):
        env.put(key(i))
    env.g.commits.commit("repo", "main", "alice", "base")
    ranges = env.g.ports.committed.ranges("s3://bucket/repo", env.metarange())
    assert len(ranges) > 8
    env.put(key(3), 1)
    sealed = env.steps.seal(request()).sealed_token
    planned = env.steps.plan(request(), sealed, max_slices=4)
    bounds = [(s.lo, s.hi) for s in planned.slices]
    assert len(bounds) == 4
    assert bounds[0][0] == "" and bounds[-1][1] is None
    assert all(hi == nxt for (_, hi), (nxt, _) in pairwise(bounds))
    starts = {r.min_key for r in ranges}
    assert all(lo in starts for lo, _ in bounds[1:])
    assert len(repr(planned)) < 2000  # small records only: no data in the state


def test_slice_bounds_cover_everything_when_there_are_fewer_ranges_than_slices():
    assert slice_bounds([], 8) == [("", None)]
    with pytest.raises(ValueError):
        slice_bounds([], 0)


def test_a_first_commit_is_sliced_at_sampled_staged_keys():
    env = Env()
    for i in range(2000):
        env.put(key(i))
    sealed = env.steps.seal(request()).sealed_token
    planned = env.steps.plan(request(), sealed, max_slices=8)
    bounds = [(s.lo, s.hi) for s in planned.slices]
    assert len(bounds) == 8 and bounds[0][0] == "" and bounds[-1][1] is None
    assert all(hi == nxt for (_, hi), (nxt, _) in pairwise(bounds))
    # About as many staged keys in each slice: the bounds are a hashed sample of ~1 key in 16 (the sketch).
    sizes = [sum(1 for i in range(2000) if lo <= key(i) and (hi is None or key(i) < hi)) for lo, hi in bounds]
    assert all(2000 // 16 <= size <= 2000 // 4 for size in sizes), sizes
    built = [env.steps.build_slice(item) for item in planned.slices]
    assert env.steps.finish(request(), planned, built).status == COMMITTED
    assert len(env.listing()) == 2000


def test_a_small_base_with_many_staged_keys_is_sliced_between_its_ranges():
    env = Env()
    for i in range(40):
        env.put(key(i * 50))
    env.g.commits.commit("repo", "main", "alice", "base")
    ranges = env.g.ports.committed.ranges("s3://bucket/repo", env.metarange())
    assert len(ranges) in range(2, 8)  # a few ranges: fewer than the slices asked for
    for i in range(2000):
        env.put(key(i), 1)
    sealed = env.steps.seal(request()).sealed_token
    planned = env.steps.plan(request(), sealed, max_slices=8)
    assert len(planned.slices) == 8
    for item in planned.slices:  # no base range straddles a bound
        assert not any(r.min_key < item.lo <= r.max_key for r in ranges)


def test_every_step_converges_when_retried_after_its_side_effect():
    env = Env()
    for i in range(300):
        env.put(key(i))
    env.g.commits.commit("repo", "main", "alice", "base")
    for i in range(0, 300, 7):
        env.put(key(i), 2)
    env.delete(key(5))
    req = request()
    sealed = env.steps.seal(req).sealed_token
    assert env.steps.seal(req).sealed_token == sealed  # a retried seal recognises its own seal
    branch = env.refs.get_branch(RepositoryID("repo"), BranchID("main"))
    assert branch.sealed_tokens == (sealed,)
    planned = env.steps.plan(req, sealed, 4)
    assert env.steps.plan(req, sealed, 4) == planned
    built = [env.steps.build_slice(item) for item in planned.slices]
    blobs = dict(env.blocks.blobs)
    assert [env.steps.build_slice(item) for item in planned.slices] == built
    assert env.blocks.blobs == blobs  # a rebuilt slice writes the same objects, nothing more
    first = env.steps.finish(req, planned, built)
    assert first.status == COMMITTED
    head = env.refs.get_branch(RepositoryID("repo"), BranchID("main")).commit_id
    again = env.steps.finish(req, planned, built)  # crashed after the swap: the retry answers the same
    assert again == first and env.refs.get_branch(RepositoryID("repo"), BranchID("main")).commit_id == head
    assert env.steps.plan(req, sealed, 4).done is True  # a retried plan finds this request's own commit
    assert env.steps.seal(req).sealed_token == ""  # and a late seal retry does not seal again
    listing = env.listing()
    assert key(5) not in listing and listing[key(7)].endswith("/2") and listing[key(8)].endswith("/0")
    assert len(env.g.history.log("repo", "main").results) == 3  # no duplicated commit


def test_finish_replans_when_the_branch_moved_and_never_points_at_a_partial_state():
    env = Env()
    for i in range(100):
        env.put(key(i))
    req = request("a", "first")
    sealed = env.steps.seal(req).sealed_token
    planned = env.steps.plan(req, sealed, 3)
    built = [env.steps.build_slice(item) for item in planned.slices]
    env.put(key(500))  # a write racing the commit stays staged
    other = CommitSteps(env.refs, env.staging, env.blocks, PARAMS)
    other.seal(request("b", "second"))  # a second commit seals in between
    assert env.steps.finish(req, planned, built) == Finish(REPLAN)
    assert env.g.branches.get_branch("repo", "main").commit_id == env.g.commits.get_commit("repo", "main~0").id
    assert env.listing() == {}  # the branch did not move to our now-stale commit
    made = env.steps.run(req)  # the workflow replans: commits every sealed token, ours included
    assert made == env.g.commits.get_commit("repo", "main")  # the commit it built, as stored
    assert set(env.listing()) == {key(i) for i in range(100)} | {key(500)}
    with pytest.raises(errors.NoChanges):  # its token went into our commit: it answers no changes, not ours
        other.run(request("b", "second"))


def test_nothing_to_commit_is_refused_before_sealing():
    env = Env()
    with pytest.raises(errors.NoChanges):
        env.steps.seal(request())
    assert env.g.branches.get_branch("repo", "main").sealed_tokens == ()


def test_racing_commits_and_writes_lose_and_duplicate_nothing():
    env = Env()
    acknowledged: list[str] = []
    lock = threading.Lock()
    stop = threading.Event()

    def writer(worker: int) -> None:
        n = 0
        while not stop.is_set() and n < 150:
            k = f"w{worker}/{n:04d}"
            env.put(k)
            with lock:
                acknowledged.append(k)
            n += 1

    def committer(worker: int) -> None:
        for n in range(6):
            with contextlib.suppress(errors.NoChanges):
                CommitSteps(env.refs, env.staging, env.blocks, PARAMS).run(
                    CommitRequest("repo", "main", f"c{worker}-{n}", "bob", f"c{worker}-{n}", n, {}), 3
                )

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(3)]
    threads += [threading.Thread(target=committer, args=(c,)) for c in range(2)]
    for t in threads:
        t.start()
    for t in threads[3:]:
        t.join()
    stop.set()
    for t in threads[:3]:
        t.join()
    committed = set(env.listing())
    staged = {s.key for s in env.g.history.diff_uncommitted("repo", "main", amount=None).results}
    assert set(acknowledged) <= committed | staged
    env.steps.run(CommitRequest("repo", "main", "final", "bob", "final", 99, {}, allow_empty=True))
    assert set(env.listing()) == set(acknowledged)
    # Every commit's metarange is exactly the one a single apply writes from its parent (no partial state).
    log = env.g.history.log("repo", "main", amount=1000).results
    assert len({c.id for c in log}) == len(log)


def test_a_seal_retried_after_a_racing_commit_took_its_token_never_seals_a_retired_token():
    env = Env()
    env.put(key(1))
    req = request("late", "late seal")
    env.steps.seal(req)  # our seal swapped; the task crashed before answering
    env.put(key(2))  # staged in the token our seal installed
    env.g.commits.commit("repo", "main", "bob", "racing")  # seals and commits that token: it is retired now
    env.put(key(3))  # something staged again, so a seal would go ahead
    branch = env.refs.get_branch(RepositoryID("repo"), BranchID("main"))
    retried = env.steps.seal(req).sealed_token  # the retry: nothing of ours is left to seal
    assert retried == "" and env.refs.get_branch(RepositoryID("repo"), BranchID("main")) == branch
    with pytest.raises(errors.NoChanges):  # and the racing commit is not passed off as ours
        env.steps.plan(req, retried)
