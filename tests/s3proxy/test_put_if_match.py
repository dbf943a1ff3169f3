"""PutObject with If-Match through boto3: S3's conditional overwrite on the branch's object."""

from __future__ import annotations

import pytest
from botocore.client import BaseClient
from botocore.exceptions import ClientError

from chalicelib.graveler.records import Repository


def answer(error: pytest.ExceptionInfo[ClientError]) -> tuple[int, str]:
    response = error.value.response
    return int(response["ResponseMetadata"]["HTTPStatusCode"]), str(response["Error"]["Code"])


def read(s3: BaseClient, key: str) -> bytes:
    return s3.get_object(Bucket="repo", Key=key)["Body"].read()  # type: ignore[no-any-return]


def test_put_if_match_overwrites_only_the_named_version(s3: BaseClient, repo: Repository) -> None:
    first = s3.put_object(Bucket="repo", Key="main/k", Body=b"1")["ETag"]
    second = s3.put_object(Bucket="repo", Key="main/k", Body=b"2", IfMatch=first)["ETag"]
    assert read(s3, "main/k") == b"2"
    with pytest.raises(ClientError) as error:
        s3.put_object(Bucket="repo", Key="main/k", Body=b"3", IfMatch=first)  # stale: another writer won
    assert answer(error) == (412, "PreconditionFailed")
    assert read(s3, "main/k") == b"2"
    s3.put_object(Bucket="repo", Key="main/k", Body=b"3", IfMatch="*")
    with pytest.raises(ClientError):
        s3.put_object(Bucket="repo", Key="main/k", Body=b"4", IfMatch=second)
    assert read(s3, "main/k") == b"3"


def test_put_if_match_of_a_missing_key_is_no_such_key(s3: BaseClient, repo: Repository) -> None:
    with pytest.raises(ClientError) as error:
        s3.put_object(Bucket="repo", Key="main/none", Body=b"1", IfMatch="*")
    assert answer(error) == (404, "NoSuchKey")
    with pytest.raises(ClientError):
        s3.get_object(Bucket="repo", Key="main/none")


def test_copy_with_if_match_is_still_refused(s3: BaseClient, repo: Repository) -> None:
    etag = s3.put_object(Bucket="repo", Key="main/src", Body=b"1")["ETag"]
    with pytest.raises(ClientError) as error:
        s3.copy_object(
            Bucket="repo",
            Key="main/dst",
            CopySource={"Bucket": "repo", "Key": "main/src"},
            IfMatch=etag,
        )
    assert answer(error) == (501, "NotImplemented")
