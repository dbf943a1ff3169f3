"""The stack's own in-process calls with its key carry an unchecked signature (lakelet/stack/inprocess_signing.py):
they answer as before, while other keys, presigned URLs and calls outside the process are signed as before, and
nothing stays patched after the stack stops."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
import requests
from botocore.auth import SigV4Auth
from botocore.config import Config

from lakelet.stack import inprocess_signing
from lakelet.stack.app_environment import Credentials
from lakelet.stack.local import LOCAL_BUCKET, LocalStack

pytestmark = pytest.mark.e2e  # starts the embedded stack (moto and the API), in this process

KEYS = Credentials("AKIAINPROCESSSIGNING", "in/process+signing+secret")
ORIGINAL_ADD_AUTH = SigV4Auth.add_auth


@pytest.fixture(scope="module")
def stack() -> Iterator[LocalStack]:
    with LocalStack(api_port=0, credentials=KEYS) as running:
        yield running
    assert SigV4Auth.add_auth is ORIGINAL_ADD_AUTH
    assert not inprocess_signing.installed()


def _client(stack: LocalStack, service: str, key_id: str | None = None, secret: str | None = None) -> Any:
    keys = stack.aws_credentials
    return boto3.client(
        service,
        endpoint_url=stack.moto_url,
        region_name=stack.region,
        aws_access_key_id=key_id or keys.access_key_id,
        aws_secret_access_key=secret or keys.secret_access_key,
        config=Config(signature_version="s3v4", retries={"max_attempts": 1}) if service == "s3" else None,
    )


def _authorizations(client: Any) -> list[str]:
    seen: list[str] = []

    def record(request: Any, **_: Any) -> None:
        value = request.headers["Authorization"]
        seen.append(value.decode() if isinstance(value, bytes) else value)

    client.meta.events.register("before-send", record)
    return seen


def test_the_stacks_own_calls_carry_the_unchecked_signature_and_answer_as_before(stack: LocalStack) -> None:
    s3, dynamodb = _client(stack, "s3"), _client(stack, "dynamodb")
    s3_seen, dynamodb_seen = _authorizations(s3), _authorizations(dynamodb)
    s3.put_object(Bucket=LOCAL_BUCKET, Key="signed/a", Body=b"0123456789", Metadata={"k": "v"})
    got = s3.get_object(Bucket=LOCAL_BUCKET, Key="signed/a", Range="bytes=1-3")
    assert got["Body"].read() == b"123" and got["Metadata"] == {"k": "v"}
    assert dynamodb.list_tables()["TableNames"]  # the stack's tables
    for header, service in [(s3_seen[0], "s3"), (dynamodb_seen[0], "dynamodb")]:
        assert header.startswith(f"AWS4-HMAC-SHA256 Credential={stack.aws_credentials.access_key_id}/")
        assert f"/{stack.region}/{service}/aws4_request" in header
        assert header.endswith(f"Signature={inprocess_signing.UNCHECKED_SIGNATURE}")


def test_another_key_is_signed_and_still_refused(stack: LocalStack) -> None:
    s3 = _client(stack, "s3", "AKIANOTTHESTACKSKEY1", "not-the-stacks-secret")
    seen = _authorizations(s3)
    with pytest.raises(s3.exceptions.ClientError):
        s3.head_bucket(Bucket=LOCAL_BUCKET)
    assert seen and not seen[0].endswith(inprocess_signing.UNCHECKED_SIGNATURE)


def test_a_presigned_url_is_signed_and_works_over_the_socket(stack: LocalStack) -> None:
    s3 = _client(stack, "s3")
    s3.put_object(Bucket=LOCAL_BUCKET, Key="signed/presigned", Body=b"over the socket")
    url = s3.generate_presigned_url("get_object", Params={"Bucket": LOCAL_BUCKET, "Key": "signed/presigned"})
    assert "X-Amz-Signature=" in url and inprocess_signing.UNCHECKED_SIGNATURE not in url
    answer = requests.get(url, timeout=30)
    assert answer.status_code == 200 and answer.content == b"over the socket"
    tampered = url.replace("X-Amz-Signature=", "X-Amz-Signature=0")
    assert requests.get(tampered, timeout=30).status_code == 403
