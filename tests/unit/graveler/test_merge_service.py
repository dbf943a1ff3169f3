"""engine.merges.merge, preview_merge, diff_refs and find_merge_base on the in-memory ports."""

from __future__ import annotations

import dataclasses
import json

import pytest

from chalicelib.graveler import errors
from chalicelib.graveler.committed.mergetable import Action, Decision
from chalicelib.graveler.errors import MergeConflicts
from chalicelib.graveler.identity import new_commit
from chalicelib.graveler.records import Branch, DiffType

from .support import put_files


def _tree(g, ref: str) -> dict[str, bytes]:
    out = {}
    for item in g.objects.list_objects("repo", ref, amount=1000).results:
        out[item.key] = g.objects.read_object("repo", item.entry)
    return out


@pytest.fixture
def forked(g, repo):
    """main and dev forked from a base holding a, b, c, d."""
    put_files(g, "main", a=b"a0", b=b"b0", c=b"c0", d=b"d0")
    g.commits.commit("repo", "main", "u", "base")
    g.branches.create_branch("repo", "dev", "main")
    return g


def test_merge_applies_the_source_changes_with_a_merge_commit(forked):
    g = forked
    put_files(g, "dev", a=b"a1", b=None, e=b"e1")
    g.commits.commit("repo", "dev", "u", "dev work")
    put_files(g, "main", c=b"c2")
    head = g.commits.commit("repo", "main", "u", "main work")
    source = g.commits.get_commit("repo", "dev")

    merged = g.merges.merge("repo", "dev", "main", "alice", metadata={"job": "7"})

    assert _tree(g, "main") == {"a": b"a1", "c": b"c2", "d": b"d0", "e": b"e1"}
    assert merged.parents == (head.id, source.id)
    assert merged.generation == max(head.generation, source.generation) + 1
    assert merged.message == "Merge 'dev' into 'main'"
    assert merged.committer == "alice"
    assert merged.metadata == {"job": "7", ".lakefs.merge.strategy": "default"}
    assert g.branches.get_branch("repo", "main").commit_id == merged.id


def test_merge_into_an_unchanged_destination_still_makes_a_commit(forked):
    g = forked
    put_files(g, "dev", a=b"a1")
    dev_head = g.commits.commit("repo", "dev", "u", "dev work")
    merged = g.merges.merge("repo", "dev", "main", "u")
    assert merged.id != dev_head.id and merged.meta_range_id == dev_head.meta_range_id
    assert _tree(g, "main")["a"] == b"a1"


def test_merge_refusals(forked):
    g = forked
    with pytest.raises(errors.NoChanges):
        g.merges.merge("repo", "dev", "main", "u")  # dev holds nothing main lacks
    empty = g.merges.merge("repo", "dev", "main", "u", allow_empty=True)
    assert empty.meta_range_id == g.commits.get_commit("repo", "main~1").meta_range_id
    put_files(g, "dev", a=b"a1")
    g.commits.commit("repo", "dev", "u", "dev work")
    put_files(g, "main", z=b"dirty")
    with pytest.raises(errors.DirtyBranch):
        g.merges.merge("repo", "dev", "main", "u")
    g.rewrites.reset_branch("repo", "main")
    with pytest.raises(errors.Invalid, match="strategy"):
        g.merges.merge("repo", "dev", "main", "u", strategy="theirs")
    with pytest.raises(errors.Invalid, match="strategy"):
        g.merges.merge("repo", "dev", "main", "u", path_strategies=[("x/**", "mine")])
    with pytest.raises(errors.BranchNotFound):
        g.merges.merge("repo", "dev", "nope", "u")
    with pytest.raises(errors.RefNotFound):
        g.merges.merge("repo", "nope", "main", "u")


def test_staged_entries_that_change_nothing_do_not_survive_a_merge(forked):
    g = forked
    put_files(g, "main", a=b"a0")  # the committed content again: not an uncommitted change
    put_files(g, "dev", a=b"a1")
    g.commits.commit("repo", "dev", "u", "dev work")
    assert g.history.diff_uncommitted("repo", "main").results == []
    g.merges.merge("repo", "dev", "main", "u")
    # Kept staged, the old content would now undo the merged change.
    assert _tree(g, "main")["a"] == b"a1" and g.history.diff_uncommitted("repo", "main").results == []
    # A write racing the merge lands in the fresh staging token and stays.
    put_files(g, "main", z=b"after")
    assert [d.key for d in g.history.diff_uncommitted("repo", "main").results] == ["z"]


def test_a_source_that_only_rewrote_the_base_content_still_merges_as_in_lakefs(forked):
    g = forked
    put_files(g, "dev", a=b"a1")
    g.commits.commit("repo", "dev", "u", "change")
    put_files(g, "dev", a=b"a0")
    back = g.commits.commit("repo", "dev", "u", "and back")  # same bytes as the base, new addresses: another metarange
    put_files(g, "main", b=b"b1")
    g.commits.commit("repo", "main", "u", "main work")
    merged = g.merges.merge("repo", "dev", "main", "u")
    assert merged.parents[1] == back.id
    assert _tree(g, "main") == {"a": b"a0", "b": b"b1", "c": b"c0", "d": b"d0"}


def test_unrelated_histories_cannot_merge(g, repo):
    put_files(g, "main", a=b"1")
    g.commits.commit("repo", "main", "u", "one")
    # A commit of another lineage inside the same repository: an orphan branch made by hand.
    orphan = new_commit("", "orphan", "", 1, {}, (), 1)
    g.ports.refs.add_commit(repo.id, orphan)
    g.ports.refs.create_branch(repo.id, Branch("orphan", orphan.id, "token-orphan"))
    with pytest.raises(errors.Invalid, match="no common ancestor"):
        g.merges.merge("repo", "orphan", "main", "u")


def _conflicting(g):
    put_files(g, "dev", a=b"a-dev", b=None, c=b"c-dev", e=b"e-dev")
    g.commits.commit("repo", "dev", "u", "dev work")
    put_files(g, "main", a=b"a-main", b=b"b-main", c=None, e=b"e-main", d=b"d-main")
    g.commits.commit("repo", "main", "u", "main work")


def test_conflicts_are_all_listed_with_what_each_side_did(forked):
    g = forked
    _conflicting(g)
    before = g.branches.get_branch("repo", "main")
    with pytest.raises(MergeConflicts) as caught:
        g.merges.merge("repo", "dev", "main", "u")
    found = [(c.key, c.source, c.destination, c.resolution) for c in caught.value.conflicts]
    assert found == [
        ("a", Action.CHANGED, Action.CHANGED, None),
        ("b", Action.DELETED, Action.CHANGED, None),
        ("c", Action.CHANGED, Action.DELETED, None),
        ("e", Action.ADDED, Action.ADDED, None),
    ]
    assert g.branches.get_branch("repo", "main") == before  # nothing moved


@pytest.mark.parametrize(
    ("strategy", "expected"),
    [
        ("source-wins", {"a": b"a-dev", "c": b"c-dev", "d": b"d-main", "e": b"e-dev"}),
        ("dest-wins", {"a": b"a-main", "b": b"b-main", "d": b"d-main", "e": b"e-main"}),
    ],
)
def test_strategies_settle_every_conflict(forked, strategy, expected):
    g = forked
    _conflicting(g)
    merged = g.merges.merge("repo", "dev", "main", "u", strategy=strategy)
    assert _tree(g, "main") == expected
    assert merged.metadata[".lakefs.merge.strategy"] == strategy


def test_path_strategies_come_first_and_are_recorded(forked):
    g = forked
    _conflicting(g)
    rules = [("a", "dest-wins"), ("[bc]", "source-wins"), ("e", "fail")]
    with pytest.raises(MergeConflicts) as caught:
        g.merges.merge("repo", "dev", "main", "u", strategy="source-wins", path_strategies=rules)
    assert [(c.key, c.resolution) for c in caught.value.conflicts] == [
        ("a", Decision.TAKE_DEST),
        ("b", Decision.TAKE_SOURCE),
        ("c", Decision.TAKE_SOURCE),
        ("e", None),
    ]
    assert [c.key for c in caught.value.unresolved] == ["e"]

    merged = g.merges.merge("repo", "dev", "main", "u", strategy="source-wins", path_strategies=rules[:2])
    assert _tree(g, "main") == {"a": b"a-main", "c": b"c-dev", "d": b"d-main", "e": b"e-dev"}
    assert json.loads(merged.metadata[".lakelet.merge.path_strategies"]) == [
        {"path": "a", "strategy": "dest-wins"},
        {"path": "[bc]", "strategy": "source-wins"},
    ]
    assert merged.metadata[".lakefs.merge.strategy"] == "source-wins"


def test_squash_merge_has_one_parent(forked):
    g = forked
    put_files(g, "dev", a=b"a1")
    g.commits.commit("repo", "dev", "u", "dev work")
    head = g.commits.get_commit("repo", "main")
    merged = g.merges.merge("repo", "dev", "main", "u", message="squashed", squash_merge=True)
    assert merged.parents == (head.id,) and merged.generation == head.generation + 1
    assert merged.message == "squashed"
    # Not an ancestor any more: merging again finds the same changes to bring (identical now, so no conflict).
    put_files(g, "dev", b=b"b1")
    g.commits.commit("repo", "dev", "u", "more")
    g.merges.merge("repo", "dev", "main", "u")
    assert _tree(g, "main")["a"] == b"a1" and _tree(g, "main")["b"] == b"b1"


def test_read_only_repository_needs_force(g):
    repo = g.repositories.create_repository("rdonly", "s3://bucket/rdonly")
    g.objects.upload_object("rdonly", "main", "a", b"1")
    g.commits.commit("rdonly", "main", "u", "one")
    g.branches.create_branch("rdonly", "dev", "main")
    g.objects.upload_object("rdonly", "dev", "a", b"2")
    g.commits.commit("rdonly", "dev", "u", "two")
    g.ports.refs._repos[repo.id] = dataclasses.replace(repo, read_only=True)  # the API offers no way to flip it
    with pytest.raises(errors.ReadOnlyRepository):
        g.merges.merge("rdonly", "dev", "main", "u")
    g.merges.merge("rdonly", "dev", "main", "u", force=True)


def test_a_merge_that_loses_the_race_is_redone_on_the_new_head(forked, monkeypatch):
    g = forked
    put_files(g, "dev", a=b"a1")
    g.commits.commit("repo", "dev", "u", "dev work")
    real_set = g.ports.refs.set_branch
    raced = []

    def racing_set(repo_id, branch, expected):
        if not raced and branch.id == "main":
            raced.append(True)
            # Another writer commits on main between the merge's read and its compare-and-swap.
            g.ports.refs.set_branch = real_set
            put_files(g, "main", z=b"z1")
            g.commits.commit("repo", "main", "u", "concurrent")
            g.ports.refs.set_branch = racing_set
        return real_set(repo_id, branch, expected)

    monkeypatch.setattr(g.ports.refs, "set_branch", racing_set)
    merged = g.merges.merge("repo", "dev", "main", "u")
    assert raced and g.commits.get_commit("repo", merged.parents[0]).message == "concurrent"
    assert _tree(g, "main")["z"] == b"z1" and _tree(g, "main")["a"] == b"a1"


def test_preview_lists_changes_and_conflicts_without_writing(forked):
    g = forked
    _conflicting(g)
    put_files(g, "dev", f=b"f-dev")
    g.commits.commit("repo", "dev", "u", "more dev")
    before = g.branches.get_branch("repo", "main")
    blocks_before = set(g.ports.blocks.blobs)

    preview = g.history.preview_merge("repo", "dev", "main")
    rows = [(c.key, c.type, c.conflict and c.conflict.resolution) for c in preview.page.results]
    assert rows == [
        ("a", DiffType.CONFLICT, None),
        ("b", DiffType.CONFLICT, None),
        ("c", DiffType.CONFLICT, None),
        ("e", DiffType.CONFLICT, None),
        ("f", DiffType.ADDED, None),
    ]
    assert (preview.summary.added, preview.summary.conflicts, preview.summary.unresolved) == (1, 4, 4)
    assert preview.base.id == g.commits.get_commit("repo", "main~1").id
    assert g.branches.get_branch("repo", "main") == before
    assert set(g.ports.blocks.blobs) == blocks_before

    settled = g.history.preview_merge("repo", "dev", "main", strategy="dest-wins", amount=2, after="a")
    assert [c.key for c in settled.page.results] == ["b", "c"] and settled.page.has_more
    assert settled.summary.unresolved == 0
    only = g.history.preview_merge("repo", "dev", "main", only_conflicts=True)
    assert [c.key for c in only.page.results] == ["a", "b", "c", "e"]


def test_diff_refs_three_dot_and_two_dot(forked):
    g = forked
    put_files(g, "dev", a=b"a1", b=None, x__y=b"xy")
    g.commits.commit("repo", "dev", "u", "dev work")
    put_files(g, "main", c=b"c2", a=b"a2")
    g.commits.commit("repo", "main", "u", "main work")
    put_files(g, "dev", q=b"staged, not part of any diff between refs")

    three = g.history.diff_refs("repo", "main", "dev")
    assert [(d.key, d.type) for d in three.results] == [
        ("a", DiffType.CONFLICT),
        ("b", DiffType.REMOVED),
        ("x/y", DiffType.ADDED),
    ]
    two = g.history.diff_refs("repo", "main", "dev", diff_type="two_dot")
    assert [(d.key, d.type) for d in two.results] == [
        ("a", DiffType.CHANGED),
        ("b", DiffType.REMOVED),
        ("c", DiffType.CHANGED),
        ("x/y", DiffType.ADDED),
    ]
    folded = g.history.diff_refs("repo", "main", "dev", delimiter="/")
    assert [(d.key, d.type) for d in folded.results][-1] == ("x/", DiffType.PREFIX_CHANGED)
    paged = g.history.diff_refs("repo", "main", "dev", diff_type="two_dot", after="a", amount=2)
    assert [d.key for d in paged.results] == ["b", "c"] and paged.has_more and paged.next_offset == "c"
    assert [d.key for d in g.history.diff_refs("repo", "main", "dev", prefix="x/").results] == ["x/y"]
    assert g.history.diff_refs("repo", "dev", "dev").results == []
    with pytest.raises(errors.Invalid):
        g.history.diff_refs("repo", "main", "dev", diff_type="one_dot")


def test_find_merge_base(forked):
    g = forked
    fork = g.commits.get_commit("repo", "main")
    put_files(g, "dev", a=b"a1")
    g.commits.commit("repo", "dev", "u", "dev work")
    source, dest, base = g.history.find_merge_base("repo", "dev", "main")
    assert (source.id, dest.id, base.id) == (g.commits.get_commit("repo", "dev").id, fork.id, fork.id)
