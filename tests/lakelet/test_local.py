"""``LocalStack`` in-process: it serves the API against moto, and stopping it leaves the process as it found it."""

from __future__ import annotations

import base64
import json
import os
import socket
import urllib.error
import urllib.request
from pathlib import Path

import boto3
import pytest

from lakelet.stack.app_environment import Credentials, local_environment
from lakelet.stack.local import LOCAL_BUCKET, LocalStack

pytestmark = pytest.mark.e2e  # starts the embedded stack (moto and the API), in this process

_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))
KEYS = Credentials("AKIALOCALSTACKTEST", "local/stack+secret")


def _get(url: str, credentials: Credentials | None = None) -> tuple[int, bytes]:
    request = urllib.request.Request(url)
    if credentials is not None:
        token = base64.b64encode(f"{credentials.access_key_id}:{credentials.secret_access_key}".encode()).decode()
        request.add_header("Authorization", f"Basic {token}")
    try:
        with _NO_PROXY.open(request, timeout=10) as response:
            return int(response.status), response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def _bindable(port: int) -> bool:
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _watched_environment() -> dict[str, str | None]:
    names = [*local_environment("x", "x", "x", "x"), "AWS_SESSION_TOKEN", "AWS_PROFILE"]
    return {name: os.environ.get(name) for name in names}


def test_serves_the_api_against_moto_and_cleans_up() -> None:
    before = _watched_environment()
    with LocalStack(api_port=0, credentials=KEYS) as stack:
        assert stack.api_url == f"http://127.0.0.1:{stack.api_port}/api/v1"
        assert os.environ["LAKELET_AWS_ENDPOINT_URL"] == stack.moto_url
        assert os.environ["LAKELET_BUCKET"] == LOCAL_BUCKET
        status, _ = _get(stack.api_url + "/healthcheck")
        assert 200 <= status < 300
        assert _get(stack.api_url + "/repositories")[0] == 401
        assert _get(stack.api_url + "/repositories", Credentials(KEYS.access_key_id, "wrong"))[0] == 401
        status, body = _get(stack.api_url + "/config", KEYS)
        assert status == 200
        assert json.loads(body)["storage_config"]["default_namespace_prefix"] == stack.default_namespace_prefix
        # The bucket and tables really are on the moto server the stack started, which takes the stack's key only.
        assert _get(f"{stack.moto_url}/{LOCAL_BUCKET}")[0] == 403
        assert os.environ["AWS_ACCESS_KEY_ID"] == stack.aws_credentials.access_key_id != KEYS.access_key_id
        s3 = boto3.client("s3", region_name=stack.region, endpoint_url=stack.moto_url)
        assert s3.head_bucket(Bucket=LOCAL_BUCKET)["ResponseMetadata"]["HTTPStatusCode"] == 200
        api_port = stack.api_port
        moto_port = int(stack.moto_url.rsplit(":", 1)[1])
    assert _watched_environment() == before
    assert _bindable(api_port)
    assert _bindable(moto_port)


def test_a_failed_start_undoes_itself() -> None:
    before = _watched_environment()
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        stack = LocalStack(api_port=port)
        with pytest.raises(OSError, match=str(port)):
            stack.start()
    assert _watched_environment() == before
    with pytest.raises(RuntimeError):
        stack.api_url  # noqa: B018 - not started, so nothing to point at
    stack.stop()  # stopping what never started is harmless


def test_the_state_file_is_published_before_the_sample_data_and_the_import_source_is_ready(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lakelet.defaults import LOCAL_IMPORT_BUCKET
    from lakelet.stack.statefile import read_state

    seen: dict[str, object] = {}

    def samples(stack: LocalStack) -> None:
        # What a `lakelet` command run while the sample data is written finds.
        seen["state"] = read_state(stack.data_dir)

    monkeypatch.setattr(LocalStack, "_create_samples", samples)
    monkeypatch.setenv("LAKELET_IMPORT_ALLOWED_LOCATIONS", "s3://elsewhere/")
    with LocalStack(api_port=0, s3_port=0, credentials=KEYS, data_dir=tmp_path / "data", sample_data=True) as stack:
        state = seen["state"]
        assert isinstance(state, dict) and state["api_url"] == stack.endpoint
        assert os.environ["LAKELET_IMPORT_ALLOWED_LOCATIONS"] == f"s3://elsewhere/,s3://{LOCAL_IMPORT_BUCKET}/"
        s3 = boto3.client("s3", region_name=stack.region, endpoint_url=stack.moto_url)
        assert s3.head_bucket(Bucket=LOCAL_IMPORT_BUCKET)["ResponseMetadata"]["HTTPStatusCode"] == 200


def test_the_gateway_url_reaches_the_iceberg_catalog_when_its_port_is_known() -> None:
    assert "LAKELET_ICEBERG_S3_ENDPOINT" not in local_environment("x", "x", "x", "x")
    given = local_environment("x", "x", "x", "x", s3_gateway_url="http://127.0.0.1:8001")
    assert given["LAKELET_ICEBERG_S3_ENDPOINT"] == "http://127.0.0.1:8001"
