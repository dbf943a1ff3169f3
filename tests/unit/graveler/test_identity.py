from chalicelib.graveler.identity import commit_id, entry_identity
from chalicelib.graveler.records import Entry


def test_commit_id_matches_the_lakefs_test_vector():
    got = commit_id("user1", "message1", "deadbeef123", -62135596800, {"foo": "bar"}, ["deadbeef1", "deadbeef12"])
    assert got == "2277b5abd2d3ba6b4d35c48a0e358b0c4bcf5cd6d891c67437fb4c4af0d2fd4b"


def test_commit_id_depends_on_parent_order_and_metadata():
    base = commit_id("u", "m", "mr", 1, {"a": "1"}, ["p1", "p2"])
    assert commit_id("u", "m", "mr", 1, {"a": "1"}, ["p2", "p1"]) != base
    assert commit_id("u", "m", "mr", 1, {"a": "2"}, ["p1", "p2"]) != base
    assert commit_id("u", "m", "mr", 1, {"a": "1"}, ["p1", "p2"]) == base


def test_entry_identity_ignores_address_and_mtime_but_not_content():
    a = Entry("s3://b/ns/data/1/x", 10, "etag", 100, "text/plain", {"k": "v"})
    assert entry_identity(a) == entry_identity(Entry("s3://b/ns/data/2/y", 10, "etag", 999, "text/plain", {"k": "v"}))
    assert entry_identity(a) != entry_identity(Entry(a.physical_address, 11, "etag", 100, "text/plain", {"k": "v"}))
    assert entry_identity(a) != entry_identity(Entry(a.physical_address, 10, "other", 100, "text/plain", {"k": "v"}))
    assert entry_identity(a) != entry_identity(Entry(a.physical_address, 10, "etag", 100, "text/csv", {"k": "v"}))
    assert entry_identity(a) != entry_identity(Entry(a.physical_address, 10, "etag", 100, "text/plain", {}))
