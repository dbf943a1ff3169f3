"""The stack's own AWS calls reach moto in process (lakelet/stack/inprocess_aws.py, issue 43): the same answers as
over moto's port, which still serves everyone else, and nothing left patched after the stack stops."""

from __future__ import annotations

from collections.abc import Iterator

import boto3
import pytest
import requests
from botocore.config import Config
from botocore.httpsession import URLLib3Session

from lakelet.stack import inprocess_aws, moto_direct
from lakelet.stack.app_environment import Credentials
from lakelet.stack.local import LOCAL_BUCKET, LocalStack

pytestmark = pytest.mark.e2e  # starts the embedded stack (moto and the API), in this process

KEYS = Credentials("AKIAINPROCESSTEST", "in/process+secret")
ORIGINAL_SEND = URLLib3Session.send


@pytest.fixture(scope="module")
def stack() -> Iterator[LocalStack]:
    with LocalStack(api_port=0, credentials=KEYS) as running:
        yield running
    assert URLLib3Session.send is ORIGINAL_SEND
    assert not inprocess_aws.installed() and not moto_direct.installed()


def _s3(stack: LocalStack) -> object:
    keys = stack.aws_credentials
    return boto3.client(
        "s3",
        endpoint_url=stack.moto_url,
        region_name=stack.region,
        aws_access_key_id=keys.access_key_id,
        aws_secret_access_key=keys.secret_access_key,
        config=Config(signature_version="s3v4"),
    )


def test_the_apps_calls_skip_the_socket_and_answer_as_moto_does(stack: LocalStack) -> None:
    s3 = _s3(stack)
    before = inprocess_aws.counters["in_process"]
    direct, wsgi = moto_direct.counters["direct"], moto_direct.counters["wsgi"]
    metadata = {"with-dash": "kept", "plain": "v"}
    s3.put_object(Bucket=LOCAL_BUCKET, Key="dir/a b+c.txt", Body=b"0123456789", Metadata=metadata)  # type: ignore[attr-defined]
    head = s3.head_object(Bucket=LOCAL_BUCKET, Key="dir/a b+c.txt")  # type: ignore[attr-defined]
    assert head["ContentLength"] == 10 and head["Metadata"] == metadata
    got = s3.get_object(Bucket=LOCAL_BUCKET, Key="dir/a b+c.txt", Range="bytes=2-5")  # type: ignore[attr-defined]
    assert got["Body"].read() == b"2345"
    # A managed upload from a file object (s3transfer reads it in parts).
    s3.upload_fileobj(_Unsized(b"x" * 70_000), LOCAL_BUCKET, "streamed")  # type: ignore[attr-defined]
    assert s3.get_object(Bucket=LOCAL_BUCKET, Key="streamed")["Body"].read() == b"x" * 70_000  # type: ignore[attr-defined]
    with pytest.raises(s3.exceptions.NoSuchKey):  # type: ignore[attr-defined]
        s3.get_object(Bucket=LOCAL_BUCKET, Key="missing")  # type: ignore[attr-defined]
    assert inprocess_aws.counters["in_process"] - before >= 6
    # Past the guard and the journal, moto's callbacks answered them without Flask (lakelet/stack/moto_direct.py).
    assert moto_direct.counters["direct"] - direct >= 6
    assert moto_direct.counters["wsgi"] == wsgi


def test_moto_still_serves_its_port_and_checks_the_key_pair(stack: LocalStack) -> None:
    url = _s3(stack).generate_presigned_url(  # type: ignore[attr-defined]
        "put_object", Params={"Bucket": LOCAL_BUCKET, "Key": "from-outside"}, ExpiresIn=60
    )
    assert requests.put(url, data=b"outside", timeout=10).status_code == 200
    assert requests.get(f"{stack.moto_url}/{LOCAL_BUCKET}/from-outside", timeout=10).status_code == 403


def test_a_request_signed_with_another_key_is_refused_in_process_too(stack: LocalStack) -> None:
    other = boto3.client(
        "s3",
        endpoint_url=stack.moto_url,
        region_name=stack.region,
        aws_access_key_id="AKIAOTHERKEY",
        aws_secret_access_key="other",
    )
    before = inprocess_aws.counters["in_process"]
    direct = moto_direct.counters["direct"]
    with pytest.raises(other.exceptions.ClientError) as refused:
        other.list_objects_v2(Bucket=LOCAL_BUCKET)
    assert refused.value.response["ResponseMetadata"]["HTTPStatusCode"] == 403
    assert inprocess_aws.counters["in_process"] == before + 1
    assert moto_direct.counters["direct"] == direct  # the guard refused it before moto


class _Unsized:
    """A file object with nothing but read()."""

    def __init__(self, data: bytes) -> None:
        self._data = data

    def read(self, size: int = -1) -> bytes:
        size = len(self._data) if size < 0 else size
        chunk, self._data = self._data[:size], self._data[size:]
        return chunk
