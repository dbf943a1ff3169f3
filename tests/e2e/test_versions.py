"""Version control through the official lakeFS client: commits, branches, history by ref expression, tags, diffs."""

from __future__ import annotations

import lakefs
import pytest
from lakefs.client import Client
from lakefs.exceptions import BadRequestException, ConflictException, NotFoundException

pytestmark = pytest.mark.e2e


def _read(ref: lakefs.Reference, path: str) -> str:
    with ref.object(path).reader(mode="r") as reader:
        return reader.read()


def test_repository_is_created_where_the_server_says(repo: lakefs.Repository, client: Client) -> None:
    properties = repo.properties
    assert properties.default_branch == "main"
    assert properties.storage_namespace.startswith(client.storage_config.default_namespace_prefix.rstrip("/"))
    assert repo.id in [r.id for r in lakefs.repositories(client=client)]
    initial = list(repo.branch("main").log())
    assert [c.message for c in initial] == ["Repository created"]


def test_commit_branch_and_read_older_versions(repo: lakefs.Repository) -> None:
    main = repo.branch("main")
    main.object("config.json").upload('{"version": 1}')
    main.object("data/part-0").upload("rows 0-99")
    first = main.commit(message="first", metadata={"job": "ingest", "run": "1"})
    main.object("config.json").upload('{"version": 2}')
    second = main.commit(message="second")

    assert first.get_commit().metadata == {"job": "ingest", "run": "1"}
    assert second.get_commit().parents == [first.id]
    assert [c.message for c in main.log()] == ["second", "first", "Repository created"]

    # Older versions: by ref expression, by commit ID, and by tag.
    assert _read(repo.ref("main~1"), "config.json") == '{"version": 1}'
    assert _read(repo.commit(first.id), "config.json") == '{"version": 1}'
    assert _read(repo.ref(first.id[:12]), "config.json") == '{"version": 1}'  # a unique commit-ID prefix
    assert _read(repo.ref("main^1"), "config.json") == '{"version": 1}'
    assert _read(repo.ref("main"), "config.json") == '{"version": 2}'
    tag = repo.tag("v1").create("main~1")
    assert tag.get_commit().id == first.id
    assert _read(repo.tag("v1"), "config.json") == '{"version": 1}'
    assert "v1" in [t.id for t in repo.tags()]
    with pytest.raises(ConflictException):
        repo.tag("v1").create("main")

    # A branch starts at its source and then moves on its own.
    feature = repo.branch("feature").create(source_reference="main")
    assert feature.get_commit().id == second.id
    feature.object("config.json").upload('{"version": "feature"}')
    feature.object("data/part-1").upload("rows 100-199")
    feature.commit(message="on feature")
    assert _read(feature, "config.json") == '{"version": "feature"}'
    assert _read(main, "config.json") == '{"version": 2}'
    assert not main.object("data/part-1").exists()
    assert {b.id for b in repo.branches()} == {"main", "feature"}
    assert [c.message for c in feature.log(max_amount=2)] == ["on feature", "second"]


def test_uncommitted_changes(repo: lakefs.Repository) -> None:
    main = repo.branch("main")
    main.object("keep.txt").upload("same")
    main.object("edit.txt").upload("before")
    main.object("drop.txt").upload("doomed")
    main.commit(message="base")
    assert list(main.uncommitted()) == []

    main.object("edit.txt").upload("after")
    main.object("drop.txt").delete()
    main.object("new/one.txt").upload("hello")
    main.object("keep.txt").upload("same")  # identical content: not a change

    changes = {c.path: c.type for c in main.uncommitted()}
    assert changes == {"edit.txt": "changed", "drop.txt": "removed", "new/one.txt": "added"}
    assert [c.path for c in main.uncommitted(prefix="new/")] == ["new/one.txt"]

    main.commit(message="apply changes")
    assert list(main.uncommitted()) == []
    assert _read(repo.ref("main~1"), "edit.txt") == "before"


def test_commit_without_changes_is_refused(repo: lakefs.Repository) -> None:
    with pytest.raises(BadRequestException):
        repo.branch("main").commit(message="nothing to see")


def test_missing_refs_are_not_found(repo: lakefs.Repository) -> None:
    with pytest.raises(NotFoundException):
        repo.ref("no-such-branch").get_commit()
    with pytest.raises(NotFoundException):
        repo.branch("new").create(source_reference="no-such-branch")
