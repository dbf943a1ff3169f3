"""Concurrent moves of one branch each answer their own request: a commit, merge, revert or cherry-pick answers
with the commit it asked for (its message and metadata) or with an error, never with another request's commit.

Seen before: 8 concurrent commits of one branch's staged changes all answered 201, 7 of them with the commit of
another request (a commit that found its sealed token committed by a racing one reported that one as its own).
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable
from typing import Any

import pytest

from chalicelib.graveler import errors
from chalicelib.graveler.records import Commit

from .support import put_files, rebuilt
from .test_concurrency import Jittery

RACERS = 8


def _together(g: Any, n: int, call: Callable[[int], Commit]) -> tuple[dict[int, Commit], dict[int, BaseException]]:
    """Runs ``call(i)`` for i in range(n) at once: what each answered."""
    answers: dict[int, Commit] = {}
    refused: dict[int, BaseException] = {}
    barrier = threading.Barrier(n)

    def run(i: int) -> None:
        barrier.wait()
        try:
            answers[i] = call(i)
        except BaseException as e:
            refused[i] = e

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return answers, refused


@pytest.fixture
def jittery(g: Any, repo: Any) -> Any:
    rng = random.Random(5)
    return rebuilt(g, refs=Jittery(g.ports.refs, rng), staging=Jittery(g.ports.staging, rng))


def _history(g: Any) -> dict[str, Commit]:
    return {c.id: c for c in g.history.log("repo", "main", amount=1000).results}


def _own(answers: dict[int, Commit], message: Callable[[int], str], metadata: Callable[[int], dict[str, str]]) -> None:
    for i, made in answers.items():
        assert made.message == message(i), f"request {i} answered another request's commit"
        assert {k: v for k, v in made.metadata.items() if k in metadata(i)} == metadata(i)


@pytest.mark.parametrize("round_", range(3))
def test_concurrent_commits_of_the_same_changes(jittery: Any, round_: int) -> None:
    g = jittery
    put_files(g, "main", **{f"k{round_}-{i}": b"x" for i in range(5)})
    answers, refused = _together(
        g, RACERS, lambda i: g.commits.commit("repo", "main", "u", f"commit {i}", metadata={"request": str(i)})
    )
    assert answers, refused
    assert all(isinstance(e, errors.NoChanges) for e in refused.values()), refused
    _own(answers, lambda i: f"commit {i}", lambda i: {"request": str(i)})
    history = _history(g)
    assert all(made.id in history for made in answers.values())
    assert len({made.id for made in answers.values()}) == len(answers)
    assert g.history.diff_uncommitted("repo", "main").results == []


def test_concurrent_merges_of_one_source(jittery: Any) -> None:
    g = jittery
    g.branches.create_branch("repo", "side", "main")
    put_files(g, "side", a=b"1")
    g.commits.commit("repo", "side", "u", "on side")
    answers, refused = _together(
        g, RACERS, lambda i: g.merges.merge("repo", "side", "main", "u", f"merge {i}", metadata={"request": str(i)})
    )
    assert len(answers) == 1, (answers, refused)
    assert all(isinstance(e, errors.NoChanges) for e in refused.values()), refused
    _own(answers, lambda i: f"merge {i}", lambda i: {"request": str(i)})
    assert g.branches.get_branch("repo", "main").commit_id == next(iter(answers.values())).id


def test_concurrent_reverts_of_one_commit(jittery: Any) -> None:
    g = jittery
    put_files(g, "main", a=b"1")
    target = g.commits.commit("repo", "main", "u", "to revert")
    answers, refused = _together(
        g,
        RACERS,
        lambda i: g.rewrites.revert("repo", "main", target.id, "u", message=f"revert {i}", metadata={"r": str(i)}),
    )
    assert len(answers) == 1, (answers, refused)
    assert all(isinstance(e, errors.NoChanges) for e in refused.values()), refused
    _own(answers, lambda i: f"revert {i}", lambda i: {"r": str(i)})


def test_concurrent_cherry_picks_each_answer_their_own_commit(jittery: Any) -> None:
    g = jittery
    g.branches.create_branch("repo", "side", "main")
    put_files(g, "side", a=b"1")
    picked = g.commits.commit("repo", "side", "u", "to pick")
    answers, refused = _together(
        g,
        RACERS,
        lambda i: g.rewrites.cherry_pick("repo", "main", picked.id, "u", message=f"pick {i}", metadata={"p": str(i)}),
    )
    assert answers and not refused, refused
    _own(answers, lambda i: f"pick {i}", lambda i: {"p": str(i)})
    history = _history(g)
    assert all(made.id in history for made in answers.values())
    assert len({made.id for made in answers.values()}) == len(answers)
