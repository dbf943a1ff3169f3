"""Signature checks over real HTTP against ``lakelet up``: a wrong secret, an unknown key, a tampered
header, a tampered payload, an expired presigned URL and a request 20 minutes old are refused, and none of
them writes anything."""

from __future__ import annotations

import datetime
import hashlib

import botocore.auth
import pytest
import requests
from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.client import BaseClient
from botocore.config import Config
from botocore.credentials import Credentials
from botocore.exceptions import ClientError

from .conftest import LocalProcess
from .s3support import s3_client, s3_endpoint

pytestmark = pytest.mark.e2e


def nothing_written(s3: BaseClient, repo: str) -> None:
    assert s3.list_objects_v2(Bucket=repo, Prefix="main/")["KeyCount"] == 0


def signed_put(local: LocalProcess, repo: str, body: bytes) -> AWSRequest:
    request = AWSRequest(
        method="PUT",
        url=f"{s3_endpoint(local)}/{repo}/main/forged.txt",
        data=body,
        headers={"x-amz-meta-owner": "alice"},
    )
    request.headers["X-Amz-Content-SHA256"] = hashlib.sha256(body).hexdigest()
    S3SigV4Auth(Credentials(local.access_key_id, local.secret_access_key), "s3", "us-east-1").add_auth(request)
    return request


def send(request: AWSRequest, body: bytes | None = None) -> requests.Response:
    return requests.put(
        request.url, data=request.body if body is None else body, headers=dict(request.headers), timeout=30
    )


def refused_code(response: requests.Response) -> str:
    assert response.status_code in (400, 403), response.text
    return response.text.split("<Code>")[1].split("</Code>")[0]


def test_wrong_secret_and_unknown_key(local_stack: LocalProcess, s3: BaseClient, s3_repo: str) -> None:
    for client, expected in [
        (s3_client(local_stack, secret="not-the-secret"), "SignatureDoesNotMatch"),
        (s3_client(local_stack, key="AKIAUNKNOWNKEY000000"), "InvalidAccessKeyId"),
    ]:
        with pytest.raises(ClientError) as error:
            client.put_object(Bucket=s3_repo, Key="main/x", Body=b"x")
        assert error.value.response["Error"]["Code"] == expected
        assert error.value.response["ResponseMetadata"]["HTTPStatusCode"] == 403
    nothing_written(s3, s3_repo)


def test_tampered_header_and_payload(local_stack: LocalProcess, s3: BaseClient, s3_repo: str) -> None:
    request = signed_put(local_stack, s3_repo, b"genuine")
    headers = {**dict(request.headers), "x-amz-meta-owner": "mallory"}
    tampered = requests.put(request.url, data=request.body, headers=headers, timeout=30)
    assert refused_code(tampered) == "SignatureDoesNotMatch"
    assert refused_code(send(signed_put(local_stack, s3_repo, b"genuine"), b"tampered")) == (
        "XAmzContentSHA256Mismatch"
    )
    genuine = signed_put(local_stack, s3_repo, b"genuine")
    headers = {**dict(genuine.headers), "X-Amz-Content-SHA256": hashlib.sha256(b"tampered").hexdigest()}
    forged = requests.put(genuine.url, data=b"tampered", headers=headers, timeout=30)
    assert refused_code(forged) == "SignatureDoesNotMatch"
    nothing_written(s3, s3_repo)
    assert send(signed_put(local_stack, s3_repo, b"genuine")).status_code == 200  # the untouched one passes


def _signed_at(monkeypatch: pytest.MonkeyPatch, minutes_ago: int) -> None:
    past = datetime.datetime.now(datetime.UTC).replace(tzinfo=None) - datetime.timedelta(minutes=minutes_ago)
    monkeypatch.setattr(botocore.auth, "get_current_datetime", lambda: past)


def test_expired_presigned_url(
    local_stack: LocalProcess, s3: BaseClient, s3_repo: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    presigner = s3_client(local_stack, config=Config(signature_version="s3v4"))  # boto3 presigns with SigV2 else
    fresh = presigner.generate_presigned_url(
        "put_object", Params={"Bucket": s3_repo, "Key": "main/fresh"}, ExpiresIn=300
    )
    _signed_at(monkeypatch, 2)
    expired = presigner.generate_presigned_url(
        "put_object", Params={"Bucket": s3_repo, "Key": "main/late"}, ExpiresIn=60
    )
    response = requests.put(expired, data=b"too late", timeout=30)
    assert (response.status_code, refused_code(response)) == (403, "RequestExpired")
    nothing_written(s3, s3_repo)
    assert requests.put(fresh, data=b"in time", timeout=30).status_code == 200


def test_request_twenty_minutes_old(
    local_stack: LocalProcess, s3: BaseClient, s3_repo: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _signed_at(monkeypatch, 20)
    with pytest.raises(ClientError) as error:
        s3_client(local_stack).put_object(Bucket=s3_repo, Key="main/old", Body=b"old")
    assert error.value.response["Error"]["Code"] == "RequestTimeTooSkewed"
    monkeypatch.undo()
    nothing_written(s3, s3_repo)
