"""Runs store contract: runs, hook outputs and the retry claims behave the same over the memory twin and S3 (moto)."""

from __future__ import annotations

import pytest

from chalicelib.graveler.actions import COMPLETED, FAILED, ActionRun, HookRun, HookRunNotFound, RunNotFound, RunStore
from chalicelib.graveler.actions.records import new_run_id
from chalicelib.graveler.ports import BlockStore


def make_run(run_id: str, branch: str, commit_id: str, status: str = COMPLETED) -> ActionRun:
    hook = HookRun(run_id, "0000_0000", "check", "h1", 10.0, 11.0, status)
    return ActionRun(run_id, "repo", "post-commit", branch, commit_id, branch, 10.0, 11.0, status, (hook,))


@pytest.fixture
def store(block_store: BlockStore) -> RunStore:
    return RunStore(block_store)


@pytest.fixture
def ns(bucket: str) -> str:
    return f"s3://{bucket}/repo-ns"


def test_save_get_output(store: RunStore, ns: str) -> None:
    run = make_run(new_run_id(1000.0), "main", "c1", FAILED)
    store.save(ns, run, {"0000_0000": "Response:\n500\nbad rows ✗"})
    assert store.get(ns, run.run_id) == run
    assert store.output(ns, run.run_id, "0000_0000").decode() == "Response:\n500\nbad rows ✗"
    with pytest.raises(HookRunNotFound):
        store.output(ns, run.run_id, "0000_0009")
    with pytest.raises(RunNotFound):
        store.get(ns, "nope")
    with pytest.raises(RunNotFound):
        store.get(ns, "../x")


def test_listing_newest_first_and_by_branch_and_commit(store: RunStore, ns: str) -> None:
    runs = [make_run(new_run_id(1000.0 + i), b, f"c{i}") for i, b in enumerate(["main", "dev", "main"])]
    for r in runs:
        store.save(ns, r, {"0000_0000": ""})
    assert [r.commit_id for r in store.list(ns).results] == ["c2", "c1", "c0"]
    assert [r.commit_id for r in store.list(ns, branch="main").results] == ["c2", "c0"]
    assert [r.commit_id for r in store.list(ns, commit_id="c1").results] == ["c1"]
    page = store.list(ns, amount=1)
    assert page.has_more and page.next_offset == runs[2].run_id
    assert [r.commit_id for r in store.list(ns, after=page.next_offset).results] == ["c1", "c0"]
    assert store.list(f"{ns}-other").results == []


def test_claims_are_first_writer_wins(store: RunStore, ns: str) -> None:
    assert store.claimed(ns, "req/post-merge") is None
    assert store.claim(ns, "req/post-merge", "run-a") is None
    assert store.claim(ns, "req/post-merge", "run-b") == "run-a"
    assert store.claimed(ns, "req/post-merge") == "run-a"
