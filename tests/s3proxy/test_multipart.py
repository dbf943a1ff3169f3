"""Multipart uploads: S3-sized parts go straight into a real multipart upload of the block store; parts
smaller than 5 MiB (what fits in a Lambda request) are assembled inside the store on completion."""

from __future__ import annotations

import hashlib
import io
import random

import pytest
from boto3.s3.transfer import TransferConfig
from botocore.client import BaseClient
from botocore.exceptions import ClientError

from chalicelib.adapters.memory import MemoryBlockStore
from chalicelib.graveler.records import Repository
from chalicelib.s3proxy.errors import S3Error
from chalicelib.s3proxy.uploads import (
    MIN_PART_SIZE,
    Group,
    Part,
    Uploads,
    multipart_etag,
    plan,
)

from .conftest import Harness

MIB = 1024 * 1024
RANDOM = random.Random(7)


def code(error: pytest.ExceptionInfo[ClientError]) -> str:
    return str(error.value.response["Error"]["Code"])


def blobs(harness: Harness) -> dict[str, bytes]:
    store = harness.services.engine.ports.blocks
    assert isinstance(store, MemoryBlockStore)
    return store.blobs


def upload_parts(s3: BaseClient, key: str, parts: list[bytes], **create: object) -> tuple[str, list[dict]]:
    upload_id = s3.create_multipart_upload(Bucket="repo", Key=key, **create)["UploadId"]
    done = [
        {
            "PartNumber": n,
            "ETag": s3.upload_part(Bucket="repo", Key=key, UploadId=upload_id, PartNumber=n, Body=data)["ETag"],
        }
        for n, data in enumerate(parts, start=1)
    ]
    return upload_id, done


def complete(s3: BaseClient, key: str, upload_id: str, parts: list[dict]) -> dict:
    return s3.complete_multipart_upload(Bucket="repo", Key=key, UploadId=upload_id, MultipartUpload={"Parts": parts})


def test_managed_upload_with_s3_sized_parts(s3: BaseClient, harness: Harness, repo: Repository) -> None:
    data = RANDOM.randbytes(12 * MIB + 3)
    config = TransferConfig(multipart_threshold=5 * MIB, multipart_chunksize=5 * MIB, use_threads=False)
    s3.upload_fileobj(
        io.BytesIO(data),
        "repo",
        "main/big.bin",
        Config=config,
        ExtraArgs={"ContentType": "application/x-big", "Metadata": {"k": "v"}},
    )
    out = io.BytesIO()
    s3.download_fileobj("repo", "main/big.bin", out, Config=config)
    assert out.getvalue() == data
    entry = harness.services.engine.objects.stat_object("repo", "main", "big.bin")
    assert entry.physical_address.startswith(repo.storage_namespace + "/data/")
    assert (entry.size, entry.content_type, entry.user_metadata) == (len(data), "application/x-big", {"k": "v"})
    md5s = [hashlib.md5(data[i : i + 5 * MIB]).hexdigest() for i in range(0, len(data), 5 * MIB)]
    assert entry.etag == multipart_etag(md5s) and entry.etag.endswith("-3")
    # Every part went straight into the store's upload: no small-part blob and no upload record is left.
    assert [a for a in blobs(harness) if "_parts/" in a or "/multipart/" in a] == []


def test_small_parts_are_assembled(s3: BaseClient, harness: Harness, repo: Repository) -> None:
    parts = [RANDOM.randbytes(MIB + i) for i in range(7)] + [b"tail"]
    upload_id, done = upload_parts(s3, "main/small.bin", parts)
    assert any("_parts/" in a for a in blobs(harness))
    result = complete(s3, "main/small.bin", upload_id, done)
    assert result["ETag"] == f'"{multipart_etag([hashlib.md5(p).hexdigest() for p in parts])}"'
    assert s3.get_object(Bucket="repo", Key="main/small.bin")["Body"].read() == b"".join(parts)
    assert [a for a in blobs(harness) if "_parts/" in a or "/multipart/" in a] == []


def test_mixed_part_sizes(s3: BaseClient, repo: Repository) -> None:
    parts = [
        RANDOM.randbytes(6 * MIB),
        RANDOM.randbytes(3 * MIB),
        RANDOM.randbytes(3 * MIB),
        RANDOM.randbytes(5 * MIB),
        b"x",
    ]
    upload_id, done = upload_parts(s3, "main/mixed.bin", parts)
    complete(s3, "main/mixed.bin", upload_id, done)
    assert s3.get_object(Bucket="repo", Key="main/mixed.bin")["Body"].read() == b"".join(parts)


def test_small_parts_before_a_large_one_must_add_up(s3: BaseClient, repo: Repository) -> None:
    upload_id, done = upload_parts(s3, "main/bad.bin", [b"small", RANDOM.randbytes(5 * MIB)])
    with pytest.raises(ClientError) as error:
        complete(s3, "main/bad.bin", upload_id, done)
    assert code(error) == "EntityTooSmall"
    # Nothing is lost: the upload can still be completed without the small part (as S3 allows).
    complete(s3, "main/bad.bin", upload_id, done[1:])
    assert s3.head_object(Bucket="repo", Key="main/bad.bin")["ContentLength"] == 5 * MIB


def test_only_listed_parts_and_replaced_parts(s3: BaseClient, repo: Repository) -> None:
    upload_id, done = upload_parts(s3, "main/r.bin", [b"one", b"two", b"three"])
    again = s3.upload_part(Bucket="repo", Key="main/r.bin", UploadId=upload_id, PartNumber=2, Body=b"TWO")
    listed = s3.list_parts(Bucket="repo", Key="main/r.bin", UploadId=upload_id)["Parts"]
    assert [(p["PartNumber"], p["Size"], p["ETag"]) for p in listed] == [
        (1, 3, done[0]["ETag"]),
        (2, 3, again["ETag"]),
        (3, 5, done[2]["ETag"]),
    ]
    with pytest.raises(ClientError) as error:  # the replaced version of part 2 is gone
        complete(s3, "main/r.bin", upload_id, done)
    assert code(error) == "InvalidPart"
    complete(s3, "main/r.bin", upload_id, [{"PartNumber": 2, "ETag": again["ETag"]}, done[2]])
    assert s3.get_object(Bucket="repo", Key="main/r.bin")["Body"].read() == b"TWOthree"


def test_complete_refuses_bad_part_lists(s3: BaseClient, repo: Repository) -> None:
    upload_id, done = upload_parts(s3, "main/p.bin", [b"a", b"b"])
    for parts, expected in [
        ([done[1], done[0]], "InvalidPartOrder"),
        ([{"PartNumber": 1, "ETag": '"0123456789abcdef0123456789abcdef"'}], "InvalidPart"),
        ([{"PartNumber": 3, "ETag": done[0]["ETag"]}], "InvalidPart"),
    ]:
        with pytest.raises(ClientError) as error:
            complete(s3, "main/p.bin", upload_id, parts)
        assert code(error) == expected
    with pytest.raises(ClientError) as error:
        complete(s3, "main/other-key.bin", upload_id, done)
    assert code(error) == "NoSuchUpload"
    with pytest.raises(ClientError) as error:
        s3.upload_part(Bucket="repo", Key="main/p.bin", UploadId=upload_id, PartNumber=10001, Body=b"x")
    assert code(error) == "InvalidArgument"
    with pytest.raises(ClientError):
        s3.head_object(Bucket="repo", Key="main/p.bin")


def test_abort(s3: BaseClient, harness: Harness, repo: Repository) -> None:
    before = set(blobs(harness))
    upload_id, _ = upload_parts(s3, "main/a.bin", [b"a" * 10, RANDOM.randbytes(5 * MIB)])
    s3.abort_multipart_upload(Bucket="repo", Key="main/a.bin", UploadId=upload_id)
    assert set(blobs(harness)) == before
    for call in (
        lambda: s3.list_parts(Bucket="repo", Key="main/a.bin", UploadId=upload_id),
        lambda: s3.abort_multipart_upload(Bucket="repo", Key="main/a.bin", UploadId=upload_id),
    ):
        with pytest.raises(ClientError) as error:
            call()
        assert code(error) == "NoSuchUpload"


def test_list_parts_pagination(s3: BaseClient, repo: Repository) -> None:
    upload_id, _ = upload_parts(s3, "main/many.bin", [bytes([n]) * n for n in range(1, 8)])
    pages = list(
        s3.get_paginator("list_parts").paginate(
            Bucket="repo", Key="main/many.bin", UploadId=upload_id, PaginationConfig={"PageSize": 3}
        )
    )
    assert [[p["PartNumber"] for p in page["Parts"]] for page in pages] == [[1, 2, 3], [4, 5, 6], [7]]
    assert pages[0]["IsTruncated"] is True and pages[-1]["IsTruncated"] is False


def test_list_multipart_uploads(s3: BaseClient, harness: Harness, repo: Repository) -> None:
    harness.services.engine.branches.create_branch("repo", "dev", "main")
    ids = {
        key: s3.create_multipart_upload(Bucket="repo", Key=key)["UploadId"]
        for key in ("main/b/1", "main/a/2", "dev/x", "main/a/1")
    }
    listed = s3.list_multipart_uploads(Bucket="repo")
    assert [(u["Key"], u["UploadId"]) for u in listed["Uploads"]] == [
        ("dev/x", ids["dev/x"]),
        ("main/a/1", ids["main/a/1"]),
        ("main/a/2", ids["main/a/2"]),
        ("main/b/1", ids["main/b/1"]),
    ]
    assert listed["Uploads"][0]["Initiator"]["ID"] == "alice"
    assert [u["Key"] for u in s3.list_multipart_uploads(Bucket="repo", Prefix="main/a/")["Uploads"]] == [
        "main/a/1",
        "main/a/2",
    ]
    page = s3.list_multipart_uploads(Bucket="repo", MaxUploads=2)
    assert page["IsTruncated"] is True and [u["Key"] for u in page["Uploads"]] == ["dev/x", "main/a/1"]
    rest = s3.list_multipart_uploads(
        Bucket="repo", KeyMarker=page["NextKeyMarker"], UploadIdMarker=page["NextUploadIdMarker"]
    )
    assert [u["Key"] for u in rest["Uploads"]] == ["main/a/2", "main/b/1"]
    grouped = s3.list_multipart_uploads(Bucket="repo", Prefix="main/", Delimiter="/")
    assert [p["Prefix"] for p in grouped["CommonPrefixes"]] == ["main/a/", "main/b/"]
    s3.abort_multipart_upload(Bucket="repo", Key="dev/x", UploadId=ids["dev/x"])
    assert "dev/x" not in [u["Key"] for u in s3.list_multipart_uploads(Bucket="repo")["Uploads"]]


def test_upload_part_copy(s3: BaseClient, harness: Harness, repo: Repository) -> None:
    source = RANDOM.randbytes(6 * MIB + 100)
    s3.put_object(Bucket="repo", Key="main/source.bin", Body=source)
    harness.repo("other")
    s3.put_object(Bucket="other", Key="main/elsewhere.txt", Body=b"from another repository")
    upload_id = s3.create_multipart_upload(Bucket="repo", Key="main/copied.bin")["UploadId"]
    parts = []
    for number, (copy_source, byte_range) in enumerate(
        [
            ("repo/main/source.bin", f"bytes=0-{5 * MIB}"),
            ("repo/main/source.bin", "bytes=10-19"),
            ("other/main/elsewhere.txt", None),
        ],
        start=1,
    ):
        kwargs = {"CopySourceRange": byte_range} if byte_range else {}
        result = s3.upload_part_copy(
            Bucket="repo",
            Key="main/copied.bin",
            UploadId=upload_id,
            PartNumber=number,
            CopySource=copy_source,
            **kwargs,
        )
        parts.append({"PartNumber": number, "ETag": result["CopyPartResult"]["ETag"]})
    for byte_range, expected_code in [("bytes=5-1", "InvalidArgument"), (f"bytes=0-{len(source)}", "InvalidRange")]:
        with pytest.raises(ClientError) as error:
            s3.upload_part_copy(
                Bucket="repo",
                Key="main/copied.bin",
                UploadId=upload_id,
                PartNumber=4,
                CopySource="repo/main/source.bin",
                CopySourceRange=byte_range,
            )
        assert code(error) == expected_code
    complete(s3, "main/copied.bin", upload_id, parts)
    expected = source[: 5 * MIB + 1] + source[10:20] + b"from another repository"
    assert s3.get_object(Bucket="repo", Key="main/copied.bin")["Body"].read() == expected


def test_complete_with_if_none_match(s3: BaseClient, repo: Repository) -> None:
    s3.put_object(Bucket="repo", Key="main/exists", Body=b"old")
    upload_id, done = upload_parts(s3, "main/exists", [b"new"])
    with pytest.raises(ClientError) as error:
        s3.complete_multipart_upload(
            Bucket="repo", Key="main/exists", UploadId=upload_id, MultipartUpload={"Parts": done}, IfNoneMatch="*"
        )
    assert code(error) == "PreconditionFailed"
    assert s3.get_object(Bucket="repo", Key="main/exists")["Body"].read() == b"old"


def test_writes_need_a_branch(s3: BaseClient, harness: Harness, repo: Repository) -> None:
    harness.services.engine.branches.create_tag("repo", "v1", "main")
    with pytest.raises(ClientError) as error:
        s3.create_multipart_upload(Bucket="repo", Key="v1/x")
    assert code(error) == "NoSuchBranch"


# plan(): how client parts become store parts


def _small(number: int, size: int) -> Part:
    return Part(number, size, f"{number:032x}", f"s3://b/x_parts/{number:05d}")


def _large(number: int, size: int = MIN_PART_SIZE) -> Part:
    return Part(number, size, f"{number:032x}")


def test_plan_keeps_large_parts_and_groups_small_ones() -> None:
    small = MIN_PART_SIZE // 3 + 1  # three make a full store part
    parts = [_large(1), *[_small(n, small) for n in range(2, 9)], _large(9), _small(10, 7)]
    result = plan(parts)
    assert [r.number if isinstance(r, Part) else (r.number, len(r.parts)) for r in result] == [
        1,
        (2, 3),
        (5, 4),
        9,
        (10, 1),
    ]
    assert all(r.size >= MIN_PART_SIZE for r in result[:-1])


def test_plan_all_small_ends_with_any_size() -> None:
    result = plan([_small(n, MIB) for n in range(1, 13)])
    assert [len(g.parts) for g in result if isinstance(g, Group)] == [5, 5, 2]
    assert plan([_small(1, 3)]) == [Group(1, (_small(1, 3),))]


def test_plan_refuses_a_short_run_before_a_large_part() -> None:
    with pytest.raises(S3Error) as error:
        plan([_small(1, MIB), _small(2, MIB), _large(3)])
    assert error.value.code == "EntityTooSmall"


def test_store_upload_gone_is_no_such_upload(s3: BaseClient, harness: Harness, repo: Repository) -> None:
    upload_id, _ = upload_parts(s3, "main/expired.bin", [b"x"])
    record = next(
        u for u in Uploads(harness.services.engine.repositories.namespace_files(repo.storage_namespace)).all()
    )
    # An S3 lifecycle rule (AbortIncompleteMultipartUpload) removed the store's upload.
    harness.services.engine.ports.blocks.abort_multipart_upload(record.address, record.store_upload_id)
    with pytest.raises(ClientError) as error:
        s3.list_parts(Bucket="repo", Key="main/expired.bin", UploadId=upload_id)
    assert code(error) == "NoSuchUpload"


def test_branch_deleted_during_the_upload(s3: BaseClient, harness: Harness, repo: Repository) -> None:
    engine = harness.services.engine
    engine.branches.create_branch("repo", "short-lived", "main")
    upload_id, done = upload_parts(s3, "short-lived/x.bin", [b"x"])
    engine.branches.delete_branch("repo", "short-lived")
    with pytest.raises(ClientError) as error:
        complete(s3, "short-lived/x.bin", upload_id, done)
    assert code(error) == "NoSuchBranch"
