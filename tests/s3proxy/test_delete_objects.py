"""DeleteObjects: up to 1,000 keys in one request, across branches, each key reported on its own."""

from __future__ import annotations

import pytest
from botocore.client import BaseClient
from botocore.exceptions import ClientError

from chalicelib.graveler.records import Repository

from .conftest import Harness


def test_delete_many_across_branches(s3: BaseClient, harness: Harness, repo: Repository) -> None:
    engine = harness.services.engine
    engine.branches.create_branch("repo", "dev", "main")
    for branch in ("main", "dev"):
        for i in range(3):
            engine.objects.upload_object("repo", branch, f"k{i}", b"x")
    engine.branches.create_tag("repo", "v1", "main")
    keys = ["main/k0", "main/k1", "dev/k2", "main/never-existed", "v1/k0", "no-path"]
    result = s3.delete_objects(Bucket="repo", Delete={"Objects": [{"Key": k} for k in keys]})
    assert sorted(d["Key"] for d in result["Deleted"]) == ["dev/k2", "main/k0", "main/k1", "main/never-existed"]
    assert {e["Key"]: e["Code"] for e in result["Errors"]} == {"v1/k0": "NoSuchBranch", "no-path": "InvalidArgument"}
    assert [o.key for o in engine.objects.list_objects("repo", "main").results] == ["k2"]
    assert [o.key for o in engine.objects.list_objects("repo", "dev").results] == ["k0", "k1"]


def test_quiet_mode_reports_only_errors(s3: BaseClient, harness: Harness, repo: Repository) -> None:
    harness.services.engine.objects.upload_object("repo", "main", "a", b"x")
    result = s3.delete_objects(Bucket="repo", Delete={"Objects": [{"Key": "main/a"}, {"Key": "x"}], "Quiet": True})
    assert "Deleted" not in result
    assert [e["Key"] for e in result["Errors"]] == ["x"]


def test_a_thousand_keys_and_no_more(s3: BaseClient, harness: Harness, repo: Repository) -> None:
    for i in range(1000):
        harness.services.engine.objects.upload_object("repo", "main", f"f{i:04d}", b"")
    result = s3.delete_objects(Bucket="repo", Delete={"Objects": [{"Key": f"main/f{i:04d}"} for i in range(1000)]})
    assert len(result["Deleted"]) == 1000
    assert harness.services.engine.objects.list_objects("repo", "main").results == []
    with pytest.raises(ClientError) as error:
        s3.delete_objects(Bucket="repo", Delete={"Objects": [{"Key": f"main/f{i}"} for i in range(1001)]})
    assert error.value.response["Error"]["Code"] == "MalformedXML"


def test_malformed_body_and_missing_bucket(harness: Harness, repo: Repository) -> None:
    s3 = harness.client()
    with pytest.raises(ClientError) as error:
        s3.delete_objects(Bucket="nothing-here", Delete={"Objects": [{"Key": "main/a"}]})
    assert error.value.response["Error"]["Code"] == "NoSuchBucket"


def test_a_branch_directory_marker_is_deleted_as_missing(s3: BaseClient, harness: Harness, repo: Repository) -> None:
    """S3A deletes ``<branch>/``, the marker of a branch's root as a directory, after each write (as a missing key,
    S3 reports it deleted); an error there would be logged on every file Spark writes."""
    harness.services.engine.objects.upload_object("repo", "main", "a", b"x")
    result = s3.delete_objects(Bucket="repo", Delete={"Objects": [{"Key": "main/"}, {"Key": "main/a/"}]})
    assert sorted(d["Key"] for d in result["Deleted"]) == ["main/", "main/a/"]
    assert "Errors" not in result
    assert [o.key for o in harness.services.engine.objects.list_objects("repo", "main").results] == ["a"]
