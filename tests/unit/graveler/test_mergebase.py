"""The merge base: git's best common ancestor over generations, on hand-built commit graphs."""

from __future__ import annotations

import pytest

from chalicelib.adapters.memory import MemoryRefStore
from chalicelib.graveler.errors import NoMergeBase
from chalicelib.graveler.merge.base import (
    find_merge_base,
    require_merge_base,
)
from chalicelib.graveler.records import Commit, CommitID, RepositoryID

REPO = RepositoryID("repo")


class Graph:
    """Commits named by letters; generation and creation date follow the order of creation."""

    def __init__(self) -> None:
        self.refs = MemoryRefStore()
        self.date = 0

    def add(self, name: str, *parents: str) -> str:
        self.date += 1
        generation = 1 + max((self.refs.get_commit(REPO, CommitID(p)).generation for p in parents), default=0)
        self.refs.add_commit(
            REPO, Commit(CommitID(name), "", name, self.date, "", {}, tuple(map(CommitID, parents)), generation)
        )
        return name

    def base(self, left: str, right: str) -> str | None:
        found = find_merge_base(self.refs, REPO, CommitID(left), CommitID(right))
        return None if found is None else found.id


def test_linear_history_and_the_same_commit():
    g = Graph()
    g.add("a"), g.add("b", "a"), g.add("c", "b")
    assert g.base("c", "a") == "a"
    assert g.base("a", "c") == "a"
    assert g.base("b", "b") == "b"


def test_fork_and_merges():
    #   a - b - c - m1 - e        main (m1 merges dev's d into main)
    #        \     /
    #         d - f - g           dev
    g = Graph()
    g.add("a"), g.add("b", "a"), g.add("c", "b"), g.add("d", "b"), g.add("m1", "c", "d"), g.add("e", "m1")
    g.add("f", "d"), g.add("g", "f")
    assert g.base("e", "g") == "d"  # dev's d was merged into main: the base moves up to it
    assert g.base("g", "e") == "d"
    assert g.base("c", "f") == "b"


def test_best_of_several_common_ancestors_is_the_newest():
    #  a - b - c - d (main) ; a - b - x (dev) ; main merged into dev at y (parents x, c)
    g = Graph()
    g.add("a"), g.add("b", "a"), g.add("c", "b"), g.add("d", "c"), g.add("x", "b"), g.add("y", "x", "c")
    assert g.base("d", "y") == "c"  # b and a are common too, but ancestors of c


def test_criss_cross_picks_one_of_the_best():
    g = Graph()
    g.add("a"), g.add("l1", "a"), g.add("r1", "a")
    g.add("l2", "l1", "r1"), g.add("r2", "r1", "l1")
    assert g.base("l2", "r2") in {"l1", "r1"}


def test_unrelated_histories_have_no_base():
    g = Graph()
    g.add("a"), g.add("b", "a"), g.add("z")
    assert g.base("b", "z") is None
    with pytest.raises(NoMergeBase):
        require_merge_base(g.refs, REPO, CommitID("b"), CommitID("z"))
