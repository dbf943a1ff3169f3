"""The local stack's AWS stand-in trusts a key of the stack's own, not the admin's lakeFS key; an admin key that
an admin deleted stays deleted across restarts, and a start that creates one says so."""

from __future__ import annotations

import base64
import json
import socket
import urllib.error
import urllib.request
from pathlib import Path

import boto3
import pytest
from botocore.exceptions import ClientError

from lakelet.defaults import DEFAULT_ACCESS_KEY_ID, DEFAULT_SECRET_ACCESS_KEY
from lakelet.stack.app_environment import Credentials
from lakelet.stack.local import LocalStack
from lakelet.stack.stack_keys import KEYS_FILE

pytestmark = pytest.mark.e2e  # starts the embedded stack in this process

SAMPLE = Credentials(DEFAULT_ACCESS_KEY_ID, DEFAULT_SECRET_ACCESS_KEY)
_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _api(stack: LocalStack, method: str, path: str, keys: Credentials) -> tuple[int, dict[str, str]]:
    request = urllib.request.Request(stack.api_url + path, method=method, data=b"" if method == "POST" else None)
    token = base64.b64encode(f"{keys.access_key_id}:{keys.secret_access_key}".encode()).decode()
    request.add_header("Authorization", f"Basic {token}")
    try:
        with _NO_PROXY.open(request, timeout=30) as response:
            body = response.read()
            return int(response.status), json.loads(body) if body else {}
    except urllib.error.HTTPError as error:
        return error.code, {}


def _moto_calls(stack: LocalStack, keys: Credentials) -> list[str]:
    """Which of S3, DynamoDB and KMS on the stack's moto answer a request signed with ``keys``."""
    served = []
    for service, call in (
        ("s3", lambda c: c.list_buckets()),
        ("dynamodb", lambda c: c.list_tables()),
        ("kms", lambda c: c.list_keys()),
    ):
        client = boto3.client(
            service,
            region_name=stack.region,
            endpoint_url=stack.moto_url,
            aws_access_key_id=keys.access_key_id,
            aws_secret_access_key=keys.secret_access_key,
        )
        try:
            call(client)
            served.append(service)
        except ClientError:
            pass
    return served


def test_moto_trusts_the_stack_s_key_and_a_deleted_sample_key_stays_deleted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data_dir = tmp_path / "data"
    with LocalStack(api_port=0, s3_port=0, credentials=SAMPLE, data_dir=data_dir) as stack:
        own = stack.aws_credentials
        assert own.access_key_id != SAMPLE.access_key_id and own.secret_access_key != SAMPLE.secret_access_key
        assert (data_dir / KEYS_FILE).stat().st_mode & 0o777 == 0o600
        assert _moto_calls(stack, SAMPLE) == []  # the published sample key never reaches moto
        assert _moto_calls(stack, own) == ["s3", "dynamodb", "kms"]
        # The admin makes a key of their own and retires the sample one.
        status, created = _api(stack, "POST", "/auth/users/admin/credentials", SAMPLE)
        assert status == 201
        mine = Credentials(created["access_key_id"], created["secret_access_key"])
        assert _api(stack, "DELETE", f"/auth/users/admin/credentials/{SAMPLE.access_key_id}", mine)[0] == 204
        assert _api(stack, "GET", "/user", SAMPLE)[0] == 401
        assert stack.admin_notice is None

    with LocalStack(api_port=0, s3_port=0, credentials=SAMPLE, data_dir=data_dir) as stack:
        assert stack.aws_credentials == own  # kept in the data directory
        assert _api(stack, "GET", "/user", SAMPLE)[0] == 401  # not created again
        assert _api(stack, "GET", "/user", mine)[0] == 200
        assert stack.admin_notice is not None and "stays deleted" in stack.admin_notice
        assert _moto_calls(stack, SAMPLE) == []

    # A data directory from before stack-keys.json (simulated by removing it): the stack cannot know it created
    # the sample key, so it creates it again, and says so.
    (data_dir / KEYS_FILE).unlink()
    with LocalStack(api_port=0, s3_port=0, credentials=SAMPLE, data_dir=data_dir) as stack:
        assert _api(stack, "GET", "/user", SAMPLE)[0] == 200
        assert stack.admin_notice == f"created the admin key {SAMPLE.access_key_id} (user admin, group Admins)"

    other = Credentials("AKIANEWADMINKEY00001", "a/new+admin/secret")
    with LocalStack(api_port=0, s3_port=0, credentials=other, data_dir=data_dir) as stack:
        assert _api(stack, "GET", "/user", other)[0] == 200
        assert stack.admin_notice is not None and f"created the admin key {other.access_key_id}" in stack.admin_notice


def test_an_ephemeral_stack_makes_a_key_per_run() -> None:
    with LocalStack(api_port=0, s3_port=0, credentials=SAMPLE) as stack:
        first = stack.aws_credentials
        assert _moto_calls(stack, first) == ["s3", "dynamodb", "kms"] and _moto_calls(stack, SAMPLE) == []
        assert stack.admin_notice is None
    with LocalStack(api_port=0, s3_port=0, credentials=SAMPLE) as stack:
        assert stack.aws_credentials != first


def test_a_stack_whose_moto_gets_an_earlier_stack_s_port_signs_with_its_own_key() -> None:
    # Ports are reused within a process (a whole test run starts hundreds of stacks): the second stack must not
    # find the first one's DynamoDB models, whose connection resolved the first stack's key.
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    keys = []
    for _ in range(2):
        with LocalStack(api_port=0, s3_port=0, moto_port=port, credentials=SAMPLE) as stack:
            keys.append(stack.aws_credentials)
            assert _api(stack, "GET", "/repositories", SAMPLE)[0] == 200
    assert keys[0] != keys[1]
