"""BlockStore on S3: blobs addressed ``s3://bucket/key``, read whole or by byte range, shared by presigned URL.

The caller builds the boto3 S3 client (endpoint, region, retries) and passes it in, as Powertools does, so the
Lambda, the local stack and the tests each bring their own.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterator
from contextlib import contextmanager

from botocore.client import BaseClient
from botocore.exceptions import BotoCoreError, ClientError

from chalicelib.graveler import errors
from chalicelib.graveler.ports import PutResult

_SCHEME = "s3://"
# S3 names a missing key differently per call: GetObject says NoSuchKey, HeadObject only has the status.
_MISSING_CODES = frozenset({"NoSuchKey", "404", "NotFound"})


def split_address(address: str) -> tuple[str, str]:
    """``s3://bucket/key`` -> (bucket, key). Raises Invalid for anything else."""
    bucket, _, key = address.removeprefix(_SCHEME).partition("/")
    if not address.startswith(_SCHEME) or not bucket or not key:
        raise errors.Invalid(f"not an s3://bucket/key address: {address!r}")
    return bucket, key


def _error_code(error: ClientError) -> str:
    return str(error.response.get("Error", {}).get("Code", ""))


@contextmanager
def _s3_errors(address: str) -> Iterator[None]:
    try:
        yield
    except ClientError as e:
        if _error_code(e) in _MISSING_CODES:
            raise errors.ObjectNotFound(address) from e
        raise errors.StorageError(f"S3 {_error_code(e)} on {address}: {e}") from e
    except BotoCoreError as e:
        raise errors.StorageError(f"S3 on {address}: {e}") from e


class S3BlockStore:
    """The BlockStore port on S3, through a boto3 S3 client given by the caller."""

    def __init__(self, client: BaseClient) -> None:
        self._client = client

    def put(self, address: str, data: bytes) -> PutResult:
        bucket, key = split_address(address)
        digest = hashlib.md5(data)
        with _s3_errors(address):
            # Content-MD5 makes S3 reject a body damaged on the way instead of storing it.
            self._client.put_object(
                Bucket=bucket, Key=key, Body=data, ContentMD5=base64.b64encode(digest.digest()).decode()
            )
        # The MD5 computed here, not the returned ETag: with SSE-KMS or multipart S3's ETag is not an MD5.
        return PutResult(size=len(data), etag=digest.hexdigest())

    def get(self, address: str, start: int | None = None, end: int | None = None) -> bytes:
        bucket, key = split_address(address)
        if start is None:
            with _s3_errors(address):
                return bytes(self._client.get_object(Bucket=bucket, Key=key)["Body"].read())
        if end is not None and end < start:
            return b""  # S3 would ignore such a header and send the whole blob
        byte_range = f"bytes={start}-" if end is None else f"bytes={start}-{end}"
        try:
            with _s3_errors(address):
                return bytes(self._client.get_object(Bucket=bucket, Key=key, Range=byte_range)["Body"].read())
        except errors.StorageError as e:
            # A range starting past the end is empty, as slicing is (the in-memory twin's behaviour);
            # callers that must answer 416 check the range against the entry's size first.
            if isinstance(e.__cause__, ClientError) and _error_code(e.__cause__) == "InvalidRange":
                return b""
            raise

    def exists(self, address: str) -> bool:
        bucket, key = split_address(address)
        try:
            with _s3_errors(address):
                self._client.head_object(Bucket=bucket, Key=key)
        except errors.ObjectNotFound:
            return False
        return True

    def presign_get(self, address: str, expires_seconds: int) -> str:
        bucket, key = split_address(address)
        with _s3_errors(address):
            url = self._client.generate_presigned_url(
                "get_object", Params={"Bucket": bucket, "Key": key}, ExpiresIn=expires_seconds
            )
        return str(url)

    def presign_put(self, address: str, expires_seconds: int) -> str:
        bucket, key = split_address(address)
        with _s3_errors(address):
            url = self._client.generate_presigned_url(
                "put_object", Params={"Bucket": bucket, "Key": key}, ExpiresIn=expires_seconds
            )
        return str(url)

    def delete(self, address: str) -> None:
        bucket, key = split_address(address)
        with _s3_errors(address):
            # DeleteObject succeeds on a missing key, which makes this idempotent.
            self._client.delete_object(Bucket=bucket, Key=key)
