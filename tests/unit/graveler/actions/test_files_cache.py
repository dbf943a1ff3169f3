"""The action files every guarded operation looks up: a commit's are remembered by immutable ids (its metarange
and the files' addresses), a branch's staged ones are read every time."""

from __future__ import annotations

from typing import Any

import pytest

from chalicelib.graveler.actions import ActionFilesCache
from chalicelib.graveler.records import Entry


def action(name: str) -> bytes:
    """A valid action that no commit runs (it is for merges)."""
    hook = f"  - id: hook_{name}\n    type: webhook\n    properties:\n      url: http://x\n"
    return f"name: {name}\non:\n  pre-merge:\nhooks:\n{hook}".encode()


ACTION = action("a")
ONE, TWO, THREE = action("one"), action("two"), action("three")


class Reads:
    """Counts the block store's reads, split into committed metadata (_lakefs/) and everything else."""

    def __init__(self, g: Any, monkeypatch: pytest.MonkeyPatch) -> None:
        self.metadata: list[str] = []
        self.data: list[str] = []
        get = g.ports.blocks.get

        def counted(address: str, start: int | None = None, end: int | None = None) -> bytes:
            (self.metadata if "/_lakefs/" in address else self.data).append(address)
            return get(address, start, end)

        monkeypatch.setattr(g.ports.blocks, "get", counted)

    def clear(self) -> None:
        self.metadata.clear()
        self.data.clear()


def new_container(g: Any) -> None:
    """Forgets what the commit's own post-commit lookup and range writes left in memory."""
    g.ports.committed.storage.clear_cache()
    g.ports.action_files_cache.clear()


def test_an_action_file_staged_on_a_branch_counts_at_once(g: Any, repo: Any) -> None:
    g.objects.upload_object("repo", "main", "data/x", b"x")
    g.commits.commit("repo", "main", "u", "data")
    assert g.actions.action_files("repo", "main") == []  # "none" is now remembered for main's commit
    g.objects.upload_object("repo", "main", "_lakefs_actions/a.yaml", ACTION)
    assert g.actions.action_files("repo", "main") == [("_lakefs_actions/a.yaml", ACTION)]
    with_action = g.commits.commit("repo", "main", "u", "add an action")
    g.objects.delete_object("repo", "main", "_lakefs_actions/a.yaml")
    # Staged deletion: gone from the branch at once, still in the commit (another metarange, another entry).
    assert g.actions.action_files("repo", "main") == []
    assert g.actions.action_files("repo", with_action.id) == [("_lakefs_actions/a.yaml", ACTION)]
    branch = g.branches.get_branch("repo", "main")
    assert g.actions.action_files("repo", "main", branch) == []


def test_only_direct_children_count_and_a_staged_file_replaces_the_committed_one(g: Any, repo: Any) -> None:
    g.objects.upload_object("repo", "main", "_lakefs_actions/a.yaml", ONE)
    g.objects.upload_object("repo", "main", "_lakefs_actions/sub/b.yaml", b"nested: not an action, never read")
    g.objects.upload_object("repo", "main", "_lakefs_actionsX", b"not under the prefix")
    g.commits.commit("repo", "main", "u", "c")
    g.objects.upload_object("repo", "main", "_lakefs_actions/a.yaml", TWO)
    g.objects.upload_object("repo", "main", "_lakefs_actions/c.yaml", THREE)
    assert g.actions.action_files("repo", "main") == [
        ("_lakefs_actions/a.yaml", TWO),
        ("_lakefs_actions/c.yaml", THREE),
    ]
    assert g.actions.action_files("repo", "main~0") == [("_lakefs_actions/a.yaml", ONE)]


def test_a_commit_s_action_files_are_read_once_per_container(
    g: Any, repo: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    g.objects.upload_object("repo", "main", "_lakefs_actions/a.yaml", ACTION)
    commit = g.commits.commit("repo", "main", "u", "c")
    new_container(g)
    reads = Reads(g, monkeypatch)
    assert g.actions.action_files("repo", commit.id) == [("_lakefs_actions/a.yaml", ACTION)]
    assert reads.metadata and reads.data
    reads.clear()
    for _ in range(3):
        assert g.actions.action_files("repo", commit.id) == [("_lakefs_actions/a.yaml", ACTION)]
    assert (reads.metadata, reads.data) == ([], [])


def test_a_commit_without_action_files_reads_no_range(g: Any, repo: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Lower-case keys sort after the prefix ('_' is below 'a'): the metarange's bounds say that no range can hold
    an action file, so none is read."""
    for path in ("data/b", "zeta/c"):
        g.objects.upload_object("repo", "main", path, b"x")
    commit = g.commits.commit("repo", "main", "u", "c")
    new_container(g)
    reads = Reads(g, monkeypatch)
    assert g.actions.action_files("repo", commit.id) == []
    assert len(reads.metadata) == 1  # the metarange alone
    assert g.actions.action_files("repo", commit.id) == []
    assert len(reads.metadata) == 1


def test_the_cache_is_bounded() -> None:
    cache = ActionFilesCache(max_trees=2, max_entries=10, max_bytes=8)
    entry = Entry("s3://b/ns/data/1", 1, "e", 1)
    loads: list[str] = []

    def tree(mid: str) -> tuple[tuple[str, Entry], ...]:
        loads.append(mid)
        return () if mid == "none" else (("_lakefs_actions/a.yaml", entry),)

    for mid in ("none", "m1", "none", "m2", "none"):
        cache.tree("ns", mid, lambda mid=mid: tree(mid))
    assert loads == ["none", "m1", "m2"]  # "none" is remembered like any other answer
    cache.tree("ns", "m1", lambda: tree("m1"))
    assert loads == ["none", "m1", "m2", "m1"]  # m1 was pushed out by the bound of two
    assert cache.data("s3://b/a", lambda: b"12345") == b"12345"
    assert cache.data("s3://b/b", lambda: b"67890") == b"67890"
    assert cache.data("s3://b/a", lambda: b"reloaded") == b"reloaded"  # 10 bytes > 8: the older one went
