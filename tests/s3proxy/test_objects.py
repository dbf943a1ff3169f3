"""GetObject, HeadObject, PutObject and DeleteObject through boto3, over http (signed payloads) and https
(unsigned, aws-chunked with a checksum trailer); the objects are graveler's, the ones the lakeFS API sees."""

from __future__ import annotations

import base64
import hashlib
import time
from email.utils import formatdate

import pytest
from botocore.client import BaseClient
from botocore.exceptions import ClientError

from chalicelib.graveler.records import Repository

from .conftest import Harness

BLOB = bytes(range(256)) * 40 + b"end"


def code(error: pytest.ExceptionInfo[ClientError]) -> str:
    return str(error.value.response["Error"]["Code"])


def status(error: pytest.ExceptionInfo[ClientError]) -> int:
    return int(error.value.response["ResponseMetadata"]["HTTPStatusCode"])


def test_put_then_get_round_trip(s3: BaseClient, harness: Harness, repo: Repository) -> None:
    put = s3.put_object(
        Bucket="repo",
        Key="main/data/blob.bin",
        Body=BLOB,
        ContentType="application/x-test",
        Metadata={"Owner": "data-team", "source": "s3"},
    )
    assert put["ETag"] == f'"{hashlib.md5(BLOB).hexdigest()}"'
    got = s3.get_object(Bucket="repo", Key="main/data/blob.bin")
    assert got["Body"].read() == BLOB
    assert got["ContentType"] == "application/x-test"
    assert got["ContentLength"] == len(BLOB)
    assert got["Metadata"] == {"owner": "data-team", "source": "s3"}
    assert got["ETag"] == put["ETag"]
    # The same object the API reads: graveler staged it on main.
    entry = harness.services.engine.objects.stat_object("repo", "main", "data/blob.bin")
    assert (entry.size, entry.etag, entry.user_metadata) == (
        len(BLOB),
        hashlib.md5(BLOB).hexdigest(),
        {"owner": "data-team", "source": "s3"},
    )


def test_objects_written_by_graveler_are_read(s3: BaseClient, harness: Harness, repo: Repository) -> None:
    harness.services.engine.objects.upload_object("repo", "main", "from/api.txt", b"hello", "text/plain", {"a": "1"})
    got = s3.get_object(Bucket="repo", Key="main/from/api.txt")
    assert (got["Body"].read(), got["ContentType"], got["Metadata"]) == (b"hello", "text/plain", {"a": "1"})


def test_head_object(s3: BaseClient, repo: Repository) -> None:
    s3.put_object(Bucket="repo", Key="main/h.txt", Body=b"twelve bytes")
    head = s3.head_object(Bucket="repo", Key="main/h.txt")
    assert head["ContentLength"] == 12
    assert head["AcceptRanges"] == "bytes"
    with pytest.raises(ClientError) as missing:
        s3.head_object(Bucket="repo", Key="main/none.txt")
    assert status(missing) == 404


@pytest.mark.parametrize(
    ("header", "expected", "content_range"),
    [
        ("bytes=0-9", BLOB[:10], f"bytes 0-9/{len(BLOB)}"),
        ("bytes=100-", BLOB[100:], f"bytes 100-{len(BLOB) - 1}/{len(BLOB)}"),
        ("bytes=-3", b"end", f"bytes {len(BLOB) - 3}-{len(BLOB) - 1}/{len(BLOB)}"),
        ("bytes=10-999999", BLOB[10:], f"bytes 10-{len(BLOB) - 1}/{len(BLOB)}"),
    ],
)
def test_range_reads(s3: BaseClient, repo: Repository, header: str, expected: bytes, content_range: str) -> None:
    s3.put_object(Bucket="repo", Key="main/r.bin", Body=BLOB)
    got = s3.get_object(Bucket="repo", Key="main/r.bin", Range=header)
    assert got["ResponseMetadata"]["HTTPStatusCode"] == 206
    assert got["ContentRange"] == content_range
    assert got["Body"].read() == expected


@pytest.mark.parametrize("header", ["bytes=3-5", "bytes=3-", "bytes=-0"])
def test_unsatisfiable_range(s3: BaseClient, repo: Repository, header: str) -> None:
    s3.put_object(Bucket="repo", Key="main/r.bin", Body=b"abc")
    with pytest.raises(ClientError) as error:
        s3.get_object(Bucket="repo", Key="main/r.bin", Range=header)
    assert (status(error), code(error)) == (416, "InvalidRange")
    assert error.value.response["ResponseMetadata"]["HTTPHeaders"]["content-range"] == "bytes */3"


def test_malformed_range_reads_everything(s3: BaseClient, repo: Repository) -> None:
    s3.put_object(Bucket="repo", Key="main/r.bin", Body=b"abcdef")
    for header in ("bytes=0-1,3-4", "bytes=4-2", "items=0-1"):
        got = s3.get_object(Bucket="repo", Key="main/r.bin", Range=header)
        assert (got["ResponseMetadata"]["HTTPStatusCode"], got["Body"].read()) == (200, b"abcdef")


def test_reads_accept_any_ref_expression(s3: BaseClient, harness: Harness, repo: Repository) -> None:
    engine = harness.services.engine
    s3.put_object(Bucket="repo", Key="main/v.txt", Body=b"version 1")
    first = engine.commits.commit("repo", "main", "alice", "first")
    engine.branches.create_tag("repo", "v1", "main")
    s3.put_object(Bucket="repo", Key="main/v.txt", Body=b"version 2")
    engine.commits.commit("repo", "main", "alice", "second")
    s3.put_object(Bucket="repo", Key="main/v.txt", Body=b"version 3 (staged)")
    for ref, body in [
        ("main", b"version 3 (staged)"),
        ("main@", b"version 2"),
        ("main~1", b"version 1"),
        ("v1", b"version 1"),
        (first.id, b"version 1"),
        (first.id[:12], b"version 1"),
    ]:
        assert s3.get_object(Bucket="repo", Key=f"{ref}/v.txt")["Body"].read() == body, ref


def test_writes_need_a_branch(s3: BaseClient, harness: Harness, repo: Repository) -> None:
    s3.put_object(Bucket="repo", Key="main/a.txt", Body=b"a")
    commit = harness.services.engine.commits.commit("repo", "main", "alice", "c")
    harness.services.engine.branches.create_tag("repo", "v1", "main")
    for ref in ("v1", commit.id, "main~1", "nobranch"):
        with pytest.raises(ClientError) as error:
            s3.put_object(Bucket="repo", Key=f"{ref}/b.txt", Body=b"b")
        assert (status(error), code(error)) == (404, "NoSuchBranch"), ref
    with pytest.raises(ClientError) as error:
        s3.delete_object(Bucket="repo", Key="v1/a.txt")
    assert code(error) == "NoSuchBranch"
    assert s3.get_object(Bucket="repo", Key="v1/a.txt")["Body"].read() == b"a"


def test_key_without_a_path(s3: BaseClient, repo: Repository) -> None:
    for key in ("main", "main/"):
        with pytest.raises(ClientError) as error:
            s3.put_object(Bucket="repo", Key=key, Body=b"x")
        assert (status(error), code(error)) == (400, "InvalidArgument")


def test_missing_bucket_key_and_ref(s3: BaseClient, repo: Repository) -> None:
    with pytest.raises(ClientError) as error:
        s3.get_object(Bucket="no-such-repo", Key="main/a")
    assert (status(error), code(error)) == (404, "NoSuchBucket")
    with pytest.raises(ClientError) as error:
        s3.get_object(Bucket="repo", Key="main/missing")
    assert (status(error), code(error)) == (404, "NoSuchKey")
    with pytest.raises(ClientError) as error:
        s3.get_object(Bucket="repo", Key="no-branch/a")
    assert code(error) == "NoSuchKey"


def test_if_none_match_star(s3: BaseClient, harness: Harness, repo: Repository) -> None:
    s3.put_object(Bucket="repo", Key="main/once", Body=b"first", IfNoneMatch="*")
    with pytest.raises(ClientError) as error:
        s3.put_object(Bucket="repo", Key="main/once", Body=b"second", IfNoneMatch="*")
    assert (status(error), code(error)) == (412, "PreconditionFailed")
    assert s3.get_object(Bucket="repo", Key="main/once")["Body"].read() == b"first"


def test_conditional_reads(s3: BaseClient, repo: Repository) -> None:
    etag = s3.put_object(Bucket="repo", Key="main/c", Body=b"data")["ETag"]
    assert s3.get_object(Bucket="repo", Key="main/c", IfMatch=etag)["Body"].read() == b"data"
    with pytest.raises(ClientError) as error:
        s3.get_object(Bucket="repo", Key="main/c", IfMatch='"0000"')
    assert status(error) == 412
    with pytest.raises(ClientError) as error:
        s3.get_object(Bucket="repo", Key="main/c", IfNoneMatch=etag)
    assert status(error) == 304
    future = formatdate(time.time() + 3600, usegmt=True)
    with pytest.raises(ClientError) as error:
        s3.head_object(Bucket="repo", Key="main/c", IfModifiedSince=future)
    assert status(error) == 304
    with pytest.raises(ClientError) as error:
        s3.get_object(Bucket="repo", Key="main/c", IfUnmodifiedSince=formatdate(0, usegmt=True))
    assert status(error) == 412


def test_response_header_overrides(s3: BaseClient, repo: Repository) -> None:
    s3.put_object(Bucket="repo", Key="main/o.csv", Body=b"a,b")
    got = s3.get_object(
        Bucket="repo",
        Key="main/o.csv",
        ResponseContentType="text/csv",
        ResponseContentDisposition="attachment; filename=o.csv",
    )
    assert got["ContentType"] == "text/csv"
    assert got["ContentDisposition"] == "attachment; filename=o.csv"


def test_delete_object(s3: BaseClient, harness: Harness, repo: Repository) -> None:
    s3.put_object(Bucket="repo", Key="main/d.txt", Body=b"d")
    harness.services.engine.commits.commit("repo", "main", "alice", "c")
    assert s3.delete_object(Bucket="repo", Key="main/d.txt")["ResponseMetadata"]["HTTPStatusCode"] == 204
    with pytest.raises(ClientError):
        s3.head_object(Bucket="repo", Key="main/d.txt")
    assert s3.get_object(Bucket="repo", Key="main@/d.txt")["Body"].read() == b"d"  # still committed
    assert s3.delete_object(Bucket="repo", Key="main/never-existed")["ResponseMetadata"]["HTTPStatusCode"] == 204


def test_keys_with_special_characters(s3: BaseClient, harness: Harness, repo: Repository) -> None:
    keys = ["a b/c+d.txt", "ñandú/✓.bin", "q?x=1&y", "percent%2Fliteral", "dir//double", "~tilde!*'()"]
    for key in keys:
        s3.put_object(Bucket="repo", Key=f"main/{key}", Body=key.encode())
    for key in keys:
        assert s3.get_object(Bucket="repo", Key=f"main/{key}")["Body"].read() == key.encode()
        harness.services.engine.objects.stat_object("repo", "main", key)  # stored under exactly that path
    listed = [o["Key"] for o in s3.list_objects_v2(Bucket="repo", Prefix="main/")["Contents"]]
    assert listed == sorted(f"main/{k}" for k in keys)


def test_empty_object(s3: BaseClient, repo: Repository) -> None:
    s3.put_object(Bucket="repo", Key="main/empty", Body=b"")
    got = s3.get_object(Bucket="repo", Key="main/empty")
    assert (got["ContentLength"], got["Body"].read()) == (0, b"")


def test_garbage_collected_data_is_no_such_version(s3: BaseClient, harness: Harness, repo: Repository) -> None:
    s3.put_object(Bucket="repo", Key="main/gone.bin", Body=b"soon gone")
    entry = harness.services.engine.objects.stat_object("repo", "main", "gone.bin")
    harness.services.engine.ports.blocks.delete(entry.physical_address)  # what GC's sweep does
    with pytest.raises(ClientError) as error:
        s3.get_object(Bucket="repo", Key="main/gone.bin")
    assert (status(error), code(error)) == (404, "NoSuchVersion")


def test_read_only_repository_refuses_writes(s3: BaseClient, harness: Harness) -> None:
    harness.services.engine.repositories.create_repository("frozen", "s3://lakelet-test/frozen", read_only=True)
    with pytest.raises(ClientError) as error:
        s3.put_object(Bucket="frozen", Key="main/a", Body=b"a")
    assert (status(error), code(error)) == (403, "AccessDenied")


def test_content_md5_is_checked(harness: Harness, repo: Repository) -> None:
    s3 = harness.client("http")
    good = base64.b64encode(hashlib.md5(b"body").digest()).decode()
    s3.put_object(Bucket="repo", Key="main/md5", Body=b"body", ContentMD5=good)
    bad = base64.b64encode(hashlib.md5(b"other").digest()).decode()
    with pytest.raises(ClientError) as error:
        s3.put_object(Bucket="repo", Key="main/md5-bad", Body=b"body", ContentMD5=bad)
    assert (status(error), code(error)) == (400, "BadDigest")
    with pytest.raises(ClientError):
        s3.head_object(Bucket="repo", Key="main/md5-bad")


@pytest.mark.parametrize("key", ["main", "main/", "main@/"])
def test_a_ref_without_a_path_is_no_such_key(s3_http: BaseClient, repo: Repository, key: str) -> None:
    """S3A's getFileStatus HEADs the parent of every path it writes, ``<branch>`` itself for a path at the root of a
    branch: it needs 404 there (as from lakeFS) to see a directory, where a 400 stops every Spark write."""
    with pytest.raises(ClientError) as head:
        s3_http.head_object(Bucket="repo", Key=key)
    assert status(head) == 404
    with pytest.raises(ClientError) as get:
        s3_http.get_object(Bucket="repo", Key=key)
    assert (status(get), code(get)) == (404, "NoSuchKey")
