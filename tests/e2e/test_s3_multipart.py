"""Multipart uploads through the gateway of ``lakelet up --aws-limits``: 20 MB with boto3's own transfer manager,
parts smaller than S3's minimum (as a Lambda-fronted gateway needs), part copies, listing and aborting. Bytes move
in parts and ranged reads of 4 MiB, as docs/s3-gateway.md tells users of the deployed gateway (Lambda's 6 MB
payload, base64 included; whole reads over 4 MiB answer InvalidRequest)."""

from __future__ import annotations

import hashlib
import io
import random

import lakefs
import pytest
from boto3.s3.transfer import TransferConfig
from botocore.client import BaseClient
from botocore.exceptions import ClientError
from lakefs.client import Client

from lakelet.stack.local import LOCAL_BUCKET

from .conftest import LocalProcess
from .s3support import moto_s3

pytestmark = pytest.mark.e2e

MIB = 1024 * 1024
TWENTY_MB = random.Random(2024).randbytes(20 * 1000 * 1000)
# Ranged reads of 4 MiB fit a deployed gateway's Lambda payload. (boto3's managed uploads raise any part to S3's
# 5 MiB minimum, which does not fit: big uploads go in 4 MiB parts by hand, as docs/s3-gateway.md shows.)
FITS = TransferConfig(multipart_threshold=4 * MIB, multipart_chunksize=4 * MIB)


def put_big(s3: BaseClient, bucket: str, key: str, data: bytes) -> int:
    """A multipart upload in parts of 4 MiB; the number of parts."""
    upload = s3.create_multipart_upload(Bucket=bucket, Key=key)
    parts = [
        {
            "PartNumber": n,
            "ETag": s3.upload_part(
                Bucket=bucket, Key=key, PartNumber=n, UploadId=upload["UploadId"], Body=data[i : i + 4 * MIB]
            )["ETag"],
        }
        for n, i in enumerate(range(0, len(data), 4 * MIB), start=1)
    ]
    s3.complete_multipart_upload(Bucket=bucket, Key=key, UploadId=upload["UploadId"], MultipartUpload={"Parts": parts})
    return len(parts)


def get_all(s3: BaseClient, bucket: str, key: str) -> bytes:
    out = io.BytesIO()
    s3.download_fileobj(bucket, key, out, Config=FITS)  # ranged GETs of 4 MiB
    return out.getvalue()


def test_twenty_megabytes_round_trip(s3: BaseClient, s3_repo: str, client: Client, local_stack: LocalProcess) -> None:
    # 4 MiB parts (5 here), as a deployed gateway takes them; read back by boto3's transfer manager in ranges.
    assert put_big(s3, s3_repo, "main/big/twenty.bin", TWENTY_MB) == 5
    got = get_all(s3, s3_repo, "main/big/twenty.bin")  # ranged GETs, in parallel
    assert hashlib.sha256(got).digest() == hashlib.sha256(TWENTY_MB).digest()
    stat = lakefs.Repository(s3_repo, client=client).branch("main").object("big/twenty.bin").stat()
    assert stat.size_bytes == len(TWENTY_MB) and stat.checksum.endswith("-5")
    # One object on the underlying S3 at the staged address, nothing left over from the upload.
    key = stat.physical_address.removeprefix(f"s3://{LOCAL_BUCKET}/")
    assert moto_s3(local_stack).head_object(Bucket=LOCAL_BUCKET, Key=key)["ContentLength"] == len(TWENTY_MB)
    leftovers = moto_s3(local_stack).list_objects_v2(Bucket=LOCAL_BUCKET, Prefix=key + "_parts/")
    assert leftovers["KeyCount"] == 0
    assert moto_s3(local_stack).list_multipart_uploads(Bucket=LOCAL_BUCKET, Prefix=key).get("Uploads", []) == []


def test_parts_below_the_s3_minimum(s3: BaseClient, s3_repo: str) -> None:
    parts = [TWENTY_MB[i : i + 4 * MIB] for i in range(0, 13 * MIB, 4 * MIB)]  # 4, 4, 4, 1 MiB
    upload = s3.create_multipart_upload(Bucket=s3_repo, Key="main/small-parts.bin", ContentType="text/x-parts")
    done = [
        {
            "PartNumber": n,
            "ETag": s3.upload_part(
                Bucket=s3_repo, Key="main/small-parts.bin", PartNumber=n, UploadId=upload["UploadId"], Body=data
            )["ETag"],
        }
        for n, data in enumerate(parts, start=1)
    ]
    listed = s3.list_parts(Bucket=s3_repo, Key="main/small-parts.bin", UploadId=upload["UploadId"])
    assert [(p["PartNumber"], p["Size"]) for p in listed["Parts"]] == [(n, len(d)) for n, d in enumerate(parts, 1)]
    s3.complete_multipart_upload(
        Bucket=s3_repo, Key="main/small-parts.bin", UploadId=upload["UploadId"], MultipartUpload={"Parts": done}
    )
    assert get_all(s3, s3_repo, "main/small-parts.bin") == b"".join(parts)
    assert s3.head_object(Bucket=s3_repo, Key="main/small-parts.bin")["ContentType"] == "text/x-parts"


def test_part_copy_list_and_abort(s3: BaseClient, s3_repo: str) -> None:
    put_big(s3, s3_repo, "main/source.bin", TWENTY_MB[: 6 * MIB])
    upload = s3.create_multipart_upload(Bucket=s3_repo, Key="main/assembled.bin")
    copied = s3.upload_part_copy(
        Bucket=s3_repo,
        Key="main/assembled.bin",
        UploadId=upload["UploadId"],
        PartNumber=1,
        CopySource=f"{s3_repo}/main/source.bin",
    )
    last = s3.upload_part(
        Bucket=s3_repo, Key="main/assembled.bin", UploadId=upload["UploadId"], PartNumber=2, Body=b"the end"
    )
    pending = s3.list_multipart_uploads(Bucket=s3_repo)
    assert [(u["Key"], u["UploadId"]) for u in pending["Uploads"]] == [("main/assembled.bin", upload["UploadId"])]
    s3.complete_multipart_upload(
        Bucket=s3_repo,
        Key="main/assembled.bin",
        UploadId=upload["UploadId"],
        MultipartUpload={
            "Parts": [
                {"PartNumber": 1, "ETag": copied["CopyPartResult"]["ETag"]},
                {"PartNumber": 2, "ETag": last["ETag"]},
            ]
        },
    )
    assert get_all(s3, s3_repo, "main/assembled.bin") == TWENTY_MB[: 6 * MIB] + b"the end"
    assert s3.list_multipart_uploads(Bucket=s3_repo).get("Uploads", []) == []

    aborted = s3.create_multipart_upload(Bucket=s3_repo, Key="main/never.bin")
    s3.upload_part(Bucket=s3_repo, Key="main/never.bin", UploadId=aborted["UploadId"], PartNumber=1, Body=b"x")
    s3.abort_multipart_upload(Bucket=s3_repo, Key="main/never.bin", UploadId=aborted["UploadId"])
    with pytest.raises(ClientError) as error:
        s3.list_parts(Bucket=s3_repo, Key="main/never.bin", UploadId=aborted["UploadId"])
    assert error.value.response["Error"]["Code"] == "NoSuchUpload"
    with pytest.raises(ClientError):
        s3.head_object(Bucket=s3_repo, Key="main/never.bin")


def test_managed_copy_of_a_large_object(s3: BaseClient, s3_repo: str) -> None:
    put_big(s3, s3_repo, "main/large.bin", TWENTY_MB[: 10 * MIB])
    # Above the 8 MiB threshold boto3 copies with UploadPartCopy: the bytes stay inside S3.
    s3.copy(
        {"Bucket": s3_repo, "Key": "main/large.bin"},
        s3_repo,
        "main/large-copy.bin",
        Config=TransferConfig(multipart_threshold=8 * MIB),
    )
    assert get_all(s3, s3_repo, "main/large-copy.bin") == TWENTY_MB[: 10 * MIB]
