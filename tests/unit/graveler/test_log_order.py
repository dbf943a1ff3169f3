"""The log lists commits in lakeFS's order: newest creation time first, sub-second included, and of two equal
times the greater commit id first (lakeFS's commit iterator). Commit IDs hash whole seconds, as lakeFS's do."""

from __future__ import annotations

import pytest

from chalicelib.graveler.identity import commit_id
from chalicelib.graveler.records import EMPTY_METARANGE
from chalicelib.wiring import memory_services

from .support import put_files


class FastClock:
    """Many operations inside one second: each reading is 10 ms after the previous one."""

    def __init__(self, now: float = 1_700_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        self.now += 0.01
        return self.now


@pytest.fixture
def fast():
    engine = memory_services(clock=FastClock(), sleep=lambda s: None).engine
    engine.repositories.create_repository("repo", "s3://bucket/repo")
    return engine


def _messages(g, ref: str) -> list[str]:
    return [c.message for c in g.history.log("repo", ref, amount=100).results]


def test_a_fast_history_lists_newest_first(fast) -> None:
    """commit, branch work, commit, merge, commit, all in one second: the order is the order they happened in,
    not the generation order (the branch's commits have higher generations than main's c2)."""
    g = fast
    put_files(g, "main", a=b"1")
    g.commits.commit("repo", "main", "u", "c1")
    g.branches.create_branch("repo", "dev", "main")
    for n in (1, 2, 3):
        put_files(g, "dev", **{f"f{n}": b"x"})
        g.commits.commit("repo", "dev", "u", f"f{n}")
    put_files(g, "main", b=b"1")
    g.commits.commit("repo", "main", "u", "c2")
    g.merges.merge("repo", "dev", "main", "u", message="m")
    put_files(g, "main", c=b"1")
    g.commits.commit("repo", "main", "u", "c3")

    history = g.history.log("repo", "main", amount=100).results
    assert len({int(c.creation_date) for c in history}) == 1  # one second
    assert [c.message for c in history] == ["c3", "m", "c2", "f3", "f2", "f1", "c1", "Repository created"]
    dates = [c.creation_date for c in history]
    assert dates == sorted(dates, reverse=True)


def test_equal_times_list_the_greater_commit_id_first(fast) -> None:
    g = fast
    g.branches.create_branch("repo", "left", "main")
    g.branches.create_branch("repo", "right", "main")
    put_files(g, "left", l=b"1")
    put_files(g, "right", r=b"1")
    left = g.commits.commit("repo", "left", "u", "on left", date=1_700_000_500)
    right = g.commits.commit("repo", "right", "u", "on right", date=1_700_000_500)
    merge = g.merges.merge("repo", "right", "left", "u", message="both")
    assert left.creation_date == right.creation_date
    first, second = sorted([left, right], key=lambda c: c.id, reverse=True)
    assert [c.id for c in g.history.log("repo", merge.id, amount=3).results] == [merge.id, first.id, second.id]


def test_commit_ids_hash_whole_seconds() -> None:
    """The sub-second part orders the log but never changes an ID (lakeFS hashes Time.Unix())."""
    fields = ("user1", "message1", EMPTY_METARANGE)
    assert commit_id(*fields, 1_700_000_000.999, {}, ()) == commit_id(*fields, 1_700_000_000, {}, ())
    assert commit_id(*fields, 1_700_000_001.0, {}, ()) != commit_id(*fields, 1_700_000_000, {}, ())
    # Go's Unix() rounds down, also before 1970.
    assert commit_id(*fields, -10.5, {}, ()) == commit_id(*fields, -11, {}, ())


def test_the_stored_date_keeps_the_sub_second_part(fast) -> None:
    put_files(fast, "main", a=b"1")
    made = fast.commits.commit("repo", "main", "u", "c1")
    assert made.creation_date != int(made.creation_date)
    assert fast.commits.get_commit("repo", made.id).creation_date == made.creation_date
    assert made.id == commit_id("u", "c1", made.meta_range_id, int(made.creation_date), {}, made.parents)
