"""Branch protection through the S3 gateway: every write to a protected branch is refused (403 AccessDenied with
lakeFS's message), reads and writes to other branches go on."""

from __future__ import annotations

import pytest
from botocore.client import BaseClient
from botocore.exceptions import ClientError

from chalicelib.graveler.records import Repository

from .conftest import Harness

WRITE = "cannot write to protected branch"


def refused(call: object) -> None:
    with pytest.raises(ClientError) as caught:
        call()  # type: ignore[operator]
    error = caught.value.response
    assert error["ResponseMetadata"]["HTTPStatusCode"] == 403
    assert error["Error"]["Code"] == "AccessDenied" and error["Error"]["Message"] == WRITE


def test_every_gateway_write_refuses_a_protected_branch(s3: BaseClient, harness: Harness, repo: Repository) -> None:
    engine = harness.services.engine
    engine.objects.upload_object("repo", "main", "a", b"committed")
    engine.commits.commit("repo", "main", "tester", "first")
    engine.branches.create_branch("repo", "dev", "main")
    upload = s3.create_multipart_upload(Bucket="repo", Key="main/big")["UploadId"]
    part = s3.upload_part(Bucket="repo", Key="main/big", UploadId=upload, PartNumber=1, Body=b"x" * 10)
    assert engine.ports.protection is not None
    engine.ports.protection.set_rules(engine.repositories.get_repository("repo"), ["ma*"])

    refused(lambda: s3.put_object(Bucket="repo", Key="main/b", Body=b"new"))
    refused(lambda: s3.copy_object(Bucket="repo", Key="main/a2", CopySource={"Bucket": "repo", "Key": "main/a"}))
    refused(lambda: s3.copy_object(Bucket="repo", Key="main/a3", CopySource={"Bucket": "repo", "Key": "dev/a"}))
    refused(lambda: s3.delete_object(Bucket="repo", Key="main/a"))
    refused(
        lambda: s3.complete_multipart_upload(
            Bucket="repo",
            Key="main/big",
            UploadId=upload,
            MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": part["ETag"]}]},
        )
    )
    result = s3.delete_objects(Bucket="repo", Delete={"Objects": [{"Key": "main/a"}, {"Key": "dev/a"}]})
    assert [(e["Key"], e["Code"], e["Message"]) for e in result["Errors"]] == [("main/a", "AccessDenied", WRITE)]
    assert [d["Key"] for d in result["Deleted"]] == ["dev/a"]

    # Nothing changed on main; reads and the unprotected branch work as before.
    assert [o.key for o in engine.objects.list_objects("repo", "main").results] == ["a"]
    assert engine.history.is_dirty("repo", "main") is False
    assert s3.get_object(Bucket="repo", Key="main/a")["Body"].read() == b"committed"
    s3.put_object(Bucket="repo", Key="dev/b", Body=b"ok")
    s3.copy_object(Bucket="repo", Key="dev/a2", CopySource={"Bucket": "repo", "Key": "main/a"})
    assert [o.key for o in engine.objects.list_objects("repo", "dev").results] == ["a2", "b"]
