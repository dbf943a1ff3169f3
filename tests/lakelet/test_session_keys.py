"""The local stack's check of keys moto's STS minted (lakelet/stack/session_keys.py): the request each S3 call is,
and the session policies the Iceberg catalog writes (chalicelib/iceberg/credentials.py), as S3 would apply them."""

from __future__ import annotations

import pytest

from chalicelib.iceberg.credentials import session_policy
from lakelet.stack.session_keys import allowed, s3_request

ROOT = "s3://lakelet-local/repo/data/0fffff86306/abc"


@pytest.mark.parametrize(
    ("method", "path", "query", "expected"),
    [
        ("GET", "/lakelet-local/repo/data/0fffff86306/abc/data/f.parquet", "", "s3:GetObject"),
        ("HEAD", "/lakelet-local/repo/data/0fffff86306/abc/data/f.parquet", "", "s3:GetObject"),
        ("PUT", "/lakelet-local/repo/data/0fffff86306/abc/data/f.parquet", "", "s3:PutObject"),
        ("PUT", "/lakelet-local/repo/data/0fffff86306/abc/f", "partNumber=1&uploadId=u", "s3:PutObject"),
        ("POST", "/lakelet-local/repo/data/0fffff86306/abc/f", "uploads", "s3:PutObject"),
        ("DELETE", "/lakelet-local/repo/data/0fffff86306/abc/f", "uploadId=u", "s3:AbortMultipartUpload"),
        ("DELETE", "/lakelet-local/repo/data/0fffff86306/abc/f", "", "s3:DeleteObject"),
        ("GET", "/lakelet-local/repo/data/0fffff86306/abc/f", "uploadId=u", "s3:ListMultipartUploadParts"),
        ("GET", "/lakelet-local", "list-type=2&prefix=repo/data/0fffff86306/abc/", "s3:ListBucket"),
    ],
)
def test_requests_are_the_actions_s3_authorizes(method: str, path: str, query: str, expected: str) -> None:
    found = s3_request(method, path, query)
    assert found is not None and found[0] == expected


def test_a_writer_reaches_its_table_root_only() -> None:
    policy = session_policy(ROOT, write=True)
    inside = "arn:aws:s3:::lakelet-local/repo/data/0fffff86306/abc/data/f.parquet"
    assert allowed(policy, "s3:PutObject", inside, None)
    assert allowed(policy, "s3:GetObject", inside, None)
    assert not allowed(policy, "s3:PutObject", "arn:aws:s3:::lakelet-local/repo/data/0fffff86306/abcd/x", None)
    assert not allowed(policy, "s3:GetObject", "arn:aws:s3:::lakelet-local/repo/_lakefs/x", None)
    assert allowed(policy, "s3:ListBucket", "arn:aws:s3:::lakelet-local", "repo/data/0fffff86306/abc/data/")
    assert not allowed(policy, "s3:ListBucket", "arn:aws:s3:::lakelet-local", "repo/")


def test_a_reader_cannot_write_or_delete() -> None:
    policy = session_policy(ROOT, write=False)
    inside = "arn:aws:s3:::lakelet-local/repo/data/0fffff86306/abc/data/f.parquet"
    assert allowed(policy, "s3:GetObject", inside, None)
    for action in ("s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload"):
        assert not allowed(policy, action, inside, None)


def test_bulk_deletes_and_bucket_operations_are_no_minted_keys_business() -> None:
    assert s3_request("POST", "/lakelet-local", "delete") is None
    assert s3_request("PUT", "/lakelet-local", "") is None
    assert s3_request("GET", "/", "") is None
