"""Copies of every size: S3 refuses a CopyObject of more than 5 GiB (moto does not), so the S3 adapter copies
a larger blob in parts (UploadPartCopy), each within S3's limits. A fake S3 client that enforces those limits and
holds only sizes, never bytes, stands in for a 6 GB presigned multipart upload that is then linked."""

from __future__ import annotations

import hashlib
import threading
from itertools import pairwise
from typing import Any

import pytest
from botocore.exceptions import ClientError

from chalicelib.adapters.s3 import MAX_COPY_PARTS, MAX_SINGLE_COPY_BYTES, S3BlockStore, plan_copy
from chalicelib.graveler import errors
from chalicelib.graveler.records import Entry
from tests.unit.graveler.support import rebuilt

GiB = 1024**3
MiB = 1024**2
SIX_GB = 6 * 10**9


def _refuse(code: str, message: str) -> ClientError:
    return ClientError({"Error": {"Code": code, "Message": message}}, "S3")


class SizeOnlyS3:
    """The calls a copy makes, with S3's limits: CopyObject and each UploadPartCopy at most 5 GiB, parts of at
    least 5 MiB but the last, at most 10,000 parts. Objects are sizes and ETags."""

    def __init__(self) -> None:
        self.objects: dict[str, tuple[int, str]] = {}
        self.uploads: dict[str, dict[int, int]] = {}
        self.calls: list[tuple[str, int]] = []
        self._lock = threading.Lock()

    def head_object(self, Bucket: str, Key: str) -> dict[str, Any]:
        if f"{Bucket}/{Key}" not in self.objects:
            raise _refuse("404", "Not Found")
        size, etag = self.objects[f"{Bucket}/{Key}"]
        return {"ContentLength": size, "ETag": f'"{etag}"'}

    def copy_object(self, Bucket: str, Key: str, CopySource: dict[str, str], **kw: Any) -> dict[str, Any]:
        size, etag = self.objects[f"{CopySource['Bucket']}/{CopySource['Key']}"]
        self.calls.append(("CopyObject", size))
        if size > MAX_SINGLE_COPY_BYTES:
            raise _refuse("InvalidRequest", "The specified copy source is larger than the maximum allowable size")
        self.objects[f"{Bucket}/{Key}"] = (size, etag)
        return {"CopyObjectResult": {"ETag": f'"{etag}"'}}

    def create_multipart_upload(self, Bucket: str, Key: str) -> dict[str, Any]:
        upload_id = f"upload-{len(self.uploads)}"
        self.uploads[upload_id] = {}
        return {"UploadId": upload_id}

    def upload_part_copy(self, **kw: Any) -> dict[str, Any]:
        start, end = (int(x) for x in kw["CopySourceRange"].removeprefix("bytes=").split("-"))
        source_size, source_etag = self.objects[f"{kw['CopySource']['Bucket']}/{kw['CopySource']['Key']}"]
        with self._lock:
            self.calls.append(("UploadPartCopy", end - start + 1))
        if end - start + 1 > MAX_SINGLE_COPY_BYTES or end >= source_size or not 1 <= kw["PartNumber"] <= 10_000:
            raise _refuse("InvalidArgument", "part outside S3's limits")
        assert kw["CopySourceIfMatch"] == f'"{source_etag}"'
        self.uploads[kw["UploadId"]][kw["PartNumber"]] = end - start + 1
        return {"CopyPartResult": {"ETag": f'"part-{kw["PartNumber"]}"'}}

    def complete_multipart_upload(self, Bucket: str, Key: str, UploadId: str, MultipartUpload: Any) -> Any:
        numbers = [p["PartNumber"] for p in MultipartUpload["Parts"]]
        sizes = self.uploads.pop(UploadId)
        assert numbers == sorted(sizes) == list(range(1, len(sizes) + 1))
        if any(sizes[n] < 5 * MiB for n in numbers[:-1]):
            raise _refuse("EntityTooSmall", "a part but the last is under 5 MiB")
        etag = f"{hashlib.md5(UploadId.encode()).hexdigest()}-{len(numbers)}"
        self.objects[f"{Bucket}/{Key}"] = (sum(sizes.values()), etag)
        return {"ETag": f'"{etag}"'}

    def abort_multipart_upload(self, Bucket: str, Key: str, UploadId: str) -> None:
        self.uploads.pop(UploadId, None)

    def delete_object(self, Bucket: str, Key: str) -> None:
        self.objects.pop(f"{Bucket}/{Key}", None)


@pytest.mark.parametrize("size", [0, 1, 5 * MiB, MAX_SINGLE_COPY_BYTES])
def test_up_to_5_gib_is_one_copy(size: int) -> None:
    assert plan_copy(size) == [(0, size - 1)]


@pytest.mark.parametrize("size", [MAX_SINGLE_COPY_BYTES + 1, SIX_GB, 5 * 1024**4])
def test_larger_blobs_are_planned_in_parts_within_s3_limits(size: int) -> None:
    ranges = plan_copy(size)
    assert len(ranges) <= MAX_COPY_PARTS
    assert ranges[0][0] == 0 and ranges[-1][1] == size - 1
    assert all(later[0] == earlier[1] + 1 for earlier, later in pairwise(ranges))
    assert all(5 * MiB <= end - start + 1 <= MAX_SINGLE_COPY_BYTES for start, end in ranges[:-1])


def test_a_6_gb_copy_never_sends_one_copy_object() -> None:
    s3 = SizeOnlyS3()
    s3.objects["bucket/ns/data/upload"] = (SIX_GB, "abc-600")
    copied = S3BlockStore(s3).copy("s3://bucket/ns/data/upload", "s3://bucket/ns/data/copy")  # type: ignore[arg-type]
    assert copied.size == SIX_GB and copied.etag.endswith(f"-{len(plan_copy(SIX_GB))}")
    assert {name for name, _ in s3.calls} == {"UploadPartCopy"}
    assert sum(size for _, size in s3.calls) == SIX_GB
    assert s3.objects["bucket/ns/data/copy"][0] == SIX_GB


def test_a_failed_part_aborts_the_upload() -> None:
    s3 = SizeOnlyS3()
    s3.objects["bucket/ns/data/upload"] = (SIX_GB, "abc-600")
    original = s3.upload_part_copy

    def fail_part_3(**kw: Any) -> dict[str, Any]:
        if kw["PartNumber"] == 3:
            raise _refuse("InternalError", "boom")
        return original(**kw)

    s3.upload_part_copy = fail_part_3  # type: ignore[method-assign]
    with pytest.raises(errors.StorageError):
        S3BlockStore(s3).copy("s3://bucket/ns/data/upload", "s3://bucket/ns/data/copy")  # type: ignore[arg-type]
    assert s3.uploads == {} and "bucket/ns/data/copy" not in s3.objects


def test_linking_a_6_gb_presigned_multipart_upload_copies_it_in_parts(g: Any, repo: Any) -> None:
    """The client completed a 6 GB multipart upload at the address it was given, then links it (lakeFS's
    linkPhysicalAddress): the link copies the upload to an address no URL writes, in parts."""
    s3 = SizeOnlyS3()
    engine = rebuilt(g, blocks=S3BlockStore(s3))  # type: ignore[arg-type]
    upload = engine.objects.new_physical_address("repo")
    bucket_key = upload.removeprefix("s3://")
    s3.objects[bucket_key] = (SIX_GB, "0123456789abcdef0123456789abcdef-573")
    claim = Entry(physical_address=upload, size=SIX_GB, etag="0123456789abcdef0123456789abcdef-573", mtime=1)
    entry = engine.objects.link_upload("repo", "main", "big/file.bin", upload, claim)
    assert entry.size == SIX_GB and entry.physical_address != upload
    assert engine.objects.stat_object("repo", "main", "big/file.bin").size == SIX_GB
    assert [name for name, _ in s3.calls].count("CopyObject") == 0
    assert sum(size for _, size in s3.calls) == SIX_GB
    assert entry.physical_address.removeprefix("s3://") in s3.objects and bucket_key not in s3.objects
