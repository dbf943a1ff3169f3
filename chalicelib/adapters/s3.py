"""BlockStore on S3: blobs addressed ``s3://bucket/key``, read whole or by byte range, shared by presigned URL,
listed by prefix, copied inside S3 and written by multipart upload (the S3 gateway's large-object paths).

The caller builds the boto3 S3 client (endpoint, region, retries) and passes it in, as Powertools does, so the
Lambda, the local stack and the tests each bring their own.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import pairwise

from botocore.client import BaseClient
from botocore.exceptions import BotoCoreError, ClientError

from chalicelib.graveler import errors
from chalicelib.graveler.ports import PutResult

__all__ = ["S3BlockStore"]

_SCHEME = "s3://"
# S3 names a missing key differently per call: GetObject says NoSuchKey, HeadObject only has the status.
_MISSING_CODES = frozenset({"NoSuchKey", "404", "NotFound", "NoSuchUpload"})
# What the caller asked for was wrong (a part list, a copy range): not a storage failure.
_INVALID_CODES = frozenset({"InvalidPart", "InvalidPartOrder", "EntityTooSmall", "InvalidArgument"})
# What S3 answers a conditional PutObject (If-None-Match: *) that lost: the key exists, or another is being written.
_LOST_CONDITIONAL_WRITE = frozenset({"PreconditionFailed", "412", "ConditionalRequestConflict", "409"})
STANDARD_STORAGE_CLASS = "STANDARD"
# S3 copies at most 5 GiB in one CopyObject or UploadPartCopy, and a multipart upload has at most 10,000 parts;
# a larger blob is copied in parts of at least COPY_PART_BYTES, COPY_WORKERS at a time (a 6 GiB link copies its 24
# parts in two rounds, within the API Lambda's 30 s).
COPY_PART_BYTES = 256 * 1024**2
COPY_WORKERS = 16
MAX_SINGLE_COPY_BYTES = 5 * 1024**3
MAX_COPY_PARTS = 10_000


def plan_copy(size: int) -> list[tuple[int, int]]:
    """The byte ranges (inclusive) a copy of a ``size``-byte blob is made of: one range when a single CopyObject
    can copy it (at most 5 GiB), otherwise parts of COPY_PART_BYTES (more for a blob that would need more than
    10,000 of them), each at most 5 GiB, the last one shorter."""
    if size <= MAX_SINGLE_COPY_BYTES:
        return [(0, size - 1)]
    part = max(COPY_PART_BYTES, -(-size // MAX_COPY_PARTS))
    if part > MAX_SINGLE_COPY_BYTES:
        raise errors.Invalid(f"a blob of {size} bytes is larger than S3 can hold")
    return [(start, min(start + part, size) - 1) for start in range(0, size, part)]


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
        if _error_code(e) in _INVALID_CODES:
            raise errors.Invalid(f"S3 {_error_code(e)} on {address}: {e}") from e
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

    def put_if_absent(self, address: str, data: bytes) -> bool:
        bucket, key = split_address(address)
        try:
            with _s3_errors(address):
                self._client.put_object(Bucket=bucket, Key=key, Body=data, IfNoneMatch="*")
        except errors.StorageError as e:
            # 412: the key exists. 409 ConditionalRequestConflict: a concurrent conditional write to the key is
            # in flight (S3 lets exactly one of them succeed): either way this caller lost.
            cause = e.__cause__
            if isinstance(cause, ClientError) and _error_code(cause) in _LOST_CONDITIONAL_WRITE:
                return False
            raise
        return True

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

    def stat(self, address: str) -> PutResult:
        bucket, key = split_address(address)
        with _s3_errors(address):
            head = self._client.head_object(Bucket=bucket, Key=key)
        return PutResult(int(head["ContentLength"]), _unquote(str(head["ETag"])))

    def storage_class(self, address: str) -> str:
        bucket, key = split_address(address)
        with _s3_errors(address):
            head = self._client.head_object(Bucket=bucket, Key=key)
        # S3 names the class in a HEAD only when it is not STANDARD.
        return str(head.get("StorageClass") or STANDARD_STORAGE_CLASS)

    def presign_get(self, address: str, expires_seconds: int) -> str:
        bucket, key = split_address(address)
        with _s3_errors(address):
            url = self._client.generate_presigned_url(
                "get_object", Params={"Bucket": bucket, "Key": key}, ExpiresIn=expires_seconds
            )
        return str(url)

    def presign_put(self, address: str, expires_seconds: int, if_none_match: bool = False) -> str:
        bucket, key = split_address(address)
        params = {"Bucket": bucket, "Key": key, **({"IfNoneMatch": "*"} if if_none_match else {})}
        with _s3_errors(address):
            # SigV4 (the client's config, wiring.s3_client) signs If-None-Match into the URL.
            url = self._client.generate_presigned_url("put_object", Params=params, ExpiresIn=expires_seconds)
        return str(url)

    def delete(self, address: str) -> None:
        bucket, key = split_address(address)
        with _s3_errors(address):
            # DeleteObject succeeds on a missing key, which makes this idempotent.
            self._client.delete_object(Bucket=bucket, Key=key)

    # -- listing, copies and multipart uploads ------------------------------------------------------------

    def list_blobs(self, prefix: str) -> Iterator[tuple[str, int]]:
        if not prefix.startswith(_SCHEME):
            raise errors.Invalid(f"not an s3:// prefix: {prefix!r}")
        bucket, _, key_prefix = prefix.removeprefix(_SCHEME).partition("/")
        paginator = self._client.get_paginator("list_objects_v2")
        with _s3_errors(prefix):
            for page in paginator.paginate(Bucket=bucket, Prefix=key_prefix):
                for item in page.get("Contents", []):
                    yield f"{_SCHEME}{bucket}/{item['Key']}", int(item["Size"])

    def copy(self, source: str, destination: str) -> PutResult:
        """The source's size comes from a HEAD, and every copy request names the version that HEAD saw
        (``CopySourceIfMatch``): a source rewritten in between fails the copy (Conflict) instead of being copied
        under the old size, or mixed across parts. So the result describes the copy without a HEAD of it."""
        src_bucket, src_key = split_address(source)
        bucket, key = split_address(destination)
        with _s3_errors(source):
            head = self._client.head_object(Bucket=src_bucket, Key=src_key)
        size, version = int(head["ContentLength"]), str(head["ETag"])
        ranges = plan_copy(size)
        if len(ranges) == 1:
            with _s3_errors(source), _changed_source(source):
                result = self._client.copy_object(
                    Bucket=bucket,
                    Key=key,
                    CopySource={"Bucket": src_bucket, "Key": src_key},
                    CopySourceIfMatch=version,
                )
            return PutResult(size, _unquote(result["CopyObjectResult"]["ETag"]))
        upload_id = self.create_multipart_upload(destination)
        try:

            def copy_part(number: int, start: int, end: int) -> tuple[int, str]:
                part = self.upload_part_copy(destination, upload_id, number, source, start, end, if_match=version)
                return number, part.etag

            from concurrent.futures import ThreadPoolExecutor  # copies over 5 GiB only: not at cold start

            with ThreadPoolExecutor(max_workers=min(COPY_WORKERS, len(ranges))) as pool:
                # The boto3 client is thread-safe; each part is one request, no bytes pass through here.
                parts = list(pool.map(copy_part, range(1, len(ranges) + 1), *zip(*ranges, strict=True)))
            return self.complete_multipart_upload(destination, upload_id, parts)
        except BaseException:
            self.abort_multipart_upload(destination, upload_id)
            raise

    def create_multipart_upload(self, address: str) -> str:
        bucket, key = split_address(address)
        with _s3_errors(address):
            return str(self._client.create_multipart_upload(Bucket=bucket, Key=key)["UploadId"])

    def presign_upload_part(self, address: str, upload_id: str, part_number: int, expires_seconds: int) -> str:
        bucket, key = split_address(address)
        params = {"Bucket": bucket, "Key": key, "UploadId": upload_id, "PartNumber": part_number}
        with _s3_errors(address):
            url = self._client.generate_presigned_url("upload_part", Params=params, ExpiresIn=expires_seconds)
        return str(url)

    def upload_part(self, address: str, upload_id: str, part_number: int, data: bytes) -> PutResult:
        bucket, key = split_address(address)
        digest = hashlib.md5(data)
        with _s3_errors(address):
            result = self._client.upload_part(
                Bucket=bucket,
                Key=key,
                UploadId=upload_id,
                PartNumber=part_number,
                Body=data,
                ContentMD5=base64.b64encode(digest.digest()).decode(),
            )
        return PutResult(len(data), _unquote(result["ETag"]))

    def upload_part_copy(
        self,
        address: str,
        upload_id: str,
        part_number: int,
        source: str,
        start: int,
        end: int,
        if_match: str | None = None,
    ) -> PutResult:
        """``if_match``: the source's ETag the part must be copied from (Conflict when it changed)."""
        bucket, key = split_address(address)
        src_bucket, src_key = split_address(source)
        if start < 0 or end < start:
            raise errors.Invalid(f"invalid copy range {start}-{end}")
        condition = {} if if_match is None else {"CopySourceIfMatch": if_match}
        with _s3_errors(source), _changed_source(source):
            result = self._client.upload_part_copy(
                Bucket=bucket,
                Key=key,
                UploadId=upload_id,
                PartNumber=part_number,
                CopySource={"Bucket": src_bucket, "Key": src_key},
                CopySourceRange=f"bytes={start}-{end}",
                **condition,
            )
        return PutResult(end - start + 1, _unquote(result["CopyPartResult"]["ETag"]))

    def list_parts(self, address: str, upload_id: str) -> list[tuple[int, PutResult]]:
        bucket, key = split_address(address)
        parts: list[tuple[int, PutResult]] = []
        paginator = self._client.get_paginator("list_parts")
        with _s3_errors(address):
            for page in paginator.paginate(Bucket=bucket, Key=key, UploadId=upload_id):
                parts.extend(
                    (int(p["PartNumber"]), PutResult(int(p["Size"]), _unquote(p["ETag"])))
                    for p in page.get("Parts", [])
                )
        return sorted(parts, key=lambda item: item[0])

    def complete_multipart_upload(self, address: str, upload_id: str, parts: list[tuple[int, str]]) -> PutResult:
        bucket, key = split_address(address)
        if not parts:
            raise errors.Invalid("a multipart upload needs at least one part")
        if any(later <= earlier for (earlier, _), (later, _) in pairwise(parts)):
            raise errors.Invalid("parts must be listed in ascending order")  # S3 says so too; moto does not check
        with _s3_errors(address):
            result = self._client.complete_multipart_upload(
                Bucket=bucket,
                Key=key,
                UploadId=upload_id,
                MultipartUpload={"Parts": [{"PartNumber": n, "ETag": f'"{etag}"'} for n, etag in parts]},
            )
            size = int(self._client.head_object(Bucket=bucket, Key=key)["ContentLength"])
        return PutResult(size, _unquote(result["ETag"]))

    def abort_multipart_upload(self, address: str, upload_id: str) -> None:
        bucket, key = split_address(address)
        try:
            with _s3_errors(address):
                self._client.abort_multipart_upload(Bucket=bucket, Key=key, UploadId=upload_id)
        except errors.ObjectNotFound:
            pass  # already completed or aborted


@contextmanager
def _changed_source(source: str) -> Iterator[None]:
    """A copy's CopySourceIfMatch failed: the source was rewritten since it was looked at."""
    try:
        yield
    except ClientError as e:
        if _error_code(e) in ("PreconditionFailed", "412"):
            raise errors.Conflict(f"{source} changed while it was being copied") from e
        raise


def _unquote(etag: str) -> str:
    return etag.strip('"')
