import hashlib

import pytest

from chalicelib.graveler import errors
from chalicelib.graveler.records import DiffType, RefKind


def _keys(page):
    return [o.key for o in page.results]


def _read(g, ref, path):
    return g.objects.read_object("repo", g.objects.stat_object("repo", ref, path))


def test_create_repository_writes_the_initial_commit_and_default_branch(g, repo):
    assert repo.default_branch_id == "main" and repo.storage_namespace == "s3://bucket/repo"
    branch = g.branches.get_branch("repo", "main")
    initial = g.commits.get_commit("repo", "main")
    assert initial.id == branch.commit_id
    assert initial.message == "Repository created" and initial.committer == ""
    assert initial.parents == () and initial.generation == 1 and initial.meta_range_id == ""
    assert _keys(g.objects.list_objects("repo", "main")) == []


def test_create_repository_refusals(g, repo):
    with pytest.raises(errors.RepositoryExists):
        g.repositories.create_repository("repo", "s3://bucket/other")
    with pytest.raises(errors.Invalid):  # the namespace already holds a repository's data
        g.repositories.create_repository("repo2", "s3://bucket/repo")
    with pytest.raises(errors.InvalidName):
        g.repositories.create_repository("Bad_Name", "s3://bucket/x")
    with pytest.raises(errors.InvalidName):
        g.repositories.create_repository("good", "s3://bucket/y", default_branch="bad/branch")
    with pytest.raises(errors.Invalid):
        g.repositories.create_repository("good", "not-a-namespace")
    assert [r.id for r in g.repositories.list_repositories().results] == ["repo"]


def test_upload_commit_and_read_older_versions(g, repo):
    g.objects.upload_object("repo", "main", "a.txt", b"v1")
    first = g.commits.commit("repo", "main", "alice", "first", metadata={"k": "v"})
    assert first.parents == (g.commits.get_commit("repo", "main~1").id,) and first.generation == 2
    assert first.metadata == {"k": "v"} and first.committer == "alice"
    g.branches.create_tag("repo", "v1", "main")
    g.objects.upload_object("repo", "main", "a.txt", b"v2")
    assert _read(g, "main", "a.txt") == b"v2"  # staged wins
    assert _read(g, "main@", "a.txt") == b"v1"  # committed view
    g.commits.commit("repo", "main", "alice", "second")
    assert _read(g, "main", "a.txt") == b"v2"
    assert _read(g, "main~1", "a.txt") == b"v1"
    assert _read(g, "v1", "a.txt") == b"v1"
    assert _read(g, first.id[:12], "a.txt") == b"v1"
    assert [c.message for c in g.history.log("repo", "main").results] == ["second", "first", "Repository created"]


def test_commit_without_changes(g, repo):
    with pytest.raises(errors.NoChanges):
        g.commits.commit("repo", "main", "u", "nothing")
    empty = g.commits.commit("repo", "main", "u", "empty", allow_empty=True)
    assert g.commits.get_commit("repo", "main").id == empty.id
    with pytest.raises(errors.Invalid):
        g.commits.commit("repo", "main", "u", "")


def test_commit_date_is_taken_from_the_request(g, repo):
    g.objects.upload_object("repo", "main", "x", b"x")
    commit = g.commits.commit("repo", "main", "u", "dated", date=1_000_000)
    assert commit.creation_date == 1_000_000


def test_delete_hides_committed_and_is_a_noop_for_missing(g, repo):
    g.objects.upload_object("repo", "main", "a", b"a")
    g.objects.upload_object("repo", "main", "b", b"b")
    g.commits.commit("repo", "main", "u", "c1")
    g.objects.delete_object("repo", "main", "a")
    g.objects.delete_object("repo", "main", "never-existed")
    assert _keys(g.objects.list_objects("repo", "main")) == ["b"]
    assert _keys(g.objects.list_objects("repo", "main@")) == ["a", "b"]
    with pytest.raises(errors.ObjectNotFound):
        g.objects.stat_object("repo", "main", "a")
    diff = g.history.diff_uncommitted("repo", "main").results
    assert [(d.key, d.type) for d in diff] == [("a", DiffType.REMOVED)]
    g.commits.commit("repo", "main", "u", "c2")
    assert _keys(g.objects.list_objects("repo", "main")) == ["b"]
    assert g.history.diff_uncommitted("repo", "main").results == []


def test_delete_of_a_staged_only_object(g, repo):
    g.objects.upload_object("repo", "main", "tmp", b"t")
    g.objects.delete_object("repo", "main", "tmp")
    assert _keys(g.objects.list_objects("repo", "main")) == []
    assert g.history.diff_uncommitted("repo", "main").results == []
    with pytest.raises(errors.NoChanges):
        g.commits.commit("repo", "main", "u", "nothing left")


def test_diff_uncommitted_kinds(g, repo):
    g.objects.upload_object("repo", "main", "same", b"same")
    g.objects.upload_object("repo", "main", "changed", b"old")
    g.objects.upload_object("repo", "main", "removed", b"r")
    g.commits.commit("repo", "main", "u", "base")
    g.objects.upload_object("repo", "main", "same", b"same")  # same identity, new address: not a change
    g.objects.upload_object("repo", "main", "changed", b"new")
    g.objects.delete_object("repo", "main", "removed")
    g.objects.upload_object("repo", "main", "dir/added", b"a")
    page = g.history.diff_uncommitted("repo", "main")
    assert [(d.key, d.type) for d in page.results] == [
        ("changed", DiffType.CHANGED),
        ("dir/added", DiffType.ADDED),
        ("removed", DiffType.REMOVED),
    ]
    page = g.history.diff_uncommitted("repo", "main", delimiter="/")
    assert ("dir/", DiffType.PREFIX_CHANGED) in [(d.key, d.type) for d in page.results]


def test_if_absent_upload(g, repo):
    g.objects.upload_object("repo", "main", "a", b"1", if_absent=True)
    with pytest.raises(errors.PreconditionFailed):
        g.objects.upload_object("repo", "main", "a", b"2", if_absent=True)
    g.commits.commit("repo", "main", "u", "c")
    with pytest.raises(errors.PreconditionFailed):
        g.objects.upload_object("repo", "main", "a", b"2", if_absent=True)
    assert _read(g, "main", "a") == b"1"


def test_uploads_get_unique_addresses_under_data(g, repo):
    e1 = g.objects.upload_object("repo", "main", "a", b"same", content_type="text/plain", user_metadata={"m": "1"})
    e2 = g.objects.upload_object("repo", "main", "b", b"same")
    assert e1.physical_address != e2.physical_address
    assert e1.physical_address.startswith("s3://bucket/repo/data/")
    assert e1.size == 4 and e1.etag == hashlib.md5(b"same").hexdigest()
    stat = g.objects.stat_object("repo", "main", "a")
    assert stat.content_type == "text/plain" and stat.user_metadata == {"m": "1"}


def test_branches(g, repo):
    g.objects.upload_object("repo", "main", "a", b"1")
    c1 = g.commits.commit("repo", "main", "u", "c1")
    g.objects.upload_object("repo", "main", "a", b"2")
    g.commits.commit("repo", "main", "u", "c2")
    old = g.branches.create_branch("repo", "old", "main~1")
    assert old.commit_id == c1.id
    assert _read(g, "old", "a") == b"1"
    g.objects.upload_object("repo", "old", "b", b"only on old")
    assert _keys(g.objects.list_objects("repo", "main")) == ["a"]
    with pytest.raises(errors.BranchExists):
        g.branches.create_branch("repo", "old", "main")
    with pytest.raises(errors.RefNotFound):
        g.branches.create_branch("repo", "x", "nope")
    with pytest.raises(errors.Forbidden):
        g.branches.delete_branch("repo", "main")
    assert [b.id for b in g.branches.list_branches("repo").results] == ["main", "old"]
    token = g.branches.get_branch("repo", "old").staging_token
    g.branches.delete_branch("repo", "old")
    assert list(g.ports.staging.iterate(token)) == []
    with pytest.raises(errors.BranchNotFound):
        g.branches.get_branch("repo", "old")


def test_tags_are_immutable(g, repo):
    tag = g.branches.create_tag("repo", "v1", "main")
    assert g.commits.resolve("repo", "v1").kind is RefKind.TAG
    with pytest.raises(errors.TagExists):
        g.branches.create_tag("repo", "v1", "main")
    with pytest.raises(errors.InvalidName):
        g.branches.create_tag("repo", "bad..tag", "main")
    assert [t.id for t in g.branches.list_tags("repo").results] == ["v1"] and tag.commit_id
    g.branches.delete_tag("repo", "v1")
    with pytest.raises(errors.TagNotFound):
        g.branches.get_tag("repo", "v1")


def test_list_pages_with_prefix(g, repo):
    for name in ["a", "b1", "b2", "b3", "c"]:
        g.branches.create_branch("repo", name, "main")
    page = g.branches.list_branches("repo", prefix="b", amount=2)
    assert [b.id for b in page.results] == ["b1", "b2"] and page.has_more and page.next_offset == "b2"
    page = g.branches.list_branches("repo", prefix="b", after="b2", amount=2)
    assert [b.id for b in page.results] == ["b3"] and not page.has_more
    assert [b.id for b in g.branches.list_branches("repo", prefix="main").results] == ["main"]


def test_log_pagination(g, repo):
    for i in range(5):
        g.objects.upload_object("repo", "main", "f", str(i).encode())
        g.commits.commit("repo", "main", "u", f"c{i}")
    first = g.history.log("repo", "main", amount=2)
    assert [c.message for c in first.results] == ["c4", "c3"] and first.has_more
    second = g.history.log("repo", "main", after=first.next_offset, amount=2)
    assert [c.message for c in second.results] == ["c2", "c1"]
    last = g.history.log("repo", "main", after=second.next_offset, amount=2)
    assert [c.message for c in last.results] == ["c0", "Repository created"] and not last.has_more


def test_listing_merges_staged_and_committed(g, repo):
    for key in ["d/1", "d/2", "e"]:
        g.objects.upload_object("repo", "main", key, b"x")
    g.commits.commit("repo", "main", "u", "c")
    g.objects.upload_object("repo", "main", "d/0", b"x")
    g.objects.delete_object("repo", "main", "d/2")
    assert _keys(g.objects.list_objects("repo", "main")) == ["d/0", "d/1", "e"]
    assert _keys(g.objects.list_objects("repo", "main", delimiter="/")) == ["d/", "e"]
    assert _keys(g.objects.list_objects("repo", "main", prefix="d/", after="d/0")) == ["d/1"]


def test_read_only_repository_refuses_writes(g):
    g.repositories.create_repository("rorepo", "s3://bucket/ro", read_only=True)
    with pytest.raises(errors.ReadOnlyRepository):
        g.objects.upload_object("rorepo", "main", "a", b"1")
    with pytest.raises(errors.ReadOnlyRepository):
        g.commits.commit("rorepo", "main", "u", "m", allow_empty=True)


def test_gone_when_the_data_was_collected(g, repo):
    entry = g.objects.upload_object("repo", "main", "a", b"1")
    g.ports.blocks.delete(entry.physical_address)
    with pytest.raises(errors.Gone):
        g.objects.read_object("repo", g.objects.stat_object("repo", "main", "a"))


def test_delete_repository(g, repo):
    g.objects.upload_object("repo", "main", "a", b"1")
    g.repositories.delete_repository("repo")
    with pytest.raises(errors.RepositoryNotFound):
        g.repositories.get_repository("repo")
    with pytest.raises(errors.RepositoryNotFound):
        g.objects.list_objects("repo", "main")


def test_copy_is_shallow_and_link_refuses_foreign_addresses(g, repo):
    source = g.objects.upload_object("repo", "main", "a", b"data", content_type="text/plain", user_metadata={"k": "v"})
    g.commits.commit("repo", "main", "u", "c")
    g.branches.create_branch("repo", "dev", "main")
    copied = g.objects.copy_object("repo", "main", "a", "dev", "b/copy")
    assert copied.physical_address == source.physical_address
    assert (copied.size, copied.etag, copied.content_type, copied.user_metadata) == (
        4,
        source.etag,
        "text/plain",
        {"k": "v"},
    )
    assert _read(g, "dev", "b/copy") == b"data"
    with pytest.raises(errors.PreconditionFailed):
        g.objects.copy_object("repo", "main", "a", "dev", "b/copy", if_absent=True)
    with pytest.raises(errors.ObjectNotFound):
        g.objects.copy_object("repo", "main", "missing", "dev", "x")
    g.repositories.create_repository("other", "s3://bucket/other")
    with pytest.raises(errors.Invalid):
        g.objects.link_object("other", "main", "x", source)
    address = g.objects.new_physical_address("repo")
    assert address.startswith("s3://bucket/repo/data/") and address != source.physical_address
