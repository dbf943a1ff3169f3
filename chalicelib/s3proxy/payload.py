"""The request body as the client meant it: the declared payload hash checked, aws-chunked bodies decoded and
their chunk signatures verified, and integrity headers (Content-MD5, x-amz-checksum-*) checked.

Payload modes (x-amz-content-sha256):
- a hex SHA-256: the body must hash to it (every request boto3 sends over plain HTTP);
- UNSIGNED-PAYLOAD: taken as is (presigned URLs, and boto3 over HTTPS);
- STREAMING-AWS4-HMAC-SHA256-PAYLOAD[-TRAILER]: aws-chunked, each chunk signed with a signature chained from the
  request's (the seed), and with -TRAILER a signed trailer carrying a checksum;
- STREAMING-UNSIGNED-PAYLOAD-TRAILER: aws-chunked without signatures, a checksum in the trailer (boto3 uploads
  over HTTPS this way by default).
CRC32, SHA-1 and SHA-256 checksums are verified; CRC32C and CRC64NVME need code outside the standard library and
are accepted unverified (they guard against corruption, and the signature or TLS already covers the body).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import zlib
from collections.abc import Callable

from chalicelib.auth.ports import Signer

from .errors import S3Error
from .model import Request
from .sigv4 import SERVICE, UNSIGNED_PAYLOAD, Identity

SIGNED_STREAMING = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"
SIGNED_STREAMING_TRAILER = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER"
UNSIGNED_STREAMING_TRAILER = "STREAMING-UNSIGNED-PAYLOAD-TRAILER"
EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()
_MAX_CHUNK_HEADER = 4096


def _crc32(data: bytes) -> bytes:
    return zlib.crc32(data).to_bytes(4, "big")


# x-amz-checksum-<name> -> digest function (the header carries base64 of the digest)
CHECKSUMS: dict[str, Callable[[bytes], bytes]] = {
    "crc32": _crc32,
    "sha1": lambda data: hashlib.sha1(data).digest(),
    "sha256": lambda data: hashlib.sha256(data).digest(),
}
UNVERIFIED_CHECKSUMS = frozenset({"crc32c", "crc64nvme"})


class _Reader:
    """Reads the framing of an aws-chunked body."""

    def __init__(self, data: bytes) -> None:
        self._data = data
        self._pos = 0

    def line(self) -> bytes:
        end = self._data.find(b"\r\n", self._pos, self._pos + _MAX_CHUNK_HEADER)
        if end < 0:
            raise S3Error("IncompleteBody", "aws-chunked body: a chunk header or trailer line is cut short")
        line = self._data[self._pos : end]
        self._pos = end + 2
        return line

    def take(self, size: int) -> bytes:
        chunk = self._data[self._pos : self._pos + size]
        if len(chunk) != size:
            raise S3Error("IncompleteBody", "aws-chunked body: a chunk is shorter than its declared size")
        self._pos += size
        return chunk

    def at_end(self) -> bool:
        return self._pos >= len(self._data)


def _chunk_string_to_sign(identity: Identity, previous: str, chunk: bytes) -> str:
    return "\n".join(
        [
            "AWS4-HMAC-SHA256-PAYLOAD",
            identity.amz_date,
            identity.scope,
            previous,
            EMPTY_SHA256,
            hashlib.sha256(chunk).hexdigest(),
        ]
    )


def _trailer_string_to_sign(identity: Identity, previous: str, trailer: list[tuple[str, str]]) -> str:
    canonical = "".join(f"{name}:{value}\n" for name, value in trailer)
    return "\n".join(
        [
            "AWS4-HMAC-SHA256-TRAILER",
            identity.amz_date,
            identity.scope,
            previous,
            hashlib.sha256(canonical.encode()).hexdigest(),
        ]
    )


def _verify(identity: Identity, signer: Signer, string_to_sign: str, provided: str) -> None:
    expected = signer.signature(identity.secret, identity.amz_date, identity.region, SERVICE, string_to_sign)
    if not hmac.compare_digest(expected.encode(), provided.lower().encode()):
        raise S3Error("SignatureDoesNotMatch", "a chunk signature of the aws-chunked body does not match")


def decode_chunked(
    body: bytes, signed: bool, identity: Identity | None, signer: Signer | None
) -> tuple[bytes, dict[str, str]]:
    """(decoded body, trailer headers). With ``signed``, every chunk signature is verified from the seed."""
    reader = _Reader(body)
    parts: list[bytes] = []
    previous = identity.signature if identity is not None else ""
    while True:
        header = reader.line().decode("latin-1")
        size_text, _, extension = header.partition(";")
        try:
            size = int(size_text.strip(), 16)
        except ValueError:
            raise S3Error("IncompleteBody", f"aws-chunked body: bad chunk size {size_text[:20]!r}") from None
        chunk = reader.take(size)
        if signed:
            assert identity is not None and signer is not None
            name, _, provided = extension.partition("=")
            if name.strip() != "chunk-signature" or not provided:
                raise S3Error("SignatureDoesNotMatch", "aws-chunked body: a chunk carries no signature")
            _verify(identity, signer, _chunk_string_to_sign(identity, previous, chunk), provided.strip())
            previous = provided.strip().lower()
        if size == 0:
            break
        parts.append(chunk)
        if reader.line() != b"":
            raise S3Error("IncompleteBody", "aws-chunked body: a chunk is longer than its declared size")
    trailer: list[tuple[str, str]] = []
    trailer_signature = ""
    while not reader.at_end():
        line = reader.line().decode("latin-1")
        if not line:
            break
        name, sep, value = line.partition(":")
        if not sep:
            raise S3Error("IncompleteBody", "aws-chunked body: malformed trailer line")
        if name.strip().lower() == "x-amz-trailer-signature":
            trailer_signature = value.strip()
        else:
            trailer.append((name.strip().lower(), value.strip()))
    if signed and trailer:
        assert identity is not None and signer is not None
        if not trailer_signature:
            raise S3Error("SignatureDoesNotMatch", "aws-chunked body: the trailer is not signed")
        _verify(identity, signer, _trailer_string_to_sign(identity, previous, trailer), trailer_signature)
    return b"".join(parts), dict(trailer)


def _check_digest(name: str, expected_b64: str, compute: Callable[[bytes], bytes], data: bytes) -> None:
    try:
        expected = base64.b64decode(expected_b64, validate=True)
    except (binascii.Error, ValueError):
        raise S3Error("InvalidDigest", f"{name} is not valid base64") from None
    if not hmac.compare_digest(expected, compute(data)):
        raise S3Error("BadDigest", f"the {name} you specified did not match the body received")


def check_integrity(request: Request, data: bytes, trailer: dict[str, str]) -> None:
    """Content-MD5 and x-amz-checksum-* (as headers or trailer fields) must match the decoded body."""
    md5 = request.header("content-md5")
    if md5:
        _check_digest("Content-MD5", md5, lambda b: hashlib.md5(b).digest(), data)
    fields = {**{k: v for k, v in request.headers.items() if k.startswith("x-amz-checksum-")}, **trailer}
    for name, value in fields.items():
        algorithm = name.removeprefix("x-amz-checksum-")
        if algorithm in CHECKSUMS:
            _check_digest(name, value, CHECKSUMS[algorithm], data)
        elif algorithm not in UNVERIFIED_CHECKSUMS and algorithm not in ("algorithm", "type", "mode"):
            raise S3Error("InvalidRequest", f"unsupported checksum {name}")


def request_body(request: Request, identity: Identity, signer: Signer) -> bytes:
    """The body the operation must use. Raises S3Error when it does not verify; nothing has happened yet then."""
    mode = UNSIGNED_PAYLOAD if identity.presigned else request.header("x-amz-content-sha256")
    if identity.presigned and request.param("X-Amz-Content-Sha256"):
        mode = request.param("X-Amz-Content-Sha256")
    trailer: dict[str, str] = {}
    data = request.body
    if mode in (SIGNED_STREAMING, SIGNED_STREAMING_TRAILER, UNSIGNED_STREAMING_TRAILER):
        data, trailer = decode_chunked(request.body, mode != UNSIGNED_STREAMING_TRAILER, identity, signer)
        declared = request.header("x-amz-decoded-content-length")
        if declared and (not declared.isdigit() or int(declared) != len(data)):
            raise S3Error("IncompleteBody", "the decoded body does not have x-amz-decoded-content-length bytes")
    elif mode.startswith("STREAMING-"):
        raise S3Error("NotImplemented", f"payload mode {mode} is not supported")
    elif mode != UNSIGNED_PAYLOAD and not hmac.compare_digest(
        hashlib.sha256(data).hexdigest().encode(), mode.lower().encode()
    ):
        raise S3Error(
            "XAmzContentSHA256Mismatch",
            details={"ClientComputedContentSHA256": mode, "S3ComputedContentSHA256": hashlib.sha256(data).hexdigest()},
        )
    check_integrity(request, data, trailer)
    return data
