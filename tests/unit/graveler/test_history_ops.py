"""History and branch operations: log filters, revert, cherry-pick, reset of staging, hard reset."""

from __future__ import annotations

import pytest

from chalicelib.graveler import errors
from chalicelib.graveler.branches.branch_moves import seal
from chalicelib.graveler.errors import MergeConflicts
from chalicelib.graveler.records import BranchID, StagedEntry

from .support import put_files


def _tree(g, ref: str) -> dict[str, bytes]:
    return {
        i.key: g.objects.read_object("repo", i.entry) for i in g.objects.list_objects("repo", ref, amount=1000).results
    }


def _commit(g, branch: str, message: str, **files: bytes | None) -> str:
    put_files(g, branch, **files)
    return g.commits.commit("repo", branch, "u", message).id


def _messages(page) -> list[str]:
    return [c.message for c in page.results]


@pytest.fixture
def history(g, repo):
    """main: c1 (a, d/x) - c2 (b) - c3 (a changed) - m (merge of dev) - c5 (d/y); dev: f1 (d/z) off c2."""
    _commit(g, "main", "c1", a=b"1", d__x=b"x")
    _commit(g, "main", "c2", b=b"1")
    g.branches.create_branch("repo", "dev", "main")
    _commit(g, "main", "c3", a=b"2")
    _commit(g, "dev", "f1", d__z=b"z")
    g.merges.merge("repo", "dev", "main", "u", message="m")
    _commit(g, "main", "c5", d__y=b"y")
    return g


def test_log_orders_and_first_parent(history):
    g = history
    assert _messages(g.history.log("repo", "main")) == ["c5", "m", "f1", "c3", "c2", "c1", "Repository created"]
    assert _messages(g.history.log("repo", "main", first_parent=True)) == [
        "c5",
        "m",
        "c3",
        "c2",
        "c1",
        "Repository created",
    ]


def test_log_pagination_limit_since_and_stop_at(history):
    g = history
    first = g.history.log("repo", "main", amount=2)
    assert _messages(first) == ["c5", "m"] and first.has_more and first.next_offset == first.results[-1].id
    assert _messages(g.history.log("repo", "main", after=first.next_offset, amount=2)) == ["f1", "c3"]
    limited = g.history.log("repo", "main", amount=2, limit=True)
    assert _messages(limited) == ["c5", "m"] and not limited.has_more
    c3 = next(c for c in g.history.log("repo", "main").results if c.message == "c3")
    assert _messages(g.history.log("repo", "main", stop_at=c3.id)) == ["c5", "m", "f1", "c3"]
    assert _messages(g.history.log("repo", "main", since=c3.creation_date)) == ["c5", "m", "f1", "c3"]
    with pytest.raises(errors.RefNotFound):
        g.history.log("repo", "main", stop_at="no-such-ref")


def test_log_objects_and_prefixes_filters(history):
    g = history
    assert _messages(g.history.log("repo", "main", objects=["a"])) == ["c3", "c1"]
    assert _messages(g.history.log("repo", "main", objects=["b", "nothing"])) == ["c2"]
    # Merge commits are never kept by a path filter (lakeFS's rule); the change shows in f1.
    assert _messages(g.history.log("repo", "main", prefixes=["d/"])) == ["c5", "f1", "c1"]
    assert _messages(g.history.log("repo", "main", prefixes=["d/"], first_parent=True)) == ["c5", "c1"]
    assert _messages(g.history.log("repo", "main", objects=["a"], prefixes=["d/z"])) == ["f1", "c3", "c1"]
    assert _messages(g.history.log("repo", "main", prefixes=["d/"], amount=1)) == ["c5"]


def test_revert_round_trip(history):
    g = history
    before = _tree(g, "main")
    reverted = g.rewrites.revert("repo", "main", "main~2", "bob")  # c3 on the first-parent line: a 1 -> 2
    assert reverted.message == "Revert main~2" and reverted.committer == "bob"
    assert _tree(g, "main") == {**before, "a": b"1"}
    g.rewrites.revert("repo", "main", "main", "bob")  # revert the revert
    assert _tree(g, "main") == before
    with pytest.raises(errors.NoChanges):
        g.rewrites.revert("repo", "main", "main~1", "bob")  # the first revert: the second one already undid it
    assert (
        g.rewrites.revert("repo", "main", "main~1", "bob", allow_empty=True).parents[0]
        == g.commits.get_commit("repo", "main~1").id
    )


def test_revert_of_a_merge_needs_a_parent_number(history):
    g = history
    merge = g.commits.get_commit("repo", "main~1")
    assert len(merge.parents) == 2
    with pytest.raises(errors.Invalid, match="parent_number"):
        g.rewrites.revert("repo", "main", merge.id, "u")
    with pytest.raises(errors.Invalid):
        g.rewrites.revert("repo", "main", merge.id, "u", parent_number=3)
    g.rewrites.revert("repo", "main", merge.id, "u", parent_number=1, message="undo dev", metadata={"why": "bad"})
    tree = _tree(g, "main")
    assert "d/z" not in tree and tree["d/y"] == b"y"
    assert g.commits.get_commit("repo", "main").metadata == {"why": "bad"}


def test_revert_conflicts_and_refusals(history):
    g = history
    c3 = g.commits.get_commit("repo", "main~2")
    _commit(g, "main", "a again", a=b"3")
    with pytest.raises(MergeConflicts) as caught:
        g.rewrites.revert("repo", "main", c3.id, "u")
    assert [c.key for c in caught.value.conflicts] == ["a"]
    g.objects.upload_object("repo", "main", "dirty", b"1")
    with pytest.raises(errors.DirtyBranch):
        g.rewrites.revert("repo", "main", "main~1", "u")


def test_cherry_pick_round_trip(history):
    g = history
    g.branches.create_branch("repo", "hotfix", "main~3")  # c2 on the first-parent line: a=1, b, d/x
    c5 = g.commits.get_commit("repo", "main")
    picked = g.rewrites.cherry_pick("repo", "hotfix", "main", "carol")
    assert picked.message == "c5" and picked.committer == "carol"
    assert picked.metadata == {"cherry-pick-origin": c5.id, "cherry-pick-committer": "u"}
    assert _tree(g, "hotfix") == {"a": b"1", "b": b"1", "d/x": b"x", "d/y": b"y"}
    assert picked.parents == (g.commits.get_commit("repo", "hotfix~1").id,)

    merge = g.commits.get_commit("repo", "main~1")
    with pytest.raises(errors.Invalid, match="parent_number"):
        g.rewrites.cherry_pick("repo", "hotfix", merge.id, "carol")
    g.rewrites.cherry_pick("repo", "hotfix", merge.id, "carol", parent_number=1, message="bring dev")
    assert _tree(g, "hotfix")["d/z"] == b"z" and g.commits.get_commit("repo", "hotfix").message == "bring dev"
    with pytest.raises(errors.Invalid):
        g.rewrites.cherry_pick("repo", "hotfix", merge.id, "carol", parent_number=0)


def test_cherry_pick_conflict(history):
    g = history
    g.branches.create_branch("repo", "other", "main~3")
    _commit(g, "other", "own a", a=b"other")
    with pytest.raises(MergeConflicts):
        g.rewrites.cherry_pick("repo", "other", "main~2", "u")  # c3 changed a too


def test_reset_all_one_object_and_a_prefix(history):
    g = history
    committed = _tree(g, "main")
    g.objects.upload_object("repo", "main", "a", b"changed")
    g.objects.upload_object("repo", "main", "new/1", b"1")
    g.objects.upload_object("repo", "main", "new/2", b"2")
    g.objects.delete_object("repo", "main", "b")
    g.objects.upload_object("repo", "main", "d/x", b"changed")

    g.rewrites.reset_branch("repo", "main", "object", "a")
    assert _tree(g, "main")["a"] == committed["a"]
    g.rewrites.reset_branch("repo", "main", "object", "never-staged")  # no-op
    g.rewrites.reset_branch("repo", "main", "common_prefix", "new/")
    assert not any(k.startswith("new/") for k in _tree(g, "main"))
    assert [d.key for d in g.history.diff_uncommitted("repo", "main").results] == ["b", "d/x"]
    g.rewrites.reset_branch("repo", "main", "reset")
    assert _tree(g, "main") == committed and not g.history.is_dirty("repo", "main")
    with pytest.raises(errors.Invalid):
        g.rewrites.reset_branch("repo", "main", "everything")
    with pytest.raises(errors.Invalid):
        g.rewrites.reset_branch("repo", "main", "object")


def test_reset_hides_a_change_sealed_by_a_commit_in_progress(history):
    g = history
    repo = g.repositories.get_repository("repo")
    g.objects.upload_object("repo", "main", "a", b"staged")
    g.objects.upload_object("repo", "main", "brand-new", b"staged")
    seal(g.ports.refs, g.ports.staging, repo.id, BranchID("main"))  # as a commit does first
    g.rewrites.reset_branch("repo", "main", "object", "a")
    g.rewrites.reset_branch("repo", "main", "object", "brand-new")
    tree = _tree(g, "main")
    assert tree["a"] == b"2" and "brand-new" not in tree
    branch = g.branches.get_branch("repo", "main")
    assert g.ports.staging.get(branch.staging_token, "brand-new") == StagedEntry("brand-new", None)


def test_hard_reset(history):
    g = history
    target = g.commits.get_commit("repo", "main~3")
    moved = g.rewrites.hard_reset("repo", "main", "main~3")
    assert moved.commit_id == target.id and g.branches.get_branch("repo", "main").commit_id == target.id
    g.objects.upload_object("repo", "main", "x", b"1")
    with pytest.raises(errors.DirtyBranch):
        g.rewrites.hard_reset("repo", "main", "dev")
    g.rewrites.reset_branch("repo", "main")
    g.rewrites.hard_reset("repo", "main", "dev")
    assert _tree(g, "main") == _tree(g, "dev")
    with pytest.raises(errors.RefNotFound):
        g.rewrites.hard_reset("repo", "main", "nope")
