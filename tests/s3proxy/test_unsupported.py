"""What the gateway does not do answers NotImplemented (or MethodNotAllowed), naming what was asked."""

from __future__ import annotations

import pytest
from botocore.client import BaseClient
from botocore.exceptions import ClientError

from chalicelib.graveler.records import Repository

from .conftest import Harness, signed


@pytest.mark.parametrize(
    "call",
    [
        lambda s3: s3.get_object_tagging(Bucket="repo", Key="main/a"),
        lambda s3: s3.put_object_tagging(Bucket="repo", Key="main/a", Tagging={"TagSet": []}),
        lambda s3: s3.get_object_acl(Bucket="repo", Key="main/a"),
        lambda s3: s3.get_bucket_acl(Bucket="repo"),
        lambda s3: s3.get_bucket_versioning(Bucket="repo"),
        lambda s3: s3.put_bucket_versioning(Bucket="repo", VersioningConfiguration={"Status": "Enabled"}),
        lambda s3: s3.list_object_versions(Bucket="repo"),
        lambda s3: s3.get_object(Bucket="repo", Key="main/a", VersionId="abc"),
        lambda s3: s3.get_bucket_policy(Bucket="repo"),
        lambda s3: s3.get_bucket_lifecycle_configuration(Bucket="repo"),
        lambda s3: s3.create_bucket(Bucket="new-bucket"),
        lambda s3: s3.delete_bucket(Bucket="repo"),
        lambda s3: s3.put_object(Bucket="repo", Key="main/a", Body=b"x", Tagging="a=b"),
        lambda s3: s3.put_object(Bucket="repo", Key="main/a", Body=b"x", ACL="public-read"),
        lambda s3: s3.put_object(
            Bucket="repo", Key="main/a", Body=b"x", SSECustomerAlgorithm="AES256", SSECustomerKey="k" * 32
        ),
    ],
    ids=[
        "get-tagging",
        "put-tagging",
        "object-acl",
        "bucket-acl",
        "get-versioning",
        "put-versioning",
        "versions",
        "version-id",
        "policy",
        "lifecycle",
        "create-bucket",
        "delete-bucket",
        "tagging-header",
        "acl-header",
        "sse-c",
    ],
)
def test_not_implemented(s3: BaseClient, harness: Harness, repo: Repository, call: object) -> None:
    harness.services.engine.objects.upload_object("repo", "main", "a", b"a")
    with pytest.raises(ClientError) as error:
        call(s3)  # type: ignore[operator]
    assert error.value.response["Error"]["Code"] == "NotImplemented"
    assert error.value.response["ResponseMetadata"]["HTTPStatusCode"] == 501
    assert harness.services.engine.objects.stat_object("repo", "main", "a").size == 1  # nothing changed


def test_method_not_allowed_and_form_uploads(harness: Harness, repo: Repository) -> None:
    for method, path, query, expected in [
        ("POST", "/repo", "", (405, b"MethodNotAllowed")),
        ("PUT", "/", "", (405, b"MethodNotAllowed")),
        ("POST", "/repo/main/a", "", (501, b"NotImplemented")),
        ("PATCH", "/repo/main/a", "", (405, b"MethodNotAllowed")),
    ]:
        response = harness.handle(signed(method, path, query))
        assert (response.status, expected[1] in response.body) == (expected[0], True), (method, path)
