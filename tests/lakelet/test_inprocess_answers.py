"""moto's answers to in-process calls are the same with and without Flask (lakelet/stack/moto_direct.py, issue 43):
one scenario of calls, each with moto's randomness and clock pinned as the journal pins them, runs once the direct
way and once through moto's Flask apps, from an empty moto each time; every status line, header and body that
botocore receives is compared, errors included (a ConditionalCheckFailed, a NoSuchKey, a 404 HEAD, a 416, a 304)."""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError
from botocore.parsers import ResponseParserError
from moto.core.exceptions import JsonRESTError
from moto.sts import urls as sts_urls
from werkzeug.exceptions import BadRequestKeyError, Forbidden
from werkzeug.serving import make_server

from lakelet.persistence import determinism, middleware, snapshot
from lakelet.stack import inprocess_aws, moto_direct

pytestmark = pytest.mark.e2e  # moto in this process

WHEN = 1_790_000_000.0


class Pinned:
    """moto's app, each request pinned to its number (as the journal pins it), its answer kept."""

    def __init__(self) -> None:
        self.app = middleware.moto_app()
        self.answers: list[tuple[str, str, list[tuple[str, str]], bytes]] = []

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        number = len(self.answers) + 1
        status, headers, chunks = middleware.run(self.app, environ, number, WHEN + number)
        body = b"".join(chunks)
        # flask-cors's headers aside: the key-pair guard drops them (lakelet/stack/moto_guard.py).
        kept = [(str(k), str(v)) for k, v in headers if not str(k).lower().startswith("access-control-")]
        self.answers.append((str(environ["PATH_INFO"]), status, kept, body))
        start_response(status, headers)
        return [body]


@pytest.fixture
def served() -> Iterator[Any]:
    was_installed = determinism.installed()
    determinism.install()
    server = make_server("127.0.0.1", 0, Pinned(), True, request_handler=middleware.MotoRequestHandler)
    try:
        yield server
    finally:
        inprocess_aws.uninstall()
        server.server_close()
        snapshot.reset_moto()
        if not was_installed:
            determinism.uninstall()


def _client(url: str, service: str) -> Any:
    return boto3.client(
        service,
        endpoint_url=url,
        region_name="us-east-1",
        aws_access_key_id="AKIAANSWERS",
        aws_secret_access_key="s",
        config=Config(retries={"total_max_attempts": 1}, signature_version="s3v4" if service == "s3" else None),
    )


def _scenario(url: str) -> None:
    s3, dynamodb, kms = _client(url, "s3"), _client(url, "dynamodb"), _client(url, "kms")
    sfn = _client(url, "stepfunctions")
    s3.create_bucket(Bucket="bkt")
    s3.put_object(Bucket="bkt", Key="a b+c/é", Body=b"0123456789" * 10, Metadata={"m": "1", "with_under": "u"})
    s3.head_object(Bucket="bkt", Key="a b+c/é")
    s3.put_object(Bucket="bkt", Key="plain é+%", Body=b"p" * 10)  # answered from moto's backend (moto_fast_writes)
    s3.put_object(Bucket="bkt", Key="plain é+%", Body=b"", ContentMD5="1B2M2Y8AsgTpgAmY7PhCfg==")
    s3.get_object(Bucket="bkt", Key="a b+c/é", Range="bytes=2-5")["Body"].read()
    etag = s3.get_object(Bucket="bkt", Key="a b+c/é")["ETag"]
    dynamodb.create_table(
        TableName="t",
        KeySchema=[{"AttributeName": "p", "KeyType": "HASH"}, {"AttributeName": "s", "KeyType": "RANGE"}],
        AttributeDefinitions=[
            {"AttributeName": "p", "AttributeType": "S"},
            {"AttributeName": "s", "AttributeType": "S"},
        ],
        BillingMode="PAY_PER_REQUEST",
    )
    for i in range(20):
        dynamodb.put_item(TableName="t", Item={"p": {"S": "1"}, "s": {"S": f"{i:03d}"}, "v": {"N": str(i)}})
    failing: list[Callable[[], Any]] = [
        lambda: s3.get_object(Bucket="bkt", Key="a b+c/é", IfNoneMatch=etag),
        lambda: s3.get_object(Bucket="bkt", Key="missing"),
        lambda: s3.head_object(Bucket="bkt", Key="missing"),
        lambda: s3.get_object(Bucket="bkt", Key="a b+c/é", Range="bytes=500-600"),
        lambda: s3.get_object(Bucket="nobucket", Key="k"),
        lambda: dynamodb.put_item(
            TableName="t", Item={"p": {"S": "1"}, "s": {"S": "001"}}, ConditionExpression="attribute_not_exists(p)"
        ),
        lambda: dynamodb.get_item(TableName="missing", Key={"p": {"S": "1"}}),
    ]
    for call in failing:
        with pytest.raises(ClientError):
            call()
    dynamodb.query(TableName="t", KeyConditionExpression="p = :p", ExpressionAttributeValues={":p": {"S": "1"}})
    dynamodb.get_item(TableName="t", Key={"p": {"S": "1"}, "s": {"S": "007"}})
    # A managed upload from a file object (s3transfer: a body botocore streams, with its checksum), read back.
    s3.upload_fileobj(io.BytesIO(b"z" * 70_000), "bkt", "streamed")
    assert s3.get_object(Bucket="bkt", Key="streamed")["Body"].read() == b"z" * 70_000
    s3.put_object(Bucket="bkt", Key="dir//double", Body=b"d")
    s3.get_object(Bucket="bkt", Key="dir//double")["Body"].read()
    s3.list_objects_v2(Bucket="bkt")
    s3.delete_object(Bucket="bkt", Key="a b+c/é")
    key = kms.create_key()["KeyMetadata"]["KeyId"]
    kms.decrypt(CiphertextBlob=kms.encrypt(KeyId=key, Plaintext=b"secret")["CiphertextBlob"])
    sfn.list_state_machines()


def _run(
    server: Any, scenario: Callable[[str], None] = _scenario
) -> list[tuple[str, str, list[tuple[str, str]], bytes]]:
    snapshot.reset_moto()
    server.app = Pinned()
    host, port = server.server_address
    url = f"http://{host}:{port}"
    inprocess_aws.install(url, server)
    try:
        scenario(url)
    finally:
        inprocess_aws.uninstall()
    answers: list[tuple[str, str, list[tuple[str, str]], bytes]] = server.app.answers
    return answers


def test_the_direct_answers_are_flasks(served: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    before = moto_direct.counters["direct"]
    direct = _run(served)
    assert moto_direct.counters["direct"] - before == len(direct)
    monkeypatch.setattr(moto_direct, "_direct", lambda *_: None)  # every call the WSGI way
    through_flask = _run(served)
    assert moto_direct.counters["direct"] - before == len(direct)
    assert len(direct) == len(through_flask) > 25
    for got, expected in zip(direct, through_flask, strict=True):
        assert got == expected
    statuses = {status[:3] for _, status, _, _ in direct}
    assert {"200", "204", "304", "400", "404", "416"} <= statuses


def _raising(error: Exception) -> Callable[..., Any]:
    def handler(request: Any, full_url: str, headers: Any) -> Any:
        raise error

    return handler


@pytest.mark.parametrize(
    "error",
    [
        JsonRESTError("Boom", "moto's own HTTP error"),
        Forbidden("werkzeug's"),
        ClientError({"Error": {"Code": "Inner", "Message": "a client error inside moto"}}, "Op"),
        BadRequestKeyError("missing"),  # trapped in debug mode: the server's 500
        RuntimeError("a bug"),
    ],
    ids=lambda error: type(error).__name__,
)
def test_errors_a_callback_raises_answer_as_through_flask(
    served: Any, monkeypatch: pytest.MonkeyPatch, error: Exception
) -> None:
    monkeypatch.setitem(sts_urls.url_paths, "{0}/$", _raising(error))
    seen: list[Any] = []

    def scenario(url: str) -> None:
        with pytest.raises(
            (ClientError, BotoCoreError, ResponseParserError)
        ) as refused:  # STS's parser fails on a non-XML body
            _client(url, "sts").get_caller_identity()
        seen.append(getattr(refused.value, "response", None) or str(refused.value))

    before = moto_direct.counters["direct"]
    direct = _run(served, scenario)
    assert moto_direct.counters["direct"] == before + 1
    monkeypatch.setattr(moto_direct, "_direct", lambda *_: None)
    through_flask = _run(served, scenario)
    assert direct == through_flask
    assert seen[0] == seen[1]
    if isinstance(error, BadRequestKeyError | RuntimeError):  # propagated: the server's 500, moto answered nothing
        assert direct == [] and seen[0]["ResponseMetadata"]["HTTPStatusCode"] == 500
    else:
        assert [status for _, status, _, _ in direct] == [
            {JsonRESTError: "400 BAD REQUEST", Forbidden: "403 FORBIDDEN"}.get(type(error), "400 BAD REQUEST")
        ]
