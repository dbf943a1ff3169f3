"""A plain upload stages into the token of the branch record an upload of this container read in the last
UPLOAD_BRANCH_TTL_SECONDS (the re-check after its write), so back-to-back uploads read the branch once each, not
twice; a record that went stale meanwhile (a commit or a delete in another container) never loses or misplaces
the upload."""

from __future__ import annotations

from collections import Counter

import pytest

from chalicelib.adapters.memory import MemoryBlockStore, MemoryRefStore, MemoryStagingStore
from chalicelib.graveler import errors
from chalicelib.graveler.committed import CommittedManager
from chalicelib.graveler.engine import Engine, build_engine
from chalicelib.graveler.parts import engine_parts
from chalicelib.graveler.records import Branch, BranchID, Key, RepositoryID

REPO, MAIN = RepositoryID("repo"), BranchID("main")


class CountingRefs(MemoryRefStore):
    def __init__(self) -> None:
        super().__init__()
        self.reads: Counter[str] = Counter()

    def get_branch(self, repo_id: RepositoryID, branch_id: BranchID) -> Branch:
        self.reads[branch_id] += 1
        return super().get_branch(repo_id, branch_id)


class Env:
    """Two containers' engines over the same stores: ``here`` uploads, ``elsewhere`` moves the branch."""

    def __init__(self) -> None:
        self.refs, blocks = CountingRefs(), MemoryBlockStore()
        self.staging = MemoryStagingStore(self.refs)
        committed = CommittedManager(blocks)

        def engine() -> Engine:
            return build_engine(engine_parts(self.refs, self.staging, blocks, committed, sleep=lambda s: None))

        self.here, self.elsewhere = engine(), engine()
        self.here.repositories.create_repository(REPO, "s3://bucket/repo")

    def upload(self, path: str, data: bytes = b"x") -> None:
        self.here.objects.upload_object(REPO, MAIN, path, data)

    def reads_of(self, action: object) -> int:
        before = self.refs.reads[MAIN]
        if callable(action):
            action()
        return self.refs.reads[MAIN] - before

    def committed_keys(self) -> list[str]:
        head = self.here.commits.get_commit(REPO, MAIN)
        return [r.key for r in self.here.ports.committed.iterate("s3://bucket/repo", head.meta_range_id)]


@pytest.fixture
def env() -> Env:
    return Env()


def test_back_to_back_uploads_read_the_branch_once_each(env: Env) -> None:
    assert env.reads_of(lambda: env.upload("a")) == 2  # nothing remembered yet: the read, then the re-check
    assert env.reads_of(lambda: env.upload("b")) == 1  # the re-check only
    assert env.reads_of(lambda: env.upload("c")) == 1


def test_a_conditional_upload_judges_the_branch_as_it_is(env: Env) -> None:
    env.upload("a")
    reads = env.reads_of(lambda: env.here.objects.upload_object(REPO, MAIN, "new", b"x", if_absent=True))
    assert reads == 1  # its own fresh read; the conditional write checks the token itself
    with pytest.raises(errors.PreconditionFailed):
        env.here.objects.upload_object(REPO, MAIN, "new", b"y", if_absent=True)


def test_an_upload_after_a_commit_elsewhere_is_staged_in_the_new_token_and_committed_next(env: Env) -> None:
    env.upload("a")  # remembers the record with the token a commit elsewhere now seals
    env.elsewhere.commits.commit(REPO, MAIN, "bob", "first")
    remembered = env.here.ports.upload_branches.fresh((REPO, MAIN))
    assert remembered is not None
    assert remembered.staging_token != env.refs.get_branch(REPO, MAIN).staging_token  # stale now
    env.upload("b", b"after the commit")
    now = env.refs.get_branch(REPO, MAIN)
    assert env.staging.get(now.staging_token, Key("b")) is not None  # written again where the next commit reads
    assert env.here.ports.upload_branches.fresh((REPO, MAIN)) == now
    assert env.here.objects.stat_object(REPO, MAIN, "b").size == len(b"after the commit")
    env.elsewhere.commits.commit(REPO, MAIN, "bob", "second")
    assert env.committed_keys() == ["a", "b"]


def test_a_commit_here_forgets_the_record(env: Env) -> None:
    env.upload("a")
    env.here.commits.commit(REPO, MAIN, "alice", "one")
    assert env.here.ports.upload_branches.fresh((REPO, MAIN)) is None
    assert env.reads_of(lambda: env.upload("b")) == 2


def test_an_upload_to_a_branch_deleted_elsewhere_is_refused_and_leaves_no_row(env: Env) -> None:
    env.here.branches.create_branch(REPO, "dev", "main")
    env.here.objects.upload_object(REPO, "dev", "a", b"x")  # remembers dev's record
    token = env.refs.get_branch(REPO, BranchID("dev")).staging_token
    env.elsewhere.branches.delete_branch(REPO, "dev")
    with pytest.raises(errors.BranchNotFound):
        env.here.objects.upload_object(REPO, "dev", "b", b"y")
    assert env.staging.get(token, Key("b")) is None  # withdrawn from the dead token
    assert env.here.ports.upload_branches.fresh((REPO, "dev")) is None
