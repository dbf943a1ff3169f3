"""BlockStore contract: the in-memory twin and S3BlockStore (on moto) behave the same.

The last tests are about the S3 adapter alone: address parsing, error translation, and a presigned URL
fetched over real HTTP from a moto server.
"""

from __future__ import annotations

import hashlib
import os
import uuid
from collections.abc import Iterator

import boto3
import pytest
import requests
from moto import mock_aws
from moto.server import ThreadedMotoServer

from chalicelib.adapters.s3 import S3BlockStore, split_address
from chalicelib.graveler import errors
from chalicelib.graveler.ports import BlockStore

REGION = "us-east-1"
DATA = bytes(range(256)) * 3 + b"tail"


@pytest.fixture
def address(bucket: str) -> str:
    return f"s3://{bucket}/ns/data/g1/{uuid.uuid4().hex}"


def test_put_reports_size_and_md5(block_store: BlockStore, address: str) -> None:
    result = block_store.put(address, DATA)
    assert result.size == len(DATA)
    assert result.etag == hashlib.md5(DATA).hexdigest()
    assert block_store.get(address) == DATA


def test_empty_blob(block_store: BlockStore, address: str) -> None:
    result = block_store.put(address, b"")
    assert (result.size, result.etag) == (0, hashlib.md5(b"").hexdigest())
    assert block_store.get(address) == b""
    assert block_store.exists(address)


def test_key_with_spaces_and_unicode(block_store: BlockStore, bucket: str) -> None:
    address = f"s3://{bucket}/ns/a dir/ñandú ✓/file+1%2F.txt"
    block_store.put(address, b"payload")
    assert block_store.get(address) == b"payload"
    assert block_store.exists(address)
    assert not block_store.exists(f"s3://{bucket}/ns/a dir/ñandú ✓/file 1%2F.txt")


@pytest.mark.parametrize(
    ("start", "end"),
    [(0, 0), (0, 9), (2, 5), (100, 355), (len(DATA) - 1, len(DATA) - 1), (0, len(DATA) - 1), (17, None)],
)
def test_get_byte_range(block_store: BlockStore, address: str, start: int, end: int | None) -> None:
    block_store.put(address, DATA)
    expected = DATA[start:] if end is None else DATA[start : end + 1]
    assert block_store.get(address, start, end) == expected


def test_get_range_past_the_end(block_store: BlockStore, address: str) -> None:
    block_store.put(address, DATA)
    # An end beyond the blob stops at the blob's end; a start beyond it reads nothing.
    assert block_store.get(address, len(DATA) - 4, len(DATA) + 1000) == b"tail"
    assert block_store.get(address, len(DATA), len(DATA) + 10) == b""
    assert block_store.get(address, len(DATA) + 5) == b""
    assert block_store.get(address, 10, 9) == b""


def test_get_missing(block_store: BlockStore, address: str) -> None:
    with pytest.raises(errors.ObjectNotFound):
        block_store.get(address)
    with pytest.raises(errors.ObjectNotFound):
        block_store.get(address, 0, 10)


def test_exists(block_store: BlockStore, address: str) -> None:
    assert not block_store.exists(address)
    block_store.put(address, DATA)
    assert block_store.exists(address)
    # A key is not a prefix: its parent "directory" does not exist as a blob.
    assert not block_store.exists(address.rsplit("/", 1)[0])


def test_delete_is_idempotent(block_store: BlockStore, address: str) -> None:
    block_store.put(address, DATA)
    block_store.delete(address)
    assert not block_store.exists(address)
    with pytest.raises(errors.ObjectNotFound):
        block_store.get(address)
    block_store.delete(address)


def test_delete_leaves_other_blobs(block_store: BlockStore, bucket: str) -> None:
    keep, drop = f"s3://{bucket}/ns/keep", f"s3://{bucket}/ns/drop"
    block_store.put(keep, b"k")
    block_store.put(drop, b"d")
    block_store.delete(drop)
    assert block_store.get(keep) == b"k"


def test_presign_get(block_store: BlockStore, address: str, variant: str) -> None:
    block_store.put(address, DATA)
    url = block_store.presign_get(address, 300)
    assert isinstance(url, str) and url.startswith(("https://", "http://"))
    if variant == "aws":
        # moto in-process also answers plain `requests` calls to AWS hosts.
        response = requests.get(url, timeout=10)
        assert response.status_code == 200
        assert response.content == DATA
        assert "Expires=" in url or "X-Amz-Expires=300" in url


def test_presign_put(block_store: BlockStore, address: str, variant: str) -> None:
    url = block_store.presign_put(address, 300)
    assert isinstance(url, str) and url.startswith(("https://", "http://"))
    if variant == "aws":
        response = requests.put(url, data=DATA, timeout=10)
        assert response.status_code == 200
        assert block_store.get(address) == DATA


# The S3 adapter alone


@pytest.fixture
def s3_only(fake_aws_env: None) -> Iterator[S3BlockStore]:
    with mock_aws():
        client = boto3.client("s3", region_name=REGION)
        client.create_bucket(Bucket="only-bucket")
        yield S3BlockStore(client)


@pytest.mark.parametrize("address", ["bucket/key", "s3://bucket", "s3://bucket/", "s3:///key", "gs://b/k", ""])
def test_address_must_name_bucket_and_key(address: str) -> None:
    with pytest.raises(errors.Invalid):
        split_address(address)


def test_split_address_keeps_the_key_whole() -> None:
    assert split_address("s3://b/ns/a//b/") == ("b", "ns/a//b/")


def test_missing_bucket_is_a_storage_error(s3_only: S3BlockStore) -> None:
    with pytest.raises(errors.StorageError):
        s3_only.put("s3://no-such-bucket-here/k", b"x")
    with pytest.raises(errors.StorageError) as caught:
        s3_only.get("s3://no-such-bucket-here/k")
    assert not isinstance(caught.value, errors.NotFound)


def test_presigned_url_over_http(fake_aws_env: None) -> None:
    assert "AWS_ENDPOINT_URL" not in os.environ
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        client = boto3.client("s3", region_name=REGION, endpoint_url=f"http://{host}:{port}")
        bucket = f"http-{uuid.uuid4().hex[:12]}"
        client.create_bucket(Bucket=bucket)
        store = S3BlockStore(client)
        address = f"s3://{bucket}/ns/data/file with space.bin"
        store.put(address, DATA)
        url = store.presign_get(address, 60)
        assert url.startswith(f"http://{host}:{port}/")
        response = requests.get(url, timeout=10)
        assert response.status_code == 200
        assert response.content == DATA
        ranged = requests.get(url, headers={"Range": "bytes=3-6"}, timeout=10)
        assert ranged.status_code == 206 and ranged.content == DATA[3:7]
    finally:
        server.stop()
