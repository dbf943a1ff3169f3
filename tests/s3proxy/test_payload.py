"""Request bodies: aws-chunked decoding (botocore's own encoder), trailer and header checksums, declared
lengths, and the payload modes the gateway refuses."""

from __future__ import annotations

import base64
import hashlib
import io
import zlib

import pytest
from botocore.httpchecksum import AwsChunkedWrapper, Crc32Checksum, Sha256Checksum

from chalicelib.s3proxy.errors import S3Error
from chalicelib.s3proxy.model import Request
from chalicelib.s3proxy.payload import check_integrity, decode_chunked, request_body
from chalicelib.s3proxy.sigv4 import Identity

DATA = bytes(range(256)) * 1000 + b"tail"
IDENTITY = Identity("u", "k", "20240101T000000Z", "us-east-1", "0" * 64, "secret", presigned=False)


def chunked(data: bytes, checksum: type = Crc32Checksum, name: str = "x-amz-checksum-crc32") -> bytes:
    return AwsChunkedWrapper(io.BytesIO(data), checksum_cls=checksum, checksum_name=name, chunk_size=7000).read()


def request(body: bytes, **headers: str) -> Request:
    return Request.build(
        "PUT", "/r/main/k", "", {"x-amz-content-sha256": "STREAMING-UNSIGNED-PAYLOAD-TRAILER", **headers}, body
    )


def test_unsigned_chunked_with_trailers() -> None:
    for checksum, name in [(Crc32Checksum, "x-amz-checksum-crc32"), (Sha256Checksum, "x-amz-checksum-sha256")]:
        body = chunked(DATA, checksum, name)
        data, trailer = decode_chunked(body, signed=False, identity=None, signer=None)
        assert data == DATA and name in trailer
        assert (
            request_body(request(body, **{"x-amz-decoded-content-length": str(len(DATA))}), IDENTITY, signer=None)
            == DATA
        )  # type: ignore[arg-type]


def test_corrupted_chunked_bodies() -> None:
    body = chunked(DATA)
    cases = {
        "flipped byte": body.replace(b"tail", b"tall"),
        "truncated": body[:-40],
        "bad size": b"zz\r\n" + body,
        "chunk longer than declared": body.replace(b"1b58\r\n", b"1b57\r\n", 1),
    }
    for what, broken in cases.items():
        with pytest.raises(S3Error) as error:
            request_body(request(broken), IDENTITY, signer=None)  # type: ignore[arg-type]
        assert error.value.code in ("BadDigest", "IncompleteBody"), what


def test_declared_length_must_match() -> None:
    with pytest.raises(S3Error) as error:
        request_body(request(chunked(DATA), **{"x-amz-decoded-content-length": "5"}), IDENTITY, None)  # type: ignore[arg-type]
    assert error.value.code == "IncompleteBody"


def test_header_checksums() -> None:
    crc = base64.b64encode(zlib.crc32(DATA).to_bytes(4, "big")).decode()
    sha1 = base64.b64encode(hashlib.sha1(DATA).digest()).decode()
    check_integrity(Request.build("PUT", "/", "", {"x-amz-checksum-crc32": crc, "x-amz-checksum-sha1": sha1}), DATA, {})
    check_integrity(Request.build("PUT", "/", "", {"x-amz-checksum-crc32c": "AAAAAA=="}), DATA, {})  # not verifiable
    for headers, expected in [
        ({"x-amz-checksum-crc32": "AAAAAA=="}, "BadDigest"),
        ({"x-amz-checksum-sha1": "not base64!"}, "InvalidDigest"),
        ({"content-md5": base64.b64encode(hashlib.md5(b"x").digest()).decode()}, "BadDigest"),
        ({"x-amz-checksum-whirlpool": "AAAA"}, "InvalidRequest"),
    ]:
        with pytest.raises(S3Error) as error:
            check_integrity(Request.build("PUT", "/", "", headers), DATA, {})
        assert error.value.code == expected


def test_payload_modes() -> None:
    sha = hashlib.sha256(DATA).hexdigest()
    assert request_body(Request.build("PUT", "/", "", {"x-amz-content-sha256": sha}, DATA), IDENTITY, None) == DATA  # type: ignore[arg-type]
    assert (
        request_body(Request.build("PUT", "/", "", {"x-amz-content-sha256": "UNSIGNED-PAYLOAD"}, DATA), IDENTITY, None)
        == DATA
    )  # type: ignore[arg-type]
    for mode, expected in [
        ("STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD", "NotImplemented"),
        (hashlib.sha256(b"other").hexdigest(), "XAmzContentSHA256Mismatch"),
    ]:
        with pytest.raises(S3Error) as error:
            request_body(Request.build("PUT", "/", "", {"x-amz-content-sha256": mode}, DATA), IDENTITY, None)  # type: ignore[arg-type]
        assert error.value.code == expected


def test_identity_never_shows_its_secret() -> None:
    assert "secret" not in repr(IDENTITY) and "secret" not in str(IDENTITY)
