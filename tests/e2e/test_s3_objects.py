"""boto3 against the S3 gateway of ``lakelet up``: every object and bucket operation over real HTTP, and
objects shared both ways with the official lakeFS client."""

from __future__ import annotations

import hashlib
import random

import lakefs
import pytest
from botocore.client import BaseClient
from botocore.exceptions import ClientError
from lakefs.client import Client

from lakelet.stack.local import LOCAL_BUCKET

from .conftest import LocalProcess
from .s3support import moto_s3

pytestmark = pytest.mark.e2e

BLOB = random.Random(11).randbytes(300_000)


def code(error: pytest.ExceptionInfo[ClientError]) -> str:
    return str(error.value.response["Error"]["Code"])


def test_list_and_head_buckets(s3: BaseClient, s3_repo: str) -> None:
    assert s3_repo in [b["Name"] for b in s3.list_buckets()["Buckets"]]
    assert s3.head_bucket(Bucket=s3_repo)["ResponseMetadata"]["HTTPStatusCode"] == 200
    with pytest.raises(ClientError) as error:
        s3.head_bucket(Bucket="no-such-repository")
    assert error.value.response["ResponseMetadata"]["HTTPStatusCode"] == 404


def test_put_get_head_delete(s3: BaseClient, s3_repo: str) -> None:
    put = s3.put_object(
        Bucket=s3_repo, Key="main/data/blob.bin", Body=BLOB, ContentType="application/x-blob", Metadata={"team": "data"}
    )
    assert put["ETag"] == f'"{hashlib.md5(BLOB).hexdigest()}"'
    got = s3.get_object(Bucket=s3_repo, Key="main/data/blob.bin")
    assert got["Body"].read() == BLOB
    assert (got["ContentType"], got["Metadata"]) == ("application/x-blob", {"team": "data"})
    head = s3.head_object(Bucket=s3_repo, Key="main/data/blob.bin")
    assert head["ContentLength"] == len(BLOB) and head["ETag"] == put["ETag"]
    s3.delete_object(Bucket=s3_repo, Key="main/data/blob.bin")
    with pytest.raises(ClientError) as error:
        s3.get_object(Bucket=s3_repo, Key="main/data/blob.bin")
    assert code(error) == "NoSuchKey"


def test_range_reads(s3: BaseClient, s3_repo: str) -> None:
    s3.put_object(Bucket=s3_repo, Key="main/r.bin", Body=BLOB)
    for header, expected in [
        ("bytes=0-99", BLOB[:100]),
        ("bytes=299990-", BLOB[299990:]),
        ("bytes=-7", BLOB[-7:]),
        ("bytes=1000-1999", BLOB[1000:2000]),
    ]:
        got = s3.get_object(Bucket=s3_repo, Key="main/r.bin", Range=header)
        assert got["ResponseMetadata"]["HTTPStatusCode"] == 206
        assert got["Body"].read() == expected
    with pytest.raises(ClientError) as error:
        s3.get_object(Bucket=s3_repo, Key="main/r.bin", Range="bytes=300000-")
    assert code(error) == "InvalidRange"


def test_exclusive_put(s3: BaseClient, s3_repo: str) -> None:
    s3.put_object(Bucket=s3_repo, Key="main/once.txt", Body=b"first", IfNoneMatch="*")
    with pytest.raises(ClientError) as error:
        s3.put_object(Bucket=s3_repo, Key="main/once.txt", Body=b"second", IfNoneMatch="*")
    assert code(error) == "PreconditionFailed"


def test_delete_objects(s3: BaseClient, s3_repo: str) -> None:
    for i in range(5):
        s3.put_object(Bucket=s3_repo, Key=f"main/del/{i}", Body=b"x")
    result = s3.delete_objects(Bucket=s3_repo, Delete={"Objects": [{"Key": f"main/del/{i}"} for i in range(4)]})
    assert len(result["Deleted"]) == 4
    assert [o["Key"] for o in s3.list_objects_v2(Bucket=s3_repo, Prefix="main/del/")["Contents"]] == ["main/del/4"]


def test_copies_share_the_physical_object(s3: BaseClient, s3_repo: str, client: Client) -> None:
    repo = lakefs.Repository(s3_repo, client=client)
    repo.branch("dev").create(source_reference="main")
    s3.put_object(Bucket=s3_repo, Key="main/src.bin", Body=BLOB)
    s3.copy_object(Bucket=s3_repo, Key="main/copy.bin", CopySource=f"{s3_repo}/main/src.bin")
    s3.copy_object(Bucket=s3_repo, Key="dev/copy.bin", CopySource={"Bucket": s3_repo, "Key": "main/src.bin"})
    source = repo.branch("main").object("src.bin").stat().physical_address
    assert repo.branch("main").object("copy.bin").stat().physical_address == source
    assert repo.branch("dev").object("copy.bin").stat().physical_address == source
    assert s3.get_object(Bucket=s3_repo, Key="dev/copy.bin")["Body"].read() == BLOB


def test_copy_across_repositories_lands_in_the_destination(
    s3: BaseClient, s3_repo: str, new_repo: object, client: Client
) -> None:
    other = new_repo()  # type: ignore[operator]
    s3.put_object(Bucket=s3_repo, Key="main/src.bin", Body=b"cross-repo")
    s3.copy_object(Bucket=other.id, Key="main/imported.bin", CopySource=f"{s3_repo}/main/src.bin")
    stat = lakefs.Repository(other.id, client=client).branch("main").object("imported.bin").stat()
    assert stat.physical_address.startswith(f"s3://{LOCAL_BUCKET}/{other.id}/")
    assert s3.get_object(Bucket=other.id, Key="main/imported.bin")["Body"].read() == b"cross-repo"


def test_boto3_writes_lakefs_reads_and_back(s3: BaseClient, s3_repo: str, client: Client) -> None:
    main = lakefs.Repository(s3_repo, client=client).branch("main")
    s3.put_object(Bucket=s3_repo, Key="main/from-boto3.bin", Body=BLOB, Metadata={"via": "s3"})
    with main.object("from-boto3.bin").reader(mode="rb") as reader:
        assert reader.read() == BLOB
    assert main.object("from-boto3.bin").stat().metadata == {"via": "s3"}
    main.object("from-lakefs.txt").upload("written by the lakeFS client\n", metadata={"via": "lakefs"})
    got = s3.get_object(Bucket=s3_repo, Key="main/from-lakefs.txt")
    assert got["Body"].read() == b"written by the lakeFS client\n"
    assert got["Metadata"] == {"via": "lakefs"}
    # A commit made with the lakeFS client is readable by ref through the gateway.
    commit = main.commit(message="both ways")
    assert s3.get_object(Bucket=s3_repo, Key=f"{commit.get_commit().id}/from-boto3.bin")["Body"].read() == BLOB


def test_collected_data_answers_no_such_version(
    s3: BaseClient, s3_repo: str, client: Client, local_stack: LocalProcess
) -> None:
    s3.put_object(Bucket=s3_repo, Key="main/gone.bin", Body=b"soon collected")
    address = lakefs.Repository(s3_repo, client=client).branch("main").object("gone.bin").stat().physical_address
    moto_s3(local_stack).delete_object(Bucket=LOCAL_BUCKET, Key=address.removeprefix(f"s3://{LOCAL_BUCKET}/"))
    with pytest.raises(ClientError) as error:
        s3.get_object(Bucket=s3_repo, Key="main/gone.bin")
    assert code(error) == "NoSuchVersion"


def test_unsupported_features_are_clear(s3: BaseClient, s3_repo: str) -> None:
    for call in (
        lambda: s3.get_bucket_versioning(Bucket=s3_repo),
        lambda: s3.get_object_tagging(Bucket=s3_repo, Key="main/x"),
        lambda: s3.get_bucket_acl(Bucket=s3_repo),
    ):
        with pytest.raises(ClientError) as error:
            call()
        assert code(error) == "NotImplemented"


def test_writes_need_a_branch(s3: BaseClient, s3_repo: str, client: Client) -> None:
    lakefs.Repository(s3_repo, client=client).tag("v1").create("main")
    with pytest.raises(ClientError) as error:
        s3.put_object(Bucket=s3_repo, Key="v1/x", Body=b"x")
    assert code(error) == "NoSuchBranch"
