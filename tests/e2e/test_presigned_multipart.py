"""A 50 MB object uploaded through lakefs-sdk's presigned multipart upload against ``lakelet local``: the API hands
out part URLs, the bytes go straight to the stack's S3 (moto) by those URLs, and the completed object reads back."""

from __future__ import annotations

import hashlib
import uuid
from urllib.parse import urlsplit

import lakefs_sdk
import pytest
import urllib3

from .conftest import LocalProcess

pytestmark = pytest.mark.e2e

PART = 5 * 1024 * 1024
PARTS = 10  # 50 MiB


def test_fifty_megabytes_by_presigned_parts(local_stack: LocalProcess) -> None:
    configuration = lakefs_sdk.Configuration(
        host=local_stack.api_url, username=local_stack.access_key_id, password=local_stack.secret_access_key
    )
    client = lakefs_sdk.ApiClient(configuration)
    config = lakefs_sdk.ConfigApi(client).get_config()
    assert config.storage_config.pre_sign_multipart_upload is True
    repo = f"pmpu-{uuid.uuid4().hex[:8]}"
    namespace = f"{config.storage_config.default_namespace_prefix}/{repo}"
    lakefs_sdk.RepositoriesApi(client).create_repository(
        lakefs_sdk.RepositoryCreation(name=repo, storage_namespace=namespace)
    )
    experimental = lakefs_sdk.ExperimentalApi(client)
    started = experimental.create_presign_multipart_upload(repo, "main", "big/data.bin", parts=PARTS)
    assert started.presigned_urls is not None and len(started.presigned_urls) == PARTS

    api_host = urlsplit(local_stack.api_url).netloc
    http = urllib3.PoolManager()
    digest = hashlib.sha256()
    parts = []
    for number, url in enumerate(started.presigned_urls, 1):
        assert urlsplit(url).netloc != api_host  # straight to S3, never through the API
        chunk = bytes([number]) * PART
        digest.update(chunk)
        answer = http.request("PUT", url, body=chunk)
        assert answer.status == 200, answer.data[:300]
        parts.append(lakefs_sdk.UploadPart(part_number=number, etag=answer.headers["ETag"]))

    completion = lakefs_sdk.CompletePresignMultipartUpload(
        physical_address=started.physical_address, parts=parts, content_type="application/octet-stream"
    )
    stats = experimental.complete_presign_multipart_upload(
        repo, "main", started.upload_id, "big/data.bin", complete_presign_multipart_upload=completion
    )
    assert stats.size_bytes == PART * PARTS and stats.checksum.endswith(f"-{PARTS}")

    objects = lakefs_sdk.ObjectsApi(client)
    assert objects.stat_object(repo, "main", "big/data.bin").size_bytes == PART * PARTS
    # The last bytes of the last part, through the API's ranged read; then all of it by a presigned GET.
    tail = objects.get_object(repo, "main", "big/data.bin", range=f"bytes={PART * PARTS - 3}-")
    assert bytes(tail) == bytes([PARTS]) * 3
    presigned = objects.stat_object(repo, "main", "big/data.bin", presign=True).physical_address
    assert hashlib.sha256(http.request("GET", presigned).data).hexdigest() == digest.hexdigest()
    lakefs_sdk.CommitsApi(client).commit(repo, "main", lakefs_sdk.CommitCreation(message="50 MB by parts"))
