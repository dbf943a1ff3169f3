"""BlockStore contract: the in-memory twin and S3BlockStore (on moto) behave the same.

The last tests are about the S3 adapter alone: address parsing, error translation, and a presigned URL
fetched over real HTTP from a moto server.
"""

from __future__ import annotations

import hashlib
import os
import threading
import uuid
from collections.abc import Iterator
from unittest.mock import patch

import boto3
import pytest
import requests
from botocore.exceptions import ClientError
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
        # SigV4 even in us-east-1, where botocore would presign with SigV2 unless told otherwise.
        assert "X-Amz-Algorithm=AWS4-HMAC-SHA256" in url and "X-Amz-Expires=300" in url


def test_presign_put(block_store: BlockStore, address: str, variant: str) -> None:
    url = block_store.presign_put(address, 300)
    assert isinstance(url, str) and url.startswith(("https://", "http://"))
    if variant == "aws":
        response = requests.put(url, data=DATA, timeout=10)
        assert response.status_code == 200
        assert block_store.get(address) == DATA
        assert "X-Amz-Algorithm=AWS4-HMAC-SHA256" in url and "SignedHeaders=host&" in url


def test_presign_put_write_once(block_store: BlockStore, address: str, variant: str) -> None:
    """Signed for If-None-Match: *, the URL writes the blob once; a second PUT is refused and changes nothing.
    (moto checks the condition but not signatures; real S3 also refuses a PUT that leaves the header out.)"""
    url = block_store.presign_put(address, 300, if_none_match=True)
    assert url.startswith(("https://", "http://"))
    if variant == "aws":
        assert "X-Amz-SignedHeaders=host%3Bif-none-match" in url
        assert requests.put(url, data=DATA, headers={"If-None-Match": "*"}, timeout=10).status_code == 200
        again = requests.put(url, data=b"other", headers={"If-None-Match": "*"}, timeout=10)
        assert again.status_code == 412
        assert block_store.get(address) == DATA
    else:
        assert url != block_store.presign_put(address, 300)


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


# Listing, server-side copies and multipart uploads (the S3 gateway's large-object paths)

MIB = 1024 * 1024
BIG = bytes(range(256)) * (5 * MIB // 256)  # exactly S3's minimum part size
assert len(BIG) == 5 * MIB


def test_list_blobs_by_prefix_in_order(block_store: BlockStore, bucket: str) -> None:
    for name, data in [("ns/b/2", b"22"), ("ns/a", b"1"), ("ns/b/1", b""), ("ns-other/x", b"x"), ("other", b"o")]:
        block_store.put(f"s3://{bucket}/{name}", data)
    assert list(block_store.list_blobs(f"s3://{bucket}/ns/")) == [
        (f"s3://{bucket}/ns/a", 1),
        (f"s3://{bucket}/ns/b/1", 0),
        (f"s3://{bucket}/ns/b/2", 2),
    ]
    assert [a for a, _ in block_store.list_blobs(f"s3://{bucket}/ns")] == [
        f"s3://{bucket}/ns-other/x",
        f"s3://{bucket}/ns/a",
        f"s3://{bucket}/ns/b/1",
        f"s3://{bucket}/ns/b/2",
    ]
    assert list(block_store.list_blobs(f"s3://{bucket}/nothing/")) == []


def test_copy_inside_the_store(block_store: BlockStore, bucket: str, address: str) -> None:
    block_store.put(address, DATA)
    target = f"s3://{bucket}/other-ns/data/copy"
    result = block_store.copy(address, target)
    assert result.size == len(DATA)
    assert block_store.get(target) == DATA
    assert block_store.get(address) == DATA
    with pytest.raises(errors.ObjectNotFound):
        block_store.copy(f"s3://{bucket}/ns/missing", f"s3://{bucket}/ns/never")
    assert not block_store.exists(f"s3://{bucket}/ns/never")


def test_stat_reports_what_is_stored_now(block_store: BlockStore, bucket: str, address: str) -> None:
    with pytest.raises(errors.ObjectNotFound):
        block_store.stat(address)
    written = block_store.put(address, DATA)
    assert block_store.stat(address) == written
    block_store.put(address, b"rewritten")
    assert block_store.stat(address) == block_store.put(address, b"rewritten")
    copied = f"s3://{bucket}/ns/data/g1/copy-{uuid.uuid4().hex}"
    block_store.copy(address, copied)
    assert block_store.stat(copied).etag == hashlib.md5(b"rewritten").hexdigest()  # a single copy: still an MD5


def test_presign_upload_part_names_the_upload_and_part(block_store: BlockStore, address: str) -> None:
    upload_id = block_store.create_multipart_upload(address)
    url = block_store.presign_upload_part(address, upload_id, 7, 300)
    assert url.startswith(("http://", "https://")) and "partNumber=7" in url and "uploadId=" in url
    block_store.abort_multipart_upload(address, upload_id)


def test_storage_class_is_standard_for_a_plain_put(block_store: BlockStore, address: str) -> None:
    with pytest.raises(errors.ObjectNotFound):
        block_store.storage_class(address)
    block_store.put(address, DATA)
    assert block_store.storage_class(address) == "STANDARD"


def test_put_if_absent_has_exactly_one_winner(block_store: BlockStore, address: str) -> None:
    assert block_store.put_if_absent(address, b"first")
    assert not block_store.put_if_absent(address, b"second")
    assert block_store.get(address) == b"first"
    contested = address + "-contested"
    barrier = threading.Barrier(6)
    outcomes: list[bool] = []

    def attempt(n: int) -> None:
        barrier.wait()
        outcomes.append(block_store.put_if_absent(contested, f"writer {n}".encode()))

    threads = [threading.Thread(target=attempt, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == [False] * 5 + [True]
    assert block_store.get(contested).startswith(b"writer ")


def test_multipart_upload_round_trip(block_store: BlockStore, address: str) -> None:
    upload = block_store.create_multipart_upload(address)
    first = block_store.upload_part(address, upload, 1, BIG)
    last = block_store.upload_part(address, upload, 3, b"tail bytes")
    assert (first.size, first.etag) == (len(BIG), hashlib.md5(BIG).hexdigest())
    assert last.size == 10
    assert [(n, r.size, r.etag) for n, r in block_store.list_parts(address, upload)] == [
        (1, first.size, first.etag),
        (3, last.size, last.etag),
    ]
    assert not block_store.exists(address)  # nothing is visible before completion
    result = block_store.complete_multipart_upload(address, upload, [(1, first.etag), (3, last.etag)])
    assert result.size == len(BIG) + 10
    expected_etag = hashlib.md5(bytes.fromhex(first.etag) + bytes.fromhex(last.etag)).hexdigest() + "-2"
    assert result.etag == expected_etag
    assert block_store.get(address) == BIG + b"tail bytes"
    assert block_store.stat(address) == result  # the ETag of a multipart object is not an MD5
    with pytest.raises(errors.ObjectNotFound):
        block_store.list_parts(address, upload)  # a completed upload is gone


def test_multipart_part_replaced_and_unlisted_parts_dropped(block_store: BlockStore, address: str) -> None:
    upload = block_store.create_multipart_upload(address)
    block_store.upload_part(address, upload, 1, b"x" * (5 * MIB))
    replaced = block_store.upload_part(address, upload, 1, BIG)
    dropped = block_store.upload_part(address, upload, 2, b"never listed")
    last = block_store.upload_part(address, upload, 4, b"end")
    assert [n for n, _ in block_store.list_parts(address, upload)] == [1, 2, 4]
    assert dropped.size == 12
    block_store.complete_multipart_upload(address, upload, [(1, replaced.etag), (4, last.etag)])
    assert block_store.get(address) == BIG + b"end"


def test_multipart_part_copy(block_store: BlockStore, bucket: str, address: str) -> None:
    source = f"s3://{bucket}/ns/source"
    block_store.put(source, b"0123456789" + BIG)
    upload = block_store.create_multipart_upload(address)
    whole = block_store.upload_part_copy(address, upload, 1, source, 10, 10 + len(BIG) - 1)
    piece = block_store.upload_part_copy(address, upload, 2, source, 2, 5)
    assert (whole.size, piece.size) == (len(BIG), 4)
    block_store.complete_multipart_upload(address, upload, [(1, whole.etag), (2, piece.etag)])
    assert block_store.get(address) == BIG + b"2345"


@pytest.mark.parametrize("problem", ["small-part-first", "wrong-etag", "missing-part", "no-parts", "descending"])
def test_multipart_complete_refuses_bad_part_lists(block_store: BlockStore, address: str, problem: str) -> None:
    upload = block_store.create_multipart_upload(address)
    small = block_store.upload_part(address, upload, 1, b"small")
    big = block_store.upload_part(address, upload, 2, BIG)
    parts = {
        "small-part-first": [(1, small.etag), (2, big.etag)],
        "wrong-etag": [(2, hashlib.md5(b"other").hexdigest())],
        "missing-part": [(2, big.etag), (3, small.etag)],
        "no-parts": [],
        "descending": [(2, big.etag), (1, small.etag)],
    }[problem]
    with pytest.raises(errors.Invalid):
        block_store.complete_multipart_upload(address, upload, parts)
    assert not block_store.exists(address)


def test_multipart_abort(block_store: BlockStore, address: str) -> None:
    upload = block_store.create_multipart_upload(address)
    block_store.upload_part(address, upload, 1, b"data")
    block_store.abort_multipart_upload(address, upload)
    block_store.abort_multipart_upload(address, upload)  # idempotent
    with pytest.raises(errors.ObjectNotFound):
        block_store.list_parts(address, upload)
    assert not block_store.exists(address)


def test_copy_names_the_version_it_looked_at_and_describes_the_copy(s3_only: S3BlockStore) -> None:
    """A presigned URL can rewrite a link's source between the adapter's HEAD and its CopyObject. The copy names
    the version the HEAD saw (CopySourceIfMatch, which S3 answers with 412 when the source changed; moto does not
    check it, so the 412 is simulated), so its result is the copy's size and ETag with no HEAD of the copy."""
    source, target = "s3://only-bucket/ns/data/upload", "s3://only-bucket/ns/data/copy"
    written = s3_only.put(source, b"first")
    client = s3_only._client
    with patch.object(client, "copy_object", wraps=client.copy_object) as copy_object:
        result = s3_only.copy(source, target)
    assert copy_object.call_args.kwargs["CopySourceIfMatch"] == f'"{written.etag}"'
    assert result == written == s3_only.stat(target)

    changed = ClientError(
        {
            "Error": {
                "Code": "PreconditionFailed",
                "Message": "At least one of the pre-conditions you specified did not hold",
            }
        },
        "CopyObject",
    )
    with patch.object(client, "copy_object", side_effect=changed), pytest.raises(errors.Conflict):
        s3_only.copy(source, "s3://only-bucket/ns/data/other")
