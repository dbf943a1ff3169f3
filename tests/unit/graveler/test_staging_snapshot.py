"""One read of a just-sealed token, shared by the pre-commit hooks and the commit's build (staging_snapshot.py)."""

from __future__ import annotations

import inspect
from collections import Counter
from collections.abc import Iterator

import pytest

from chalicelib.adapters.memory import MemoryBlockStore, MemoryRefStore, MemoryStagingStore
from chalicelib.graveler.commit import CommitRequest, CommitSteps
from chalicelib.graveler.committed import CommittedManager, RangeParams
from chalicelib.graveler.engine import build_engine, engine_parts
from chalicelib.graveler.records import Branch, BranchID, Entry, Key, RepositoryID, StagedEntry, StagingToken
from chalicelib.graveler.writes.staging import stage, staged_changes
from chalicelib.graveler.writes.staging_snapshot import SHARED_ROWS, SnapshotStaging, shared_read

PARAMS = RangeParams(max_range_bytes=4000, min_range_bytes=600, raggedness=7)
TOKEN = StagingToken("t1")


class CountingStaging(MemoryStagingStore):
    """Counts the reads of each token's rows (a Query each, on DynamoDB)."""

    def __init__(self) -> None:
        super().__init__()
        self.reads: Counter[str] = Counter()

    def iterate(self, token: StagingToken, from_key: str = "", first_page: int | None = None) -> Iterator[StagedEntry]:
        self.reads[token] += 1
        return super().iterate(token, from_key, first_page)


def _entry(name: str) -> Entry:
    return Entry(f"s3://bucket/repo/data/{name}", 1, "etag", 1)


def _staged(name: str) -> StagedEntry:
    return StagedEntry(Key(name), _entry(name))


def test_reads_of_the_token_inside_the_block_are_answered_from_one_read() -> None:
    inner = CountingStaging()
    inner.set_many(TOKEN, [_staged(k) for k in ("_lakefs_actions/a.yaml", "b", "c")])
    staging = SnapshotStaging(inner)
    with shared_read(staging, TOKEN) as shared:
        assert shared
        assert [s.key for s in staging.iterate(TOKEN, "_lakefs_actions/", 2)] == ["_lakefs_actions/a.yaml", "b", "c"]
        assert [s.key for s in staging.iterate(TOKEN, "b")] == ["b", "c"]
        assert [s.key for s in staging.iterate(TOKEN)] == ["_lakefs_actions/a.yaml", "b", "c"]
        assert list(staging.iterate(StagingToken("other"))) == []
    assert inner.reads == {TOKEN: 1, "other": 1}
    assert [s.key for s in staging.iterate(TOKEN, "c")] == ["c"]  # after the block: the store again
    assert inner.reads[TOKEN] == 2


def test_a_token_over_the_limit_is_not_kept() -> None:
    inner = CountingStaging()
    inner.set_many(TOKEN, [_staged(f"k{i}") for i in range(5)])
    staging = SnapshotStaging(inner)
    with shared_read(staging, TOKEN, limit=4) as shared:
        assert not shared
        assert len(list(staging.iterate(TOKEN))) == 5
    assert inner.reads[TOKEN] == 2


class Env:
    def __init__(self) -> None:
        self.refs, self.inner, self.blocks = MemoryRefStore(), CountingStaging(), MemoryBlockStore()
        parts = engine_parts(
            self.refs, self.inner, self.blocks, CommittedManager(self.blocks, PARAMS), sleep=lambda s: None
        )
        self.staging = parts.staging
        assert isinstance(self.staging, SnapshotStaging)  # every engine shares its commits' reads
        self.g = build_engine(parts)
        self.steps = CommitSteps(self.refs, self.staging, self.blocks, PARAMS)
        self.g.repositories.create_repository("repo", "s3://bucket/repo")

    def put(self, name: str) -> None:
        stage(self.refs, self.inner, RepositoryID("repo"), BranchID("main"), _staged(name))

    def branch(self) -> Branch:
        return self.refs.get_branch(RepositoryID("repo"), BranchID("main"))

    def committed(self) -> list[str]:
        head = self.g.commits.get_commit("repo", "main")
        return [r.key for r in self.g.ports.committed.iterate("s3://bucket/repo", head.meta_range_id)]


def _request() -> CommitRequest:
    return CommitRequest("repo", "main", "r1", "alice", "m", 1_700_000_000, {})


def test_the_hooks_and_the_build_share_one_read_and_the_commit_takes_what_the_hooks_judged() -> None:
    env = Env()
    env.put("_lakefs_actions/check.yaml")
    env.put("data/one")
    branch = env.branch()
    token = branch.staging_token
    judged: list[list[str]] = []

    def pre_hooks(sealed: Branch) -> None:
        assert sealed.sealed_tokens[0] == token
        judged.append([s.key for s in staged_changes(env.staging, [token], "_lakefs_actions/", 101)])
        # A write racing the seal lands in the sealed token after the shared read: its writer stages it again on
        # the new token (staging.stage), so this commit does not take it, and the hooks never judged it.
        env.inner.set(token, _staged("data/late"))

    env.steps.run(_request(), 1, 10, branch, staged_seen=True, pre_hooks=pre_hooks, staged_rows=2)
    assert judged == [["_lakefs_actions/check.yaml", "data/one"]]
    assert env.committed() == ["_lakefs_actions/check.yaml", "data/one"]
    assert env.inner.reads[token] == 1


def test_without_an_exact_count_the_build_reads_the_token_itself() -> None:
    env = Env()
    env.put("data/one")
    branch = env.branch()
    token = branch.staging_token
    env.steps.run(_request(), 1, 10, branch, staged_seen=True, pre_hooks=lambda sealed: None, staged_rows=None)
    assert env.committed() == ["data/one"]
    assert env.inner.reads[token] == 1


def test_a_count_too_large_to_hold_shares_nothing() -> None:
    """A token counted past SHARED_ROWS (an inline commit below a workflow's threshold) is not read ahead of the
    hooks: that read would be thrown away, and the hooks (their prefix) and the build read as before."""
    env = Env()
    env.put("data/one")
    branch = env.branch()
    token = branch.staging_token

    def pre_hooks(sealed: Branch) -> None:
        list(staged_changes(env.staging, [token], "_lakefs_actions/", 101))

    env.steps.run(_request(), 1, 10, branch, staged_seen=True, pre_hooks=pre_hooks, staged_rows=SHARED_ROWS + 1)
    assert env.committed() == ["data/one"]
    assert env.inner.reads[token] == 2


def _protocol_methods() -> list[str]:
    from chalicelib.graveler.ports import StagingStore

    return sorted(
        name for name in vars(StagingStore) if not name.startswith("_") and callable(vars(StagingStore)[name])
    )


@pytest.mark.parametrize("name", _protocol_methods())
def test_outside_a_shared_read_every_call_goes_to_the_store_unchanged(name: str) -> None:
    """The wrapper is the store, outside a shared read: each method of the port hands its arguments through."""
    seen: list[tuple[str, tuple[object, ...]]] = []

    class Recorder:
        def __getattr__(self, method: str) -> object:
            def record(*args: object) -> object:
                seen.append((method, args))
                return iter(()) if method.startswith("iterate") else f"{method} answer"

            return record

    staging = SnapshotStaging(Recorder())  # type: ignore[arg-type]
    arity = len(inspect.signature(getattr(SnapshotStaging, name)).parameters) - 1
    args = tuple(f"arg{i}" for i in range(arity))
    answer = getattr(staging, name)(*args)
    assert seen == [(name, args)]
    if not name.startswith("iterate") and answer is not None:
        assert answer == f"{name} answer"
