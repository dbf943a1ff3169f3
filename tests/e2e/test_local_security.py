"""``lakelet up``'s AWS stand-in (moto) against a caller that is not the stack: committed bytes stay put, and
moto's port answers only requests signed with the stack's key pair, CORS only for the stack's own UI."""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

import boto3
import botocore.exceptions
import lakefs
import pytest
import requests
from botocore.config import Config

from lakelet.stack.local import LOCAL_BUCKET
from tests.e2e.conftest import LocalProcess

pytestmark = pytest.mark.e2e

_MOTO_LINE = re.compile(r"AWS stand-in\s+moto at (?P<url>http://\S+)")
FOREIGN_ORIGIN = "http://attacker.example"


def moto_url(local: LocalProcess) -> str:
    found = _MOTO_LINE.search(local.banner)
    assert found, local.banner
    return found.group("url")


def api(local: LocalProcess, method: str, path: str, **kwargs: Any) -> requests.Response:
    return requests.request(
        method, local.api_url + path, auth=(local.access_key_id, local.secret_access_key), timeout=30, **kwargs
    )


def stack_s3(local: LocalProcess, **keys: str) -> Any:
    return boto3.client(
        "s3",
        region_name="us-east-1",
        endpoint_url=moto_url(local),
        aws_access_key_id=keys.get("key", local.aws_access_key_id),
        aws_secret_access_key=keys.get("secret", local.aws_secret_access_key),
        config=Config(signature_version="s3v4"),
    )  # boto3 presigns with SigV2 in us-east-1


def test_a_committed_write_once_upload_cannot_be_overwritten_through_its_url(
    local_stack: LocalProcess, repo: lakefs.Repository
) -> None:
    backing = f"/repositories/{repo.id}/branches/main/staging/backing"
    location = api(
        local_stack, "GET", backing, params={"path": "data.bin", "presign": "true", "write_once": "true"}
    ).json()
    url = location["presigned_url"]
    original = b"committed bytes"
    put = requests.put(url, data=original, headers={"If-None-Match": "*"}, timeout=30)
    assert put.status_code == 200, put.text
    linked = api(
        local_stack,
        "PUT",
        backing,
        params={"path": "data.bin"},
        json={
            "staging": {"physical_address": location["physical_address"]},
            "checksum": hashlib.md5(original).hexdigest(),
            "size_bytes": len(original),
        },
    )
    assert linked.status_code == 200, linked.text
    assert linked.json()["physical_address"] in location["physical_address"]  # linked in place, not copied
    commit = repo.branch("main").commit(message="write-once upload")

    # The attack: the same URL again, leaving out the header it was signed for.
    replaced = requests.put(url, data=b"replaced bytes!", timeout=30)
    assert replaced.status_code == 403, replaced.text
    assert "if-none-match" in replaced.text
    # With the header, the key exists: S3's conditional write refuses.
    again = requests.put(url, data=b"replaced bytes!", headers={"If-None-Match": "*"}, timeout=30)
    assert again.status_code == 412, again.text

    with repo.ref(commit.get_commit().id).object("data.bin").reader(mode="rb") as reader:
        assert reader.read() == original
    with repo.branch("main").object("data.bin").reader(mode="rb") as reader:
        assert reader.read() == original


@pytest.mark.parametrize(
    "request_args",
    [
        ("GET", f"/{LOCAL_BUCKET}", {}, b""),  # every object
        ("GET", "/moto-api/data.json", {}, b""),  # moto's whole state
        ("POST", "/moto-api/reset", {}, b""),
        (
            "POST",
            "/",
            {"X-Amz-Target": "DynamoDB_20120810.Scan", "Content-Type": "application/x-amz-json-1.0"},
            json.dumps({"TableName": "lakelet-local-credentials"}).encode(),
        ),  # the auth tables
        (
            "POST",
            "/",
            {"X-Amz-Target": "TrentService.ListKeys", "Content-Type": "application/x-amz-json-1.1"},
            b"{}",
        ),  # the key that unseals secrets
    ],
    ids=["s3", "state-dump", "reset", "dynamodb", "kms"],
)
def test_moto_refuses_an_unsigned_request(
    local_stack: LocalProcess, request_args: tuple[str, str, dict[str, str], bytes]
) -> None:
    method, path, headers, body = request_args
    answer = requests.request(method, moto_url(local_stack) + path, headers=headers, data=body, timeout=30)
    assert answer.status_code == 403, answer.text
    assert "<Code>AccessDenied</Code>" in answer.text
    assert "access-control-allow-origin" not in {name.lower() for name in answer.headers}


def test_moto_refuses_another_key_and_serves_the_stack_s_own(local_stack: LocalProcess) -> None:
    with pytest.raises(botocore.exceptions.ClientError) as refused:
        stack_s3(local_stack, key="AKIAOTHERKEY", secret="whatever").list_objects_v2(Bucket=LOCAL_BUCKET)
    assert refused.value.response["Error"]["Code"] == "InvalidAccessKeyId"
    with pytest.raises(botocore.exceptions.ClientError) as wrong_secret:
        stack_s3(local_stack, secret="not-the-secret").list_objects_v2(Bucket=LOCAL_BUCKET)
    assert wrong_secret.value.response["Error"]["Code"] == "SignatureDoesNotMatch"
    assert (
        stack_s3(local_stack).list_objects_v2(Bucket=LOCAL_BUCKET, MaxKeys=1)["ResponseMetadata"]["HTTPStatusCode"]
        == 200
    )
    tables = boto3.client(
        "dynamodb",
        region_name="us-east-1",
        endpoint_url=moto_url(local_stack),
        aws_access_key_id=local_stack.aws_access_key_id,
        aws_secret_access_key=local_stack.aws_secret_access_key,
    ).list_tables()["TableNames"]
    assert "lakelet-local-repositories" in tables


def test_moto_grants_cors_to_the_stack_s_ui_only(local_stack: LocalProcess) -> None:
    s3 = stack_s3(local_stack)
    s3.put_object(Bucket=LOCAL_BUCKET, Key="cors-probe", Body=b"x")
    signed = s3.generate_presigned_url("get_object", Params={"Bucket": LOCAL_BUCKET, "Key": "cors-probe"})
    target = f"{moto_url(local_stack)}/{LOCAL_BUCKET}/cors-probe"
    ui = local_stack.endpoint  # the web UI is served at the API's root
    preflight = {"Access-Control-Request-Method": "PUT", "Access-Control-Request-Headers": "content-type"}

    foreign = requests.options(target, headers={"Origin": FOREIGN_ORIGIN, **preflight}, timeout=30)
    assert foreign.status_code == 403
    assert "Access-Control-Allow-Origin" not in foreign.headers
    # Even a signed URL is refused to a page of another origin.
    foreign_get = requests.get(signed, headers={"Origin": FOREIGN_ORIGIN}, timeout=30)
    assert foreign_get.status_code == 403
    assert "Access-Control-Allow-Origin" not in foreign_get.headers

    own = requests.options(target, headers={"Origin": ui, **preflight}, timeout=30)
    assert own.status_code == 200
    assert own.headers["Access-Control-Allow-Origin"] == ui
    assert "PUT" in own.headers["Access-Control-Allow-Methods"]
    read = requests.get(signed, headers={"Origin": ui}, timeout=30)
    assert read.status_code == 200 and read.content == b"x"
    assert read.headers["Access-Control-Allow-Origin"] == ui
    assert "ETag" in read.headers["Access-Control-Expose-Headers"]
