"""The guard in front of the local stack's moto, around a stand-in WSGI app: what it lets through and what not."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from werkzeug.test import Client

from lakelet.stack.moto_guard import MotoGuard, signed_headers, ui_origins

KEY, SECRET = "AKIASTACKKEY", "stack/secret+key"
UI = "http://127.0.0.1:8000"


def inner(environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
    """Stands in for moto, with flask-cors's habit of reflecting any Origin."""
    body = environ["wsgi.input"].read()
    start_response(
        "200 OK",
        [
            ("Content-Type", "application/json"),
            ("Access-Control-Allow-Origin", "*"),
            ("Access-Control-Allow-Credentials", "true"),
        ],
    )
    return [json.dumps({"seen": len(body)}).encode()]


def guarded() -> Client:
    guard = MotoGuard(inner, KEY, SECRET)
    guard.allow_origins(ui_origins(UI))
    return Client(guard)


def dynamodb_request(body: bytes, secret: str = SECRET) -> dict[str, str]:
    request = AWSRequest(
        method="POST",
        url="http://localhost/",
        data=body,
        headers={"X-Amz-Target": "DynamoDB_20120810.Scan", "Content-Type": "application/x-amz-json-1.0"},
    )
    SigV4Auth(Credentials(KEY, secret), "dynamodb", "us-east-1").add_auth(request)
    return dict(request.headers.items())


def test_a_signed_request_of_another_service_passes_and_its_body_is_bound() -> None:
    client = guarded()
    body = b'{"TableName": "lakelet-local-auth"}'
    headers = dynamodb_request(body)
    answer = client.post("/", data=body, headers=headers)
    assert answer.status_code == 200
    assert answer.json == {"seen": len(body)}  # moto still reads the whole body after the guard hashed it
    tampered = client.post("/", data=b'{"TableName": "lakelet-local-keys"}', headers=headers)
    assert tampered.status_code == 403
    assert b"SignatureDoesNotMatch" in tampered.data
    wrong = client.post("/", data=body, headers=dynamodb_request(body, secret="guessed"))
    assert wrong.status_code == 403


def test_unsigned_and_unknown_keys_are_refused_before_moto() -> None:
    client = guarded()
    assert client.get("/moto-api/data.json").status_code == 403
    headers = signed_headers("GET", "http://localhost/moto-api/config", b"", "AKIAOTHER", SECRET, "us-east-1")
    refused = client.get("/moto-api/config", headers=headers)
    assert refused.status_code == 403 and b"InvalidAccessKeyId" in refused.data
    own = signed_headers("GET", "http://localhost/moto-api/config", b"", KEY, SECRET, "us-east-1")
    assert client.get("/moto-api/config", headers=own).status_code == 200


def test_moto_s_cors_headers_are_replaced_by_the_ui_s_own() -> None:
    client = guarded()
    own = signed_headers("GET", "http://localhost/bucket/key", b"", KEY, SECRET, "us-east-1")
    plain = client.get("/bucket/key", headers=own)
    assert plain.status_code == 200
    assert not [name for name, _ in plain.headers.items() if name.lower().startswith("access-control-")]
    for origin in ("http://127.0.0.1:8000", "http://localhost:8000"):
        answer = client.get("/bucket/key", headers={**own, "Origin": origin})
        assert answer.headers["Access-Control-Allow-Origin"] == origin
        assert "Access-Control-Allow-Credentials" not in answer.headers
    for foreign in ("http://127.0.0.1:8001", "null", "http://evil.example"):
        answer = client.get("/bucket/key", headers={**own, "Origin": foreign})
        assert answer.status_code == 403
        assert "Access-Control-Allow-Origin" not in answer.headers


def test_a_preflight_is_answered_for_the_ui_only() -> None:
    client = guarded()
    ask = {"Access-Control-Request-Method": "PUT", "Access-Control-Request-Headers": "content-type,if-none-match"}
    own = client.options("/bucket/key", headers={"Origin": UI, **ask})
    assert own.status_code == 200
    assert own.headers["Access-Control-Allow-Origin"] == UI
    assert own.headers["Access-Control-Allow-Headers"] == "content-type,if-none-match"
    assert client.options("/bucket/key", headers={"Origin": "http://evil.example", **ask}).status_code == 403
    assert client.options("/bucket/key", headers=ask).status_code == 403  # no origin: not a preflight


def test_a_presigned_url_followed_with_the_apis_basic_auth_passes_without_it() -> None:
    """lakectl's Go client keeps the API's Authorization across the 302 to a presigned URL on the same host."""
    import boto3
    from botocore.config import Config

    s3 = boto3.client(
        "s3",
        endpoint_url="http://localhost",
        region_name="us-east-1",
        aws_access_key_id=KEY,
        aws_secret_access_key=SECRET,
        config=Config(signature_version="s3v4"),
    )
    url = s3.generate_presigned_url("get_object", Params={"Bucket": "b", "Key": "k"}, ExpiresIn=300)
    path = url.removeprefix("http://localhost")
    seen: dict[str, Any] = {}

    def moto(environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        seen["authorization"] = environ.get("HTTP_AUTHORIZATION")
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b"ok"]

    client = Client(MotoGuard(moto, KEY, SECRET))
    answer = client.get(path, headers={"Authorization": "Basic QUtJQTpzZWNyZXQ="})
    assert answer.status_code == 200 and seen == {"authorization": None}, answer.data
    # Without a presigned signature a Basic header is no credential: still refused.
    assert client.get("/b/k", headers={"Authorization": "Basic QUtJQTpzZWNyZXQ="}).status_code in (400, 403)


class CountingInput:
    """A request body that counts what is read of it, and would be 256 MiB if read to the end."""

    def __init__(self, size: int) -> None:
        self.size, self.read_bytes = size, 0

    def read(self, amount: int = -1) -> bytes:
        amount = self.size - self.read_bytes if amount < 0 else min(amount, self.size - self.read_bytes)
        self.read_bytes += amount
        return b"x" * amount


def _call(environ: dict[str, Any]) -> tuple[str, bytes]:
    statuses: list[str] = []
    guard = MotoGuard(inner, KEY, SECRET)
    body = b"".join(guard(environ, lambda status, headers, exc_info=None: statuses.append(status)))
    return statuses[0], body


def _environ(stream: CountingInput, **extra: str) -> dict[str, Any]:
    return {
        "REQUEST_METHOD": "POST",
        "PATH_INFO": "/",
        "QUERY_STRING": "",
        "CONTENT_LENGTH": str(stream.size),
        "CONTENT_TYPE": "application/x-amz-json-1.0",
        "HTTP_X_AMZ_TARGET": "DynamoDB_20120810.PutItem",
        "wsgi.input": stream,
        **extra,
    }


def test_no_body_is_read_before_the_key_is_known_and_its_size_bound() -> None:
    big = 256 * 1024 * 1024
    for extra in (
        {},  # unsigned
        {
            "HTTP_AUTHORIZATION": "AWS4-HMAC-SHA256 Credential=AKIAOTHER/20261128/us-east-1/dynamodb/aws4_request, "
            "SignedHeaders=host, Signature=" + "0" * 64
        },  # another key
        {
            "HTTP_AUTHORIZATION": "AWS4-HMAC-SHA256 Credential=" + KEY + "/20261128/us-east-1/dynamodb/aws4_request, "
            "SignedHeaders=host, Signature=" + "0" * 64
        },  # the stack's key, but a body larger than any AWS request
    ):
        stream = CountingInput(big)
        status, _ = _call(_environ(stream, **extra))
        assert status.startswith(("403", "400")), (extra, status)
        assert stream.read_bytes == 0, extra
    chunked = CountingInput(big)
    environ = _environ(chunked, HTTP_AUTHORIZATION="AWS4-HMAC-SHA256 Credential=" + KEY + "/x/y/dynamodb/aws4_request")
    environ.pop("CONTENT_LENGTH")
    environ["HTTP_TRANSFER_ENCODING"] = "chunked"
    status, _ = _call(environ)
    assert status.startswith("411") and chunked.read_bytes == 0


def test_the_process_s_own_requests_with_the_stack_s_key_are_not_checked_again() -> None:
    """lakelet/stack/inprocess_aws.py marks its environ: with the stack's key named, the signature (which only the
    process's own clients could have made) is not verified again; any other key still is, and the mark cannot come
    from a socket (werkzeug's environ holds a request's headers under HTTP_* only)."""
    from lakelet.stack.inprocess_aws import IN_PROCESS

    client = guarded()
    body = b'{"TableName": "lakelet-local-auth"}'
    forged = dynamodb_request(body, secret="not the stack's")
    assert client.post("/", data=body, headers=forged).status_code == 403
    mine = client.post("/", data=body, headers=forged, environ_overrides={IN_PROCESS: True})
    assert mine.status_code == 200 and mine.json == {"seen": len(body)}
    other = signed_headers("GET", "http://localhost/moto-api/config", b"", "AKIAOTHER", SECRET, "us-east-1")
    refused = client.get("/moto-api/config", headers=other, environ_overrides={IN_PROCESS: True})
    assert refused.status_code == 403 and b"InvalidAccessKeyId" in refused.data
    assert client.get("/moto-api/config", environ_overrides={IN_PROCESS: True}).status_code == 403  # unsigned
    header = client.post("/", data=body, headers={**forged, "Lakelet.In-Process": "True"})
    assert header.status_code == 403
