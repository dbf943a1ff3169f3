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


def test_entry_identity_keeps_its_bytes():
    # Digests of the field-by-field encoding (size, etag, sorted metadata, content type if any) as first written;
    # every stored range's identities are these, so a faster encoder must give the same.
    assert entry_identity(Entry("a", 0, "", 0, "", {})).hex() == (
        "50ea63d5dfe7d03af61561b46517c13f6ad3cd9a6f42ed5b53df52435501f803"
    )
    assert entry_identity(
        Entry("a", 1234, "d41d8cd98f00b204e9800998ecf8427e", 0, "application/octet-stream", {})
    ).hex() == ("4f7bedb772d7223aa597be0e5b86594e583f5e7daee3cfd2a0d5794605ad0bee")
    assert entry_identity(Entry("a", 2**40, "é", 0, "text/plain", {"b": "2", "a": "ü"})).hex() == (
        "d708fe8ba6ff436777ec85b66ee4fe6a0c07646333085c4438aa6d79f2537805"
    )
