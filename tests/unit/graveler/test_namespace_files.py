"""The facade's storage use cases for code outside graveler (namespace_files.py) and GC's reads
(collection_inputs.py): writes stay inside the namespace they were opened on; the reads see every branch."""

import pytest

from chalicelib.graveler import errors


def test_namespace_files_write_only_inside_their_namespace(g, repo):
    g.repositories.create_repository("other", "s3://bucket/other")
    files = g.repositories.namespace_files(repo.storage_namespace)
    files.put("s3://bucket/repo/_lakefs/note", b"kept")
    assert files.get("s3://bucket/repo/_lakefs/note") == b"kept"
    outside = ["s3://bucket/other/_lakefs/note", "s3://bucket/repository/x", "s3://bucket/repo", "s3://elsewhere/x"]
    for address in outside:
        with pytest.raises(errors.Invalid):
            files.put(address, b"lost")
        with pytest.raises(errors.Invalid):
            files.delete(address)
        with pytest.raises(errors.Invalid):
            files.create_multipart_upload(address)
        with pytest.raises(errors.Invalid):
            files.presign_get(address, 60)
        with pytest.raises(errors.Invalid):
            files.copy("s3://bucket/repo/_lakefs/note", address)
        assert not g.ports.blocks.exists(address)
    with pytest.raises(errors.Invalid):
        list(files.list_blobs("s3://bucket/other/"))
    # Reads are not confined: a copy across repositories reads the source repository's data.
    g.ports.blocks.put("s3://bucket/other/data/x", b"source")
    files.copy("s3://bucket/other/data/x", "s3://bucket/repo/data/y")
    assert files.get("s3://bucket/repo/data/y") == b"source"
    assert [a for a, _ in files.list_blobs("s3://bucket/repo/")] == [
        "s3://bucket/repo/_lakefs/dummy",
        "s3://bucket/repo/_lakefs/note",
        "s3://bucket/repo/data/y",
    ]


def test_presign_upload_only_hands_out_data_addresses(g, repo):
    address = g.objects.new_physical_address("repo")
    assert "if-none-match" in g.repositories.presign_upload(address, 60, write_once=True)
    assert "if-none-match" not in g.repositories.presign_upload(address, 60)
    for refused in ["s3://bucket/repo/_lakefs/dummy", "s3://bucket/repo/_lakefs/data/x", "s3://bucket/repo/x"]:
        with pytest.raises(errors.Invalid):
            g.repositories.presign_upload(refused, 60)


def test_collection_inputs_read_every_branch_head_commit_and_staged_address(g, repo):
    a = g.objects.upload_object("repo", "main", "a", b"a")
    g.commits.commit("repo", "main", "me", "first")
    g.branches.create_branch("repo", "dev", "main")
    dev = g.objects.upload_object("repo", "dev", "b", b"b")
    g.objects.delete_object("repo", "main", "a")  # a tombstone: staged, but no address
    # a's row stays in the token the commit retired for a while, but its commit keeps it: not counted as staged
    assert a.physical_address not in g.collection.staged_addresses(repo)
    assert g.collection.staged_addresses(repo) == {dev.physical_address}
    heads = g.collection.branch_heads(repo)
    assert heads == {
        "main": g.branches.get_branch("repo", "main").commit_id,
        "dev": g.branches.get_branch("repo", "dev").commit_id,
    }
    commits = g.collection.all_commits(repo)
    assert set(heads.values()) <= set(commits) and len(commits) == 2
    g.repositories.create_repository("another", "s3://bucket/another")
    assert [r.id for r in g.collection.iterate_repositories()] == ["another", "repo"]
