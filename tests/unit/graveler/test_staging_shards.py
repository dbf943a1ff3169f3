"""Sharded staging in the engine: the shard rules, the seal that chooses a token's shard count, commits of sharded
tokens, and a plan whose reads of staged data do not grow with the number of staged rows (counted)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from types import SimpleNamespace

import pytest

from chalicelib.adapters.memory import MemoryStagingStore
from chalicelib.graveler.branches import branch_moves
from chalicelib.graveler.commit import CommitSteps
from chalicelib.graveler.records import (
    Branch,
    BranchID,
    CommitID,
    Entry,
    Key,
    RepositoryID,
    StagedEntry,
    StagingSample,
    StagingToken,
)
from chalicelib.graveler.writes import staging_shards
from chalicelib.graveler.writes.staging_shards import (
    MAX_SHARDS,
    ROWS_PER_SHARD,
    shard_count,
    shard_of,
    shards_for,
    sketch_rank,
    unsharded,
    with_shards,
)

from .support import rebuilt
from .test_commit_steps import PARAMS, Env, request

REPO, MAIN = RepositoryID("repo"), BranchID("main")


def test_the_shard_count_is_in_the_token_name() -> None:
    token = StagingToken("repo-main:3f2a")
    assert shard_count(token) == 1 and with_shards(token, 1) == token  # a token from before sharding
    assert with_shards(token, 10) == "repo-main:3f2a#s10" and shard_count(with_shards(token, 10)) == 10
    assert unsharded(with_shards(token, 10)) == token and with_shards(with_shards(token, 10), 3).endswith("#s3")
    assert with_shards(token, 500) == f"{token}#s{MAX_SHARDS}"
    for odd in ("x#s1", "x#s017", "x#s99", "#s4", "x#s", "x#sfour", "x#s 4"):
        assert shard_count(StagingToken(odd)) == 1 and unsharded(StagingToken(odd)) == odd


def test_a_key_has_one_shard_and_keys_spread_evenly() -> None:
    token = with_shards(StagingToken("t"), 10)
    keys = [f"data/part-{n:05d}.parquet" for n in range(20_000)]
    per_shard = Counter(shard_of(token, k) for k in keys)
    assert sorted(per_shard) == list(range(10)) and max(per_shard.values()) < 1.1 * min(per_shard.values())
    assert all(shard_of(token, k) == shard_of(token, k) for k in keys[:100])
    sketched = sum(sketch_rank(k) is not None for k in keys)
    assert 20_000 / 16 * 0.9 < sketched < 20_000 / 16 * 1.1


def test_shards_for_keeps_small_branches_on_one_partition() -> None:
    assert shards_for(0) == 1 and shards_for(ROWS_PER_SHARD) == 1
    assert shards_for(ROWS_PER_SHARD + 1) == 2
    assert shards_for(100_000) == 10  # 10 partitions: 10,000 staged writes/s on paper
    assert shards_for(10_000_000) == MAX_SHARDS


def test_choose_shards_by_size_rate_and_business() -> None:
    choose = staging_shards.choose_shards
    assert choose(200, 1, 0.01) == 1  # a small branch keeps one shard however fast it commits
    assert choose(35_000, 1, None) == 4  # by size: no age known
    assert choose(3_000, 1, 3.0) == 2  # a saturated shard (1,000 rows/s): twice the shards next
    assert choose(6_000, 2, 3.0) == 4 and choose(12_000, 4, 3.0) == 8 and choose(24_000, 8, 3.0) == MAX_SHARDS
    assert choose(3_000, 1, 0.2) == 6  # an age under a second counts as one second
    assert choose(12_000, 10, 60.0) == 10  # still busy (1,200 rows a shard): keeps its ten
    assert choose(500, 10, 60.0) == 1  # gone quiet: back to one


def test_one_shard_for_a_count_agrees_with_choose_shards() -> None:
    """A count under the bound gets one shard whatever the estimate, shard count and age would say; above it, or
    unknown, the seal samples."""
    assert not staging_shards.one_shard_for(None)
    small = [n for n in range(0, 5_000, 7) if staging_shards.one_shard_for(n)]
    assert small and max(small) < 1_000
    for rows in small:
        for current in (1, 2, 10, MAX_SHARDS):
            for age in (None, 0.01, 1.0, 600.0):
                assert staging_shards.choose_shards(rows, current, age) == 1
    assert not staging_shards.one_shard_for(1_000)  # a busy shard (1,000 rows) may keep its shards


class _CountingSamples(MemoryStagingStore):
    def __init__(self) -> None:
        super().__init__()
        self.samples = 0

    def sample(self, token: StagingToken, limit: int) -> StagingSample:
        self.samples += 1
        return super().sample(token, limit)


def test_a_seal_that_knows_a_small_count_does_not_sample() -> None:
    staging = _CountingSamples()
    token = with_shards(StagingToken("repo-main:a"), 10)
    staging.set_many(token, [StagedEntry(Key(f"k{n}"), None) for n in range(50)])
    branch = Branch(MAIN, CommitID("c"), token)
    known = branch_moves.sealed(staging, branch, StagingToken("repo-main:b"), rows_at_most=50)
    assert staging.samples == 0 and shard_count(known.staging_token) == 1 and known.sealed_tokens == (token,)
    unknown = branch_moves.sealed(staging, branch, StagingToken("repo-main:b"))
    assert staging.samples == 1 and unknown.staging_token == known.staging_token
    branch_moves.sealed(staging, branch, StagingToken("repo-main:b"), rows_at_most=20_000)
    assert staging.samples == 2


def test_a_seal_sizes_by_rate_from_the_last_move(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [1_800_000_000.0]
    monkeypatch.setattr(branch_moves, "time", SimpleNamespace(time=lambda: clock[0]))
    env = Env()
    env.put("first")
    env.g.commits.commit(
        "repo", "main", "alice", "first"
    )  # releases the first token: the stamp the next seal measures from
    _stage_rows(env, 5_000)
    clock[0] += 2.0  # 5,000 rows in 2 s: 2,500 rows/s, five shards at 500 writes/s each
    env.g.commits.commit("repo", "main", "alice", "fast")
    assert shard_count(env.refs.get_branch(REPO, MAIN).staging_token) == 5


def _stage_rows(env: Env, count: int, version: int = 0) -> None:
    branch = env.refs.get_branch(REPO, MAIN)
    entries = [
        StagedEntry(Key(f"data/part-{n:06d}.parquet"), Entry(f"s3://bucket/repo/data/{n}/{version}", n, "e", 1))
        for n in range(count)
    ]
    env.staging.set_many(branch.staging_token, entries)


@pytest.fixture
def rows_per_shard(monkeypatch: pytest.MonkeyPatch) -> int:
    """A smaller ROWS_PER_SHARD, so that a few thousand rows (cheap to commit here) make several shards; the size
    alone decides (these commits come faster than any rate the seal would believe)."""
    monkeypatch.setattr(staging_shards, "ROWS_PER_SHARD", 1000)
    monkeypatch.setattr(staging_shards, "RATE_MIN_ROWS", 10**9)
    return 1000


def test_a_seal_sizes_the_next_token_by_the_rows_of_the_one_it_seals(rows_per_shard: int) -> None:
    env = Env()
    env.put("small")
    env.g.commits.commit("repo", "main", "alice", "small")
    assert shard_count(env.refs.get_branch(REPO, MAIN).staging_token) == 1  # a small branch keeps one partition
    _stage_rows(env, 3_500)
    env.g.commits.commit("repo", "main", "alice", "big")
    now = env.refs.get_branch(REPO, MAIN).staging_token
    assert shard_count(now) == 4  # ~3,500 rows: four shards of ~1,000
    # Staging into the sharded token, then committing it, keeps every change.
    for n in range(0, 3_500, 100):
        env.put(f"data/part-{n:06d}.parquet", 1)
    env.delete("small")
    env.g.commits.commit("repo", "main", "alice", "on shards")
    listing = env.listing()
    assert len(listing) == 3_500 and "small" not in listing
    assert listing["data/part-000100.parquet"].endswith("/1") and listing["data/part-000101.parquet"].endswith("/0")
    # That commit sealed ~36 changes: the branch goes back to one shard.
    assert shard_count(env.refs.get_branch(REPO, MAIN).staging_token) == 1


def test_a_retried_seal_recognises_its_own_sharded_token(rows_per_shard: int) -> None:
    env = Env()
    _stage_rows(env, 2_500)
    sealed = env.steps.seal(request("r1")).sealed_token
    installed = env.refs.get_branch(REPO, MAIN).staging_token
    assert shard_count(installed) == 3 and unsharded(installed).endswith(":r1")
    # The retry (Step Functions re-runs a step) answers the same token and moves nothing.
    assert env.steps.seal(request("r1")).sealed_token == sealed
    assert env.refs.get_branch(REPO, MAIN).staging_token == installed
    made = env.steps.run(request("r1"), max_slices=8)
    assert made == env.g.commits.get_commit("repo", "main") and len(env.listing()) == 2_500


class CountingStaging(MemoryStagingStore):
    """The twin, counting every staged entry and sample key it hands out."""

    def __init__(self) -> None:
        super().__init__()
        self.read: Counter[str] = Counter()

    def _counted(self, what: str, entries: Iterable[StagedEntry]) -> Iterator[StagedEntry]:
        for entry in entries:
            self.read[what] += 1
            yield entry

    def iterate(self, token: StagingToken, from_key: str = "", first_page: int | None = None) -> Iterator[StagedEntry]:
        return self._counted("iterate", super().iterate(token, from_key, first_page))

    def sample(self, token: StagingToken, limit: int) -> StagingSample:
        found = super().sample(token, limit)
        self.read["sample"] += len(found.keys)
        return found


@pytest.mark.parametrize("shards", [1, 4])
def test_planning_reads_a_bounded_number_of_staged_items(shards: int) -> None:
    reads = []
    slices = []
    for rows in (3_000, 30_000):  # N, then 10N
        env = Env()
        env.staging = CountingStaging()
        env.g = rebuilt(env.g, staging=env.staging)
        env.steps = CommitSteps(env.refs, env.staging, env.blocks, PARAMS)
        branch = env.refs.get_branch(REPO, MAIN)
        sharded = type(branch)(branch.id, branch.commit_id, with_shards(branch.staging_token, shards))
        env.refs.set_branch(REPO, sharded, expected=branch)
        _stage_rows(env, rows)
        sealed = env.steps.seal(request()).sealed_token
        env.staging.read.clear()
        planned = env.steps.plan(request(), sealed, max_slices=16)
        reads.append(dict(env.staging.read))
        slices.append(len(planned.slices))
    # No staged row is listed; the sketch gives the same bounded number of keys for N and 10N rows.
    assert all("iterate" not in read for read in reads), reads
    bound = staging_shards.per_shard_sample(with_shards(StagingToken("t"), shards), 1024) * shards
    assert reads[0]["sample"] <= bound and reads[1]["sample"] <= bound
    assert reads[1]["sample"] <= 1024 + shards  # 10N sketches ~1,900 keys; the plan reads 1,024 of them
    assert slices == [16, 16]
