"""Active-commit selection (graveler/reads/retention.py): examples of each rule, and a property test against a
brute-force model over random histories."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chalicelib.graveler.errors import CommitNotFound
from chalicelib.graveler.reads.retention import (
    BranchRetention,
    RetentionRules,
    active_commits,
    dangling_leaves,
)
from chalicelib.graveler.records import BranchID, Commit, CommitID, MetaRangeID

DAY = 86_400
NOW = 1_800_000_000.0


def make(spec: dict[str, tuple[float, tuple[str, ...]]]) -> dict[CommitID, Commit]:
    """{id: (days ago, parents)} -> commits."""
    return {
        CommitID(cid): Commit(
            CommitID(cid), "", cid, int(NOW - days * DAY), MetaRangeID(""), {}, tuple(CommitID(p) for p in parents)
        )
        for cid, (days, parents) in spec.items()
    }


def rules(default: int, **branches: int) -> RetentionRules:
    return RetentionRules(default, tuple(BranchRetention(BranchID(b), d) for b, d in branches.items()))


def heads(**branches: str) -> dict[BranchID, CommitID]:
    return {BranchID(b): CommitID(c) for b, c in branches.items()}


LINE = make({"c1": (30, ()), "c2": (20, ("c1",)), "c3": (12, ("c2",)), "c4": (8, ("c3",)), "c5": (2, ("c4",))})


def test_a_branch_keeps_its_window_and_the_first_commit_before_it() -> None:
    assert active_commits(LINE, heads(main="c5"), rules(10), NOW) == {"c5", "c4", "c3"}
    assert active_commits(LINE, heads(main="c5"), rules(1, main=25), NOW) == {"c5", "c4", "c3", "c2", "c1"}


def test_a_head_is_kept_even_with_zero_days_and_an_old_date() -> None:
    assert active_commits(LINE, heads(main="c5"), rules(0), NOW) == {"c5"}
    assert active_commits(LINE, heads(main="c1"), rules(0), NOW) == {"c1"}


def test_the_branch_rule_wins_over_the_default() -> None:
    assert active_commits(LINE, heads(main="c5"), rules(30, main=0), NOW) == {"c5"}


def test_a_commit_exactly_at_the_threshold_is_outside_the_window() -> None:
    # c4 is exactly 8 days old: it is kept (the first before the window) but does not keep c3.
    assert active_commits(LINE, heads(main="c5"), rules(8), NOW) == {"c5", "c4"}


def test_dangling_leaves_follow_the_default_rule() -> None:
    commits = make(
        {
            "c1": (30, ()),
            "c2": (20, ("c1",)),
            "inside": (3, ("c2",)),  # a deleted branch's head, 3 days old
            "outside": (9, ("c1",)),  # another one, 9 days old
        }
    )
    assert dangling_leaves(commits, [CommitID("c2")]) == ["inside", "outside"]
    # main (0 days) keeps only its head; "inside" is in the 5-day window and keeps c2 as the first before it.
    assert active_commits(commits, heads(main="c2"), rules(5, main=0), NOW) == {"c2", "inside"}
    assert active_commits(commits, heads(main="c1"), rules(5, main=0), NOW) == {"c1", "inside", "c2"}
    # With a 10-day default "outside" is in too, and keeps c1.
    assert active_commits(commits, heads(main="c2"), rules(10, main=0), NOW) == {"c2", "inside", "outside", "c1"}


def test_the_longer_retention_wins_where_walks_meet() -> None:
    commits = make({"c1": (40, ()), "c2": (30, ("c1",)), "c3": (20, ("c2",)), "a": (1, ("c3",)), "b": (2, ("c3",))})
    # "a" (2 days) reaches c3 and stops; "b" (35 days) walks on through c2 to c1.
    assert active_commits(commits, heads(a="a", b="b"), rules(0, a=2, b=35), NOW) == {"a", "b", "c3", "c2", "c1"}
    # Whichever order the walks run in, the result is the union.
    assert active_commits(commits, heads(a="a", b="b"), rules(0, a=35, b=2), NOW) == {"a", "b", "c3", "c2", "c1"}


def test_merges_are_walked_by_first_parent_only() -> None:
    commits = make({"c1": (30, ()), "side": (25, ("c1",)), "merge": (1, ("c1", "side"))})
    # "side" is nobody's first parent: a dangling leaf, outside a 5-day default window.
    assert active_commits(commits, heads(main="merge"), rules(5, main=100), NOW) == {"merge", "c1"}


def test_a_missing_commit_stops_the_computation() -> None:
    commits = make({"c2": (1, ("c1",))})
    with pytest.raises(CommitNotFound):
        active_commits(commits, heads(main="c2"), rules(10), NOW)
    with pytest.raises(CommitNotFound):
        active_commits(commits, heads(main="nowhere"), rules(10), NOW)


# ---- property: the walk equals a brute-force reading of the rules --------------------------------------------


def model(
    commits: dict[CommitID, Commit], branch_heads: dict[BranchID, CommitID], r: RetentionRules, now: float
) -> set[CommitID]:
    """A commit is active when some starting point reaches it by first parents such that the starting point is
    a head (or a dangling leaf inside the default window) and every commit before it on the way is strictly
    inside that starting point's window. Checked chain by chain, with no shortcuts."""
    first_parents = {c.parents[0] for c in commits.values() if c.parents}
    points = [(cid, r.days_for(b)) for b, cid in branch_heads.items()]
    points += [
        (cid, r.default_retention_days)
        for cid in commits
        if cid not in first_parents and cid not in branch_heads.values()
    ]
    active: set[CommitID] = set()
    for start, days in points:
        threshold = now - days * DAY
        is_head = start in branch_heads.values()
        chain = [commits[start]]
        while chain[-1].parents:
            chain.append(commits[chain[-1].parents[0]])
        for k, commit in enumerate(chain):
            reachable = (is_head or chain[0].creation_date > threshold) and all(
                c.creation_date > threshold for c in chain[:k]
            )
            if reachable:
                active.add(commit.id)
    return active


@st.composite
def histories(draw: st.DrawFn) -> tuple[dict[CommitID, Commit], dict[BranchID, CommitID], RetentionRules]:
    n = draw(st.integers(1, 25))
    spec: dict[str, tuple[float, tuple[str, ...]]] = {}
    for i in range(n):
        # Half days, so that dates often fall exactly on a threshold; children may be older than parents
        # (commit dates are set by the client).
        days = draw(st.integers(0, 60)) / 2
        parents: tuple[str, ...] = ()
        if i and draw(st.integers(0, 9)) > 0:  # most commits have a parent; some start new roots
            first = draw(st.integers(0, i - 1))
            parents = (f"c{first}",)
            if draw(st.integers(0, 4)) == 0:
                parents += (f"c{draw(st.integers(0, i - 1))}",)
        spec[f"c{i}"] = (days, parents)
    commits = make(spec)
    names = ["main", "dev", "feature", "release"]
    chosen = draw(st.lists(st.sampled_from(names), unique=True, max_size=4))
    branch_heads = {BranchID(b): CommitID(f"c{draw(st.integers(0, n - 1))}") for b in chosen}
    ruled = draw(st.lists(st.sampled_from(names), unique=True, max_size=4))
    branch_rules = tuple(BranchRetention(BranchID(b), draw(st.integers(0, 30))) for b in ruled)
    return commits, branch_heads, RetentionRules(draw(st.integers(0, 30)), branch_rules)


@settings(max_examples=300, deadline=None)
@given(histories())
def test_active_commits_match_the_brute_force_model(
    history: tuple[dict[CommitID, Commit], dict[BranchID, CommitID], RetentionRules],
) -> None:
    commits, branch_heads, r = history
    assert active_commits(commits, branch_heads, r, NOW) == model(commits, branch_heads, r, NOW)
    # Heads are always kept, whatever the rules.
    assert set(branch_heads.values()) <= active_commits(commits, branch_heads, r, NOW)
