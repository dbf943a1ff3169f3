"""When a merge is "no changes": exactly when the source's tree is the merge base's, by metarange id, as lakeFS
decides (pkg/graveler/committed/manager.go, Merge), the repository's first commit (no metarange) told apart
from an empty tree a commit wrote."""

from __future__ import annotations

import pytest

from chalicelib.graveler import errors
from chalicelib.graveler.merge.policy import source_holds_changes, tree_id
from chalicelib.graveler.records import EMPTY_METARANGE, Commit, CommitID, MetaRangeID

from .support import put_files


def _commit(metarange: str, parents: tuple[str, ...]) -> Commit:
    return Commit(
        CommitID("c" + metarange + "".join(parents)),
        "u",
        "m",
        0.0,
        MetaRangeID(metarange),
        {},
        tuple(CommitID(p) for p in parents),
    )


def test_the_first_commit_has_no_tree_id_and_an_empty_tree_a_commit_wrote_has_one() -> None:
    first = _commit("", ())
    emptied = _commit("", ("p",))
    assert tree_id(first) == EMPTY_METARANGE
    assert tree_id(emptied) not in (EMPTY_METARANGE, "m1")
    assert tree_id(emptied) == tree_id(_commit("", ("q", "r")))  # lakeFS's empty metarange id is content-addressed
    assert tree_id(_commit("m1", ("p",))) == tree_id(_commit("m1", ())) == "m1"
    assert source_holds_changes(first, emptied)
    assert not source_holds_changes(emptied, _commit("", ("x",)))
    assert not source_holds_changes(first, _commit("", ()))
    assert source_holds_changes(_commit("m1", ("p",)), _commit("m2", ("p",)))


def test_an_emptied_branch_from_the_first_commit_merges_into_a_branch_from_the_first_commit(g, repo) -> None:
    """The issue's case, on the engine: b made from main right after creation, an object added and committed,
    deleted and committed (the tree is empty again), merged into a new branch made from main."""
    g.branches.create_branch("repo", "b", "main")
    put_files(g, "b", x=b"1")
    g.commits.commit("repo", "b", "u", "add")
    g.objects.delete_object("repo", "b", "x")
    emptied = g.commits.commit("repo", "b", "u", "delete")
    assert emptied.meta_range_id == EMPTY_METARANGE
    g.branches.create_branch("repo", "target", "main")
    merged = g.merges.merge("repo", emptied.id, "target", "u")
    assert merged.parents == (g.commits.get_commit("repo", "main").id, emptied.id)
    assert g.objects.list_objects("repo", "target", amount=10).results == []
    # Merged once, it is already up to date: the base is now the source itself.
    with pytest.raises(errors.NoChanges):
        g.merges.merge("repo", emptied.id, "target", "u")


def test_git_like_already_up_to_date_answers_stay(g, repo) -> None:
    put_files(g, "main", a=b"1")
    g.commits.commit("repo", "main", "u", "one")
    g.branches.create_branch("repo", "dev", "main")
    put_files(g, "main", b=b"2")
    g.commits.commit("repo", "main", "u", "two")
    # dev is an ancestor of main; main~1 is too; a branch is not merged into itself with anything new.
    for source in ("dev", "main~1", "main"):
        with pytest.raises(errors.NoChanges):
            g.merges.merge("repo", source, "main", "u")
    # A branch fresh from the first commit: its tree is the first commit's.
    g.branches.create_branch("repo", "fresh", "main~2")
    with pytest.raises(errors.NoChanges):
        g.merges.merge("repo", "fresh", "main", "u")
    # allow_empty makes the merge commit anyway, as lakeFS.
    made = g.merges.merge("repo", "dev", "main", "u", allow_empty=True)
    assert made.meta_range_id == g.commits.get_commit("repo", "main~1").meta_range_id


def test_two_branches_emptied_since_a_non_empty_base_hold_no_changes_for_each_other(g, repo) -> None:
    put_files(g, "main", a=b"1")
    g.commits.commit("repo", "main", "u", "one")
    g.branches.create_branch("repo", "dev", "main")
    g.objects.delete_object("repo", "dev", "a")
    g.commits.commit("repo", "dev", "u", "empty dev")
    g.objects.delete_object("repo", "main", "a")
    g.commits.commit("repo", "main", "u", "empty main")
    # The base holds "a": dev's empty tree differs from it, so the merge runs and changes nothing.
    merged = g.merges.merge("repo", "dev", "main", "u")
    assert merged.meta_range_id == EMPTY_METARANGE
    with pytest.raises(errors.NoChanges):
        g.merges.merge("repo", "dev", "main", "u")
