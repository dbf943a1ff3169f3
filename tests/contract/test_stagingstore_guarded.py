"""The conditions of a create-only staged write, on the in-memory twin and DynamoStagingStore alike (issue 40,
item 1): ABSENT expects no row or a tombstone (DynamoDB: ``attribute_not_exists(key) OR tombstone = true``), and
``current_of`` makes the write also conditional on the branch's record still naming the token as its staging
token (DynamoDB: a ConditionCheck of the branch's item in the same TransactWriteItems; the twin: the ref store's
lock held across the check and the write)."""

from __future__ import annotations

import threading

import pytest

from chalicelib.graveler.ports import RefStore, StagingStore
from chalicelib.graveler.records import (
    ABSENT,
    Branch,
    BranchID,
    BranchKey,
    CommitID,
    Key,
    RepositoryID,
    StagingToken,
)

from .test_stagingstore_atomic import SHARDED
from .test_stagingstore_contract import TOKEN, staged, tombstone

REPO = RepositoryID("repo1")
MAIN = BranchID("main")
NEXT = StagingToken("repo1-main:token-2")


def branch_on(refs: RefStore, token: StagingToken) -> BranchKey:
    refs.create_branch(REPO, Branch(MAIN, CommitID("c1"), token))
    return BranchKey(REPO, MAIN)


@pytest.mark.parametrize("token", [TOKEN, SHARDED])
def test_absent_is_no_row_or_a_tombstone_never_an_object(staging_store: StagingStore, token: StagingToken) -> None:
    assert staging_store.set_if(token, staged("new", 1), ABSENT) is True
    assert staging_store.set_if(token, staged("new", 2), ABSENT) is False
    assert staging_store.get(token, Key("new")) == staged("new", 1)
    staging_store.set(token, tombstone("gone"))
    assert staging_store.set_if(token, staged("gone", 1), ABSENT) is True
    assert staging_store.get(token, Key("gone")) == staged("gone", 1)
    # In an atomic write too: one object in the way refuses all of them.
    pairs = [(staged("x", 1), ABSENT), (staged("new", 3), ABSENT)]
    assert staging_store.set_if_all(token, pairs) is False
    assert staging_store.get(token, Key("x")) is None


@pytest.mark.parametrize("token", [TOKEN, SHARDED])
def test_a_guarded_write_lands_only_while_the_branch_names_its_token(
    staging_store: StagingStore, ref_store: RefStore, token: StagingToken
) -> None:
    guard = branch_on(ref_store, token)
    assert staging_store.set_if(token, staged("a", 1), ABSENT, guard) is True
    assert staging_store.set_if_all(token, [(staged("b", 1), ABSENT), (staged("c", 1), None)], guard) is True
    # A seal moves the branch to a new token: a write to the old one is refused and writes nothing.
    before = ref_store.get_branch(REPO, MAIN)
    ref_store.set_branch(REPO, Branch(MAIN, before.commit_id, NEXT, (token,)), expected=before)
    assert staging_store.set_if(token, staged("d", 1), ABSENT, guard) is False
    assert staging_store.set_if_all(token, [(staged("e", 1), ABSENT), (staged("f", 1), None)], guard) is False
    assert [staging_store.get(token, Key(k)) for k in "def"] == [None, None, None]
    assert staging_store.set_if(NEXT, staged("d", 1), ABSENT, guard) is True
    # A branch that does not exist names no token.
    assert staging_store.set_if(NEXT, staged("g", 1), ABSENT, BranchKey(REPO, BranchID("nope"))) is False
    assert staging_store.get(NEXT, Key("g")) is None


def test_of_concurrent_create_only_writers_exactly_one_lands(staging_store: StagingStore, ref_store: RefStore) -> None:
    guard = branch_on(ref_store, TOKEN)
    for round_ in range(5):
        key = f"race{round_}"
        won: list[int] = []
        start = threading.Barrier(6)

        def write(n: int, key: str = key, start: threading.Barrier = start, won: list[int] = won) -> None:
            start.wait()
            if staging_store.set_if(TOKEN, staged(key, n), ABSENT, guard):
                won.append(n)

        threads = [threading.Thread(target=write, args=(n,)) for n in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(won) == 1
        assert staging_store.get(TOKEN, Key(key)) == staged(key, won[0])


def test_the_twin_without_a_ref_store_refuses_a_guarded_write() -> None:
    from chalicelib.adapters.memory_staging import MemoryStagingStore
    from chalicelib.graveler import errors

    store = MemoryStagingStore()
    with pytest.raises(errors.StorageError):
        store.set_if(TOKEN, staged("a", 1), ABSENT, BranchKey(REPO, MAIN))
    assert store.get(TOKEN, Key("a")) is None
