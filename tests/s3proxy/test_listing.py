"""ListBuckets, HeadBucket, GetBucketLocation and ListObjects v1/v2: prefixes, delimiters, markers, tokens,
max-keys, URL encoding, and the listing without a ref that shows branches."""

from __future__ import annotations

import pytest
from botocore.client import BaseClient
from botocore.exceptions import ClientError

from chalicelib.graveler.records import Repository

from .conftest import Harness


@pytest.fixture
def tree(harness: Harness, repo: Repository) -> list[str]:
    """main holds 250 keys in 10 directories plus 3 top-level files; committed, then a little staged on top."""
    engine = harness.services.engine
    keys = [f"dir{d}/file{f:03d}.txt" for d in range(10) for f in range(25)] + ["a.txt", "m.txt", "z.txt"]
    for key in keys[:200]:
        engine.objects.upload_object("repo", "main", key, key.encode())
    engine.commits.commit("repo", "main", "alice", "base")
    for key in keys[200:]:
        engine.objects.upload_object("repo", "main", key, key.encode())
    return sorted(keys)


def _all_v2(s3: BaseClient, **kwargs: object) -> tuple[list[str], list[str], int]:
    keys: list[str] = []
    prefixes: list[str] = []
    pages = 0
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket="repo", **kwargs):
        pages += 1
        keys += [o["Key"] for o in page.get("Contents", [])]
        prefixes += [p["Prefix"] for p in page.get("CommonPrefixes", [])]
    return keys, prefixes, pages


def test_list_buckets(s3: BaseClient, harness: Harness) -> None:
    for name in ("beta", "alpha", "gamma"):
        harness.repo(name)
    listed = s3.list_buckets()
    assert [b["Name"] for b in listed["Buckets"]] == ["alpha", "beta", "gamma"]
    assert listed["Owner"]["ID"] == "alice"


def test_head_bucket_and_location(s3: BaseClient, repo: Repository) -> None:
    assert s3.head_bucket(Bucket="repo")["ResponseMetadata"]["HTTPStatusCode"] == 200
    with pytest.raises(ClientError) as error:
        s3.head_bucket(Bucket="nothing-here")
    assert error.value.response["ResponseMetadata"]["HTTPStatusCode"] == 404
    assert s3.get_bucket_location(Bucket="repo").get("LocationConstraint") in (None, "")


def test_v2_pagination_and_delimiter(s3: BaseClient, tree: list[str]) -> None:
    keys, prefixes, pages = _all_v2(s3, Prefix="main/", PaginationConfig={"PageSize": 17})
    assert keys == [f"main/{k}" for k in tree]
    assert prefixes == []
    assert pages == -(-len(tree) // 17)
    keys, prefixes, _ = _all_v2(s3, Prefix="main/", Delimiter="/", PaginationConfig={"PageSize": 4})
    assert keys == ["main/a.txt", "main/m.txt", "main/z.txt"]
    assert prefixes == [f"main/dir{d}/" for d in range(10)]
    keys, prefixes, _ = _all_v2(s3, Prefix="main/dir3/", Delimiter="/", PaginationConfig={"PageSize": 10})
    assert keys == [f"main/dir3/file{f:03d}.txt" for f in range(25)]


def test_v2_page_fields(s3: BaseClient, tree: list[str]) -> None:
    page = s3.list_objects_v2(Bucket="repo", Prefix="main/", Delimiter="/", MaxKeys=5)
    assert page["IsTruncated"] is True
    assert page["KeyCount"] == 5
    assert [o["Key"] for o in page["Contents"]] == ["main/a.txt"]
    assert [p["Prefix"] for p in page["CommonPrefixes"]] == [f"main/dir{d}/" for d in range(4)]
    following = s3.list_objects_v2(
        Bucket="repo", Prefix="main/", Delimiter="/", MaxKeys=5, ContinuationToken=page["NextContinuationToken"]
    )
    assert [p["Prefix"] for p in following["CommonPrefixes"]] == [f"main/dir{d}/" for d in range(4, 9)]
    assert following["ContinuationToken"] == page["NextContinuationToken"]
    obj = page["Contents"][0]
    assert obj["Size"] == len("a.txt") and obj["ETag"].startswith('"') and obj["StorageClass"] == "STANDARD"


def test_v2_start_after_and_max_keys(s3: BaseClient, tree: list[str]) -> None:
    page = s3.list_objects_v2(Bucket="repo", Prefix="main/", StartAfter="main/dir9/file020.txt")
    assert [o["Key"] for o in page["Contents"]] == [f"main/dir9/file{f:03d}.txt" for f in range(21, 25)] + [
        "main/m.txt",
        "main/z.txt",
    ]
    assert s3.list_objects_v2(Bucket="repo", Prefix="main/", MaxKeys=0).get("Contents", []) == []
    big = s3.list_objects_v2(Bucket="repo", Prefix="main/", MaxKeys=5000)
    assert big["MaxKeys"] == 1000 and big["KeyCount"] == len(tree)
    with pytest.raises(ClientError):
        s3.list_objects_v2(Bucket="repo", Prefix="main/", ContinuationToken="!!not-a-token!!")


def test_v1_markers(s3: BaseClient, tree: list[str]) -> None:
    keys: list[str] = []
    for page in s3.get_paginator("list_objects").paginate(
        Bucket="repo", Prefix="main/dir1", PaginationConfig={"PageSize": 7}
    ):
        keys += [o["Key"] for o in page.get("Contents", [])]
    assert keys == [f"main/dir1/file{f:03d}.txt" for f in range(25)]
    page = s3.list_objects(Bucket="repo", Prefix="main/", Delimiter="/", Marker="main/dir4/", MaxKeys=3)
    assert [p["Prefix"] for p in page["CommonPrefixes"]] == ["main/dir5/", "main/dir6/", "main/dir7/"]
    assert page["IsTruncated"] is True and page["NextMarker"] == "main/dir7/"
    assert [o["Owner"]["ID"] for o in s3.list_objects(Bucket="repo", Prefix="main/a")["Contents"]] == ["alice"]


def test_listing_without_a_ref_lists_branches(s3: BaseClient, harness: Harness, repo: Repository) -> None:
    engine = harness.services.engine
    for branch in ("main-2", "feature", "main_x"):
        engine.branches.create_branch("repo", branch, "main")
    page = s3.list_objects_v2(Bucket="repo", Delimiter="/")
    # Key order: "main-2/" sorts before "main/" ('-' < '/'), and "main/" before "main_x/".
    assert [p["Prefix"] for p in page["CommonPrefixes"]] == ["feature/", "main-2/", "main/", "main_x/"]
    page = s3.list_objects_v2(Bucket="repo", Prefix="mai", Delimiter="/", MaxKeys=2)
    assert [p["Prefix"] for p in page["CommonPrefixes"]] == ["main-2/", "main/"]
    rest = s3.list_objects_v2(
        Bucket="repo", Prefix="mai", Delimiter="/", ContinuationToken=page["NextContinuationToken"]
    )
    assert [p["Prefix"] for p in rest["CommonPrefixes"]] == ["main_x/"]
    v1 = s3.list_objects(Bucket="repo", Delimiter="/")
    assert len(v1["CommonPrefixes"]) == 4


def test_listing_another_ref_and_missing_ones(s3: BaseClient, harness: Harness, tree: list[str]) -> None:
    engine = harness.services.engine
    engine.branches.create_branch("repo", "dev", "main@")  # the committed 200 keys only
    assert s3.list_objects_v2(Bucket="repo", Prefix="dev/")["KeyCount"] == 200
    assert s3.list_objects_v2(Bucket="repo", Prefix="main@/dir0/")["KeyCount"] == 25
    # A ref that does not exist is an error naming it (lakeFS answers an empty listing, which says nothing).
    for listing in (s3.list_objects_v2, s3.list_objects):
        with pytest.raises(ClientError) as missing:
            listing(Bucket="repo", Prefix="nope/")
        assert missing.value.response["Error"]["Code"] == "NoSuchKey"
        assert missing.value.response["ResponseMetadata"]["HTTPStatusCode"] == 404
        assert "'nope' not found in repository repo" in missing.value.response["Error"]["Message"]
    with pytest.raises(ClientError) as past:
        s3.list_objects_v2(Bucket="repo", Prefix="main~9/dir0/")
    assert past.value.response["Error"]["Code"] == "NoSuchKey" and "main~9" in past.value.response["Error"]["Message"]
    with pytest.raises(ClientError) as invalid:
        s3.list_objects_v2(Bucket="repo", Prefix="main~x~/")
    assert invalid.value.response["Error"]["Code"] == "InvalidArgument"
    for key in ("nope/a.txt", "main~9/a.txt"):  # GET and HEAD of a key under a missing ref: NoSuchKey, 404
        with pytest.raises(ClientError) as get:
            s3.get_object(Bucket="repo", Key=key)
        assert get.value.response["Error"]["Code"] == "NoSuchKey"
        assert key.split("/")[0] in get.value.response["Error"]["Message"]
        with pytest.raises(ClientError) as head:
            s3.head_object(Bucket="repo", Key=key)
        assert head.value.response["ResponseMetadata"]["HTTPStatusCode"] == 404
    with pytest.raises(ClientError) as error:
        s3.list_objects_v2(Bucket="no-such-repo", Prefix="main/")
    assert error.value.response["Error"]["Code"] == "NoSuchBucket"
    # A marker of another ref: keys of main come after any "dev/..." marker and before any "z..." one.
    assert s3.list_objects(Bucket="repo", Prefix="main/", Marker="dev/zzz")["Contents"][0]["Key"] == "main/a.txt"
    assert "Contents" not in s3.list_objects(Bucket="repo", Prefix="main/", Marker="zzz")


def test_url_encoding_of_keys(s3: BaseClient, harness: Harness, repo: Repository) -> None:
    odd = ["sp ace/x", "plus+sign", "amp&er=sand", "uni✓/é", "ctl\x01char"]
    for key in odd:
        harness.services.engine.objects.upload_object("repo", "main", key, b"x")
    # boto3 asks for encoding-type=url and decodes; the keys come back exactly.
    listed = [o["Key"] for o in s3.list_objects_v2(Bucket="repo", Prefix="main/")["Contents"]]
    assert listed == sorted(f"main/{k}" for k in odd)
    listed = [o["Key"] for o in s3.list_objects(Bucket="repo", Prefix="main/")["Contents"]]
    assert listed == sorted(f"main/{k}" for k in odd)
