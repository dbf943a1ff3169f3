"""If-None-Match: * is create-only when writers overlap, through the stack's API and S3 gateway (issue 40, item 1):
WRITERS writers of one new path, started 20-100 ms apart as in the report, each with If-None-Match: *; in every
round exactly one gets 2xx, the others 412, and the path holds the winner's bytes. For each path that takes the
header: API upload, API copy, link (PUT staging/backing), gateway PutObject, CopyObject and
CompleteMultipartUpload, and all of them mixed."""

from __future__ import annotations

import hashlib
import random
import threading
import time
from collections.abc import Callable
from typing import Any

import botocore.exceptions
import lakefs
import pytest
import requests

from .conftest import LocalProcess
from .s3support import moto_s3, s3_client

pytestmark = pytest.mark.e2e

WRITERS = 8
ROUNDS = 8

# A write: (stack, repository, path, this writer's bytes) -> True for 2xx, False for 412.
Write = Callable[[LocalProcess, str, str, bytes], bool]


def _api(local: LocalProcess, method: str, path: str, **kwargs: Any) -> requests.Response:
    return requests.request(
        method, local.api_url + path, auth=(local.access_key_id, local.secret_access_key), timeout=60, **kwargs
    )


def _answer(status: int, body: str) -> bool:
    if status == 412:
        return False
    assert status in (200, 201), (status, body)
    return True


def api_upload(local: LocalProcess, repo: str, path: str, data: bytes) -> bool:
    answer = _api(
        local,
        "POST",
        f"/repositories/{repo}/branches/main/objects",
        params={"path": path},
        data=data,
        headers={"If-None-Match": "*", "Content-Type": "application/octet-stream"},
    )
    return _answer(answer.status_code, answer.text)


def _source(local: LocalProcess, repo: str, data: bytes) -> str:
    """A path on main holding ``data`` (written without a condition), to copy from."""
    path = f"sources/{hashlib.md5(data).hexdigest()}"
    _api(local, "POST", f"/repositories/{repo}/branches/main/objects", params={"path": path}, data=data)
    return path


def api_copy(local: LocalProcess, repo: str, path: str, data: bytes) -> bool:
    source = _source(local, repo, data)
    answer = _api(
        local,
        "POST",
        f"/repositories/{repo}/branches/main/objects/copy",
        params={"dest_path": path},
        json={"src_path": source, "src_ref": "main"},
        headers={"If-None-Match": "*"},
    )
    return _answer(answer.status_code, answer.text)


def link(local: LocalProcess, repo: str, path: str, data: bytes) -> bool:
    backing = f"/repositories/{repo}/branches/main/staging/backing"
    location = _api(local, "GET", backing, params={"path": path}).json()
    bucket, _, key = location["physical_address"].removeprefix("s3://").partition("/")
    moto_s3(local).put_object(Bucket=bucket, Key=key, Body=data)
    answer = _api(
        local,
        "PUT",
        backing,
        params={"path": path},
        headers={"If-None-Match": "*"},
        json={
            "staging": {"physical_address": location["physical_address"]},
            "checksum": hashlib.md5(data).hexdigest(),
            "size_bytes": len(data),
        },
    )
    return _answer(answer.status_code, answer.text)


def _s3(call: Callable[[], Any]) -> bool:
    try:
        call()
    except botocore.exceptions.ClientError as e:
        status = e.response["ResponseMetadata"]["HTTPStatusCode"]
        return _answer(status, str(e))
    return True


def gateway_put(local: LocalProcess, repo: str, path: str, data: bytes) -> bool:
    client = s3_client(local)
    return _s3(lambda: client.put_object(Bucket=repo, Key=f"main/{path}", Body=data, IfNoneMatch="*"))


def gateway_copy(local: LocalProcess, repo: str, path: str, data: bytes) -> bool:
    source = _source(local, repo, data)
    client = s3_client(local)
    return _s3(
        lambda: client.copy_object(
            Bucket=repo, Key=f"main/{path}", CopySource={"Bucket": repo, "Key": f"main/{source}"}, IfNoneMatch="*"
        )
    )


def gateway_multipart(local: LocalProcess, repo: str, path: str, data: bytes) -> bool:
    client = s3_client(local)
    key = f"main/{path}"
    upload = client.create_multipart_upload(Bucket=repo, Key=key)["UploadId"]
    part = client.upload_part(Bucket=repo, Key=key, UploadId=upload, PartNumber=1, Body=data)
    parts = {"Parts": [{"PartNumber": 1, "ETag": part["ETag"]}]}
    return _s3(
        lambda: client.complete_multipart_upload(
            Bucket=repo, Key=key, UploadId=upload, MultipartUpload=parts, IfNoneMatch="*"
        )
    )


WRITES: dict[str, list[Write]] = {
    "api-upload": [api_upload],
    "api-copy": [api_copy],
    "link": [link],
    "gateway-put": [gateway_put],
    "gateway-copy": [gateway_copy],
    "gateway-multipart": [gateway_multipart],
    "mixed": [api_upload, gateway_put, link, gateway_copy],
}


def race(local: LocalProcess, repo: str, path: str, writes: list[Write]) -> list[bytes]:
    """WRITERS writers of ``path``, started 20-100 ms apart; the bytes of those that got 2xx."""
    won: list[bytes] = []
    failed: list[BaseException] = []

    def writer(n: int) -> None:
        data = f"writer {n} of {path} {random.random()}".encode()
        time.sleep(n * random.uniform(0.02, 0.1))
        try:
            if writes[n % len(writes)](local, repo, path, data):
                won.append(data)
        except BaseException as e:
            failed.append(e)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(WRITERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failed, failed
    return won


def _read(local: LocalProcess, repo: str, path: str) -> bytes:
    answer = _api(local, "GET", f"/repositories/{repo}/refs/main/objects", params={"path": path})
    assert answer.status_code == 200, answer.text
    return answer.content


@pytest.mark.parametrize("kind", list(WRITES))
def test_of_overlapping_create_only_writers_exactly_one_wins(
    local_stack: LocalProcess, repo: lakefs.Repository, kind: str
) -> None:
    winners = []
    for n in range(ROUNDS):
        path = f"{kind}/round{n}/_delta_log/00000000000000000000.json"
        won = race(local_stack, str(repo.id), path, WRITES[kind])
        winners.append(len(won))
        if len(won) == 1:
            assert _read(local_stack, str(repo.id), path) == won[0]
    assert winners == [1] * ROUNDS, winners
