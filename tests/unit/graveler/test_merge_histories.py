"""Property: random histories on two branches, merged through the service, against a brute-force model.

A history is a random sequence of writes, deletes, commits and syncs (merging main into dev, settled by a
random strategy) on the branches main and dev. The model keeps every commit's tree and parents, finds the best
common ancestor by brute force over the ancestor sets, and merges key by key with the table. The merge of dev
into main must give the model's tree, or fail with exactly the model's conflicts; its preview must list the
same conflicts and exactly the keys the merge changes in main.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from chalicelib.graveler import errors
from chalicelib.graveler.committed.mergetable import Decision
from chalicelib.graveler.errors import MergeConflicts
from chalicelib.graveler.merge.policy import tree_id
from chalicelib.graveler.records import DiffType
from chalicelib.wiring import memory_services

KEYS = ["a", "b", "d/1", "d/2", "f/x/1"]
CONTENTS = [b"one", b"two", b"three"]
BRANCHES = ["main", "dev"]

# Writes are the common case; syncs are rare so that both branches drift apart between them.
operation = st.tuples(
    st.sampled_from(["put"] * 5 + ["delete"] * 2 + ["commit"] * 2 + ["sync"]),
    st.sampled_from(BRANCHES),
    st.sampled_from(KEYS),
    st.sampled_from(CONTENTS),
    st.sampled_from(["source-wins", "dest-wins"]),
)
operations = st.lists(operation, min_size=3, max_size=40)


class Model:
    """Trees of commits (key -> content) and the commit graph, kept beside the service."""

    def __init__(self) -> None:
        self.trees: dict[str, dict[str, bytes]] = {}
        self.parents: dict[str, tuple[str, ...]] = {}
        self.heads: dict[str, str] = {}
        # Uncommitted changes per branch; a commit that changes nothing leaves them staged (sealed).
        self.staged: dict[str, dict[str, bytes | None]] = {b: {} for b in BRANCHES}

    def record(self, commit_id: str, parents: tuple[str, ...], tree: dict[str, bytes], branch: str = "") -> None:
        self.trees[commit_id] = dict(tree)
        self.parents[commit_id] = parents
        if branch:
            self.heads[branch] = commit_id

    def delete(self, branch: str, key: str) -> None:
        """Deleting what exists nowhere on the branch changes nothing and stages nothing."""
        staged = self.staged[branch]
        if (staged[key] is not None) if key in staged else key in self.trees[self.heads[branch]]:
            staged[key] = None

    def ancestors(self, commit_id: str) -> set[str]:
        seen, todo = set(), [commit_id]
        while todo:
            c = todo.pop()
            if c not in seen:
                seen.add(c)
                todo.extend(self.parents[c])
        return seen

    def best_common_ancestor(self, left: str, right: str) -> str:
        common = self.ancestors(left) & self.ancestors(right)
        best = [c for c in common if not any(c != o and c in self.ancestors(o) for o in common)]
        assert len(best) == 1, "histories here never criss-cross"
        return best[0]


def merge_model(base, source, dest, strategy=None):
    """The table key by key, on contents (equal content is equal identity here): (tree, conflicting keys)."""
    merged, conflicts = {}, []
    for key in sorted(set(base) | set(source) | set(dest)):
        b, s, d = base.get(key), source.get(key), dest.get(key)
        if s == d or d == b:
            value = s
        elif s == b:
            value = d
        elif strategy == "source-wins":
            value = s
        elif strategy == "dest-wins":
            value = d
        else:
            conflicts.append(key)
            continue
        if value is not None:
            merged[key] = value
    return merged, conflicts


def _tree(g, ref: str) -> dict[str, bytes]:
    return {
        i.key: g.objects.read_object("repo", i.entry) for i in g.objects.list_objects("repo", ref, amount=1000).results
    }


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=operations, final_strategy=st.sampled_from([None, None, "source-wins", "dest-wins"]))
# Found by this test: deleting a key that exists nowhere on dev stages nothing, so main's "a" merged into dev
# later is not deleted by dev's next commit.
@example(
    ops=[("put", "main", "a", b"one", "")]
    + [("delete", "dev", "a", b"", ""), ("sync", "", "", b"", "dest-wins"), ("put", "dev", "b", b"one", "")],
    final_strategy=None,
)
def test_random_histories_merge_like_the_model(ops, final_strategy):
    g = memory_services(sleep=lambda seconds: None).engine
    g.repositories.create_repository("repo", "s3://bucket/repo")
    model = Model()
    root = g.commits.get_commit("repo", "main")
    model.record(root.id, (), {})
    model.heads = {"main": root.id, "dev": root.id}
    g.branches.create_branch("repo", "dev", "main")

    def commit(branch: str) -> None:
        try:
            made = g.commits.commit("repo", branch, "u", f"on {branch}")
        except errors.NoChanges:
            return
        tree = dict(model.trees[made.parents[0]])
        for key, value in model.staged[branch].items():
            if value is None:
                tree.pop(key, None)
            else:
                tree[key] = value
        model.staged[branch] = {}
        model.record(made.id, made.parents, tree, branch)

    for kind, branch, key, data, strategy in ops:
        if kind == "put":
            g.objects.upload_object("repo", branch, key, data)
            model.staged[branch][key] = data
        elif kind == "delete":
            g.objects.delete_object("repo", branch, key)
            model.delete(branch, key)
        elif kind == "commit":
            commit(branch)
        else:  # sync: main into dev, settled by the strategy
            commit("dev")
            commit("main")
            try:
                made = g.merges.merge("repo", "main", "dev", "u", strategy=strategy)
            except errors.NoChanges:
                continue
            base = model.best_common_ancestor(made.parents[0], made.parents[1])
            tree, conflicts = merge_model(
                model.trees[base], model.trees[made.parents[1]], model.trees[made.parents[0]], strategy
            )
            assert conflicts == []
            model.record(made.id, made.parents, tree, "dev")
            # Whatever dev still had staged changed nothing (the merge refuses real changes); the merge drops it.
            model.staged["dev"] = {}
            assert _tree(g, "dev") == tree
    commit("main")
    commit("dev")

    main, dev = g.commits.get_commit("repo", "main"), g.commits.get_commit("repo", "dev")
    base_id = model.best_common_ancestor(dev.id, main.id)
    assert g.history.find_merge_base("repo", "dev", "main")[2].id == base_id
    expected, conflicts = merge_model(model.trees[base_id], model.trees[dev.id], model.trees[main.id], final_strategy)

    preview = g.history.preview_merge("repo", "dev", "main", strategy=final_strategy, amount=1000)
    listed_conflicts = [c.key for c in preview.page.results if c.type is DiffType.CONFLICT]
    unresolved = [c.key for c in preview.page.results if c.conflict is not None and c.conflict.resolution is None]
    assert unresolved == conflicts
    if final_strategy is None:
        assert listed_conflicts == conflicts

    if tree_id(dev) == tree_id(g.commits.get_commit("repo", base_id)):
        # lakeFS's rule: the same tree by id. The same content under other ids (rewritten bytes) still merges.
        event("dev holds nothing new")
        with pytest.raises(errors.NoChanges):
            g.merges.merge("repo", "dev", "main", "u", strategy=final_strategy)
        return
    if conflicts:
        event("conflicts")
        with pytest.raises(MergeConflicts) as caught:
            g.merges.merge("repo", "dev", "main", "u", strategy=final_strategy)
        assert [c.key for c in caught.value.unresolved] == conflicts
        assert g.commits.get_commit("repo", "main").id == main.id
        return
    event(f"merged, {'with' if preview.summary.conflicts else 'no'} conflicts settled")
    before = model.trees[main.id]
    merged = g.merges.merge("repo", "dev", "main", "u", strategy=final_strategy)
    assert merged.parents == (main.id, dev.id)
    assert _tree(g, "main") == expected
    changed = sorted(k for k in set(before) | set(expected) if before.get(k) != expected.get(k))
    # A conflict settled for the source changes main (the sides differ); one settled for main does not.
    previewed = [
        c.key for c in preview.page.results if c.conflict is None or c.conflict.resolution is Decision.TAKE_SOURCE
    ]
    assert previewed == changed
