"""RefStore contract, lakeFS compatibility round 2: hidden branches keep their flag through every move, and
commit times keep their sub-second part (the log orders by it)."""

from __future__ import annotations

import dataclasses

from chalicelib.graveler.ports import RefStore
from chalicelib.graveler.records import BranchID, CommitID, StagingToken

from .test_refstore_contract import REPO, make_branch, make_commit, make_repo


def test_a_hidden_branch_stays_hidden_through_moves(ref_store: RefStore) -> None:
    ref_store.create_repository(make_repo(REPO))
    hidden = dataclasses.replace(make_branch("tx-1"), hidden=True)
    ref_store.create_branch(REPO, hidden)
    ref_store.create_branch(REPO, make_branch("shown"))
    assert ref_store.get_branch(REPO, BranchID("tx-1")).hidden is True
    assert ref_store.get_branch(REPO, BranchID("shown")).hidden is False

    # A move built without the flag (as a commit or a seal builds it) keeps the stored one.
    stored = ref_store.get_branch(REPO, BranchID("tx-1"))
    ref_store.set_branch(REPO, make_branch("tx-1", commit="c1", token="t1", sealed=("t0",)), expected=stored)
    moved = ref_store.get_branch(REPO, BranchID("tx-1"))
    assert (moved.commit_id, moved.staging_token, moved.sealed_tokens) == ("c1", "t1", (StagingToken("t0"),))
    assert moved.hidden is True
    assert {b.id: b.hidden for b in ref_store.list_branches(REPO)} == {"shown": False, "tx-1": True}


def test_commit_times_keep_their_sub_second_part(ref_store: RefStore) -> None:
    ref_store.create_repository(make_repo(REPO))
    ref_store.add_commit(REPO, make_commit("c1", creation_date=1_700_000_100.125))
    ref_store.add_commit(REPO, make_commit("c2", creation_date=1_700_000_100))
    assert ref_store.get_commit(REPO, CommitID("c1")).creation_date == 1_700_000_100.125
    assert ref_store.get_commit(REPO, CommitID("c2")).creation_date == 1_700_000_100
