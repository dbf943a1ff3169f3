"""A commit in one process reads its branch once and hands the record from step to step; every write is still a
compare-and-swap on it, so a branch that moved meanwhile costs a lost swap and a read, never a wrong commit."""

from __future__ import annotations

from typing import Any

import pytest

from chalicelib.graveler import errors
from chalicelib.graveler.records import Key

from .support import put_files, rebuilt


class BranchReads:
    def __init__(self, g: Any, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        get_branch = g.ports.refs.get_branch

        def counted(repo_id: str, branch_id: str) -> Any:
            self.count += 1
            return get_branch(repo_id, branch_id)

        monkeypatch.setattr(g.ports.refs, "get_branch", counted)


def test_a_commit_reads_its_branch_once(g: Any, repo: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    put_files(g, "main", a=b"1")
    g.commits.commit("repo", "main", "u", "first")
    put_files(g, "main", b=b"2")
    reads = BranchReads(g, monkeypatch)
    g.commits.commit("repo", "main", "u", "second")
    assert reads.count == 1


class CommitReads:
    """Counts reads of each commit id (the memory ref store's get_commit, wrapped)."""

    def __init__(self, g: Any, monkeypatch: pytest.MonkeyPatch) -> None:
        self.ids: list[str] = []
        get_commit = g.ports.refs.get_commit

        def counted(repo_id: str, commit_id: str) -> Any:
            self.ids.append(commit_id)
            return get_commit(repo_id, commit_id)

        monkeypatch.setattr(g.ports.refs, "get_commit", counted)


def test_an_inline_commit_answers_the_commit_it_built_without_reading_it_back(
    g: Any, repo: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The steps hand on typed records (commit/plan.py): the inline path gets the Commit its finish wrote, not an
    id to look up again. (Without hooks: post-commit hooks read the commit's action files, by design.)"""
    g = rebuilt(g, hooks=None)
    put_files(g, "main", a=b"1")
    reads = CommitReads(g, monkeypatch)
    made = g.commits.commit("repo", "main", "u", "first")
    assert made == g.commits.get_commit("repo", "main") and made.message == "first"
    assert reads.ids.count(made.id) == 1  # the get_commit just above: the commit itself never read it


def test_an_inline_merge_answers_the_commit_it_built_without_reading_it_back(
    g: Any, repo: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    g = rebuilt(g, hooks=None)
    g.branches.create_branch("repo", "feature", "main")
    put_files(g, "feature", a=b"1")
    g.commits.commit("repo", "feature", "u", "work")
    reads = CommitReads(g, monkeypatch)
    merged = g.merges.merge("repo", "feature", "main", "u", "merge it")
    assert merged == g.commits.get_commit("repo", "main") and len(merged.parents) == 2
    assert reads.ids.count(merged.id) == 1


def test_a_commit_that_takes_ours_while_our_pre_hooks_run_answers_its_own_and_ours_none(
    g: Any, repo: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    put_files(g, "main", a=b"1")
    first = g.commits.commit("repo", "main", "u", "first")
    put_files(g, "main", b=b"2")
    run_pre_hooks = g.ports.hooks.run
    racing: list[Any] = []

    def pre_hooks_during_which_another_commit_lands(event: Any, branch: Any = None) -> None:
        run_pre_hooks(event, branch)
        if not racing:
            racing.append(None)
            put_files(g, "main", c=b"3")
            racing[0] = g.commits.commit("repo", "main", "u", "racing")
            put_files(g, "main", e=b"5")

    monkeypatch.setattr(g.ports.hooks, "run", pre_hooks_during_which_another_commit_lands)
    put_files(g, "main", d=b"4")
    # Our hooks ran on b and d, sealed; the racing commit sealed c after them and took all three. Ours answers "no
    # changes", never the racing commit as if it were ours; e, staged while our hooks ran, stays staged.
    with pytest.raises(errors.NoChanges):
        g.commits.commit("repo", "main", "u", "mine")
    assert racing[0].parents == (first.id,) and racing[0].message == "racing"
    assert [str(o.key) for o in g.objects.list_objects("repo", racing[0].id).results] == ["a", "b", "c", "d"]
    assert g.branches.get_branch("repo", "main").commit_id == racing[0].id
    assert [str(d.key) for d in g.history.diff_uncommitted("repo", "main").results] == ["e"]


def test_a_small_commit_keeps_its_token_readable_for_readers_of_the_old_record(g: Any, repo: Any) -> None:
    put_files(g, "main", a=b"1", b=b"2", c=None)
    token = g.branches.get_branch("repo", "main").staging_token
    g.commits.commit("repo", "main", "u", "c")
    assert [str(s.key) for s in g.ports.staging.iterate(token)] == ["a", "b"]
    assert g.ports.staging.get(token, Key("a")) is not None
