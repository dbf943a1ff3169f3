"""Real boto3 clients talking to an S3Gateway in this process, over the in-memory services.

A ``before-send`` hook hands botocore's fully signed request to ``gateway.handle`` and botocore parses the
answer, so these tests exercise the client's own signing, serialization and parsing, without sockets. The
``https`` variant makes botocore send what it sends over TLS (UNSIGNED-PAYLOAD, aws-chunked bodies with a
checksum trailer) without any TLS: the request never leaves the process.
"""

from __future__ import annotations

import hashlib
import io
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import boto3
import pytest
from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSPreparedRequest, AWSRequest, AWSResponse
from botocore.client import BaseClient
from botocore.config import Config
from botocore.credentials import Credentials

from chalicelib.adapters.sigv4 import BotocoreSigner
from chalicelib.auth import errors as auth_errors
from chalicelib.graveler.records import Repository
from chalicelib.s3proxy import Request, Response, S3Gateway
from chalicelib.wiring import Services, memory_services
from tests.clocks import SettableClock

ACCESS_KEY = "AKIAGATEWAYTESTKEY01"
SECRET = "gateway/test+secret/key0123456789abcdef"
USER = "alice"
BUCKET = "lakelet-test"
REGION = "us-east-1"


class _RawBody(io.BytesIO):
    def stream(self, **kwargs: Any) -> Iterator[bytes]:
        data = self.read()
        while data:
            yield data
            data = self.read()


def to_gateway_request(prepared: AWSPreparedRequest) -> Request:
    parts = urlsplit(prepared.url)
    body = prepared.body
    if hasattr(body, "read"):
        data = body.read()
        if hasattr(body, "seek"):
            body.seek(0)
    elif isinstance(body, str):
        data = body.encode()
    else:
        data = bytes(body or b"")
    headers = [(k, v.decode() if isinstance(v, bytes) else v) for k, v in prepared.headers.items()]
    headers.append(("Host", parts.netloc))
    return Request.build(prepared.method, parts.path, parts.query, headers, data)


@dataclass
class Clock:
    """The gateway's clock: real time shifted by ``offset`` seconds."""

    offset: float = 0.0

    def __call__(self) -> float:
        return time.time() + self.offset


@dataclass
class Harness:
    services: Services
    gateway: S3Gateway
    clock: Clock
    keys: dict[str, tuple[str, str]]
    requests: list[Request] = field(default_factory=list)
    responses: list[Response] = field(default_factory=list)
    # Applied to each signed request before the gateway sees it: a man in the middle, for the signature tests.
    tamper: Callable[[Request], Request] | None = None

    def client(self, scheme: str = "http", key: str = ACCESS_KEY, secret: str = SECRET, **config: Any) -> BaseClient:
        client = boto3.client(
            "s3",
            endpoint_url=f"{scheme}://gateway.test",
            region_name=REGION,
            aws_access_key_id=key,
            aws_secret_access_key=secret,
            config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1}, **config),
        )
        client.meta.events.register("before-send", self._send)
        return client

    def _send(self, request: AWSPreparedRequest, **kwargs: Any) -> AWSResponse:
        converted = to_gateway_request(request)
        if self.tamper is not None:
            converted = self.tamper(converted)
        self.requests.append(converted)
        response = self.gateway.handle(converted)
        self.responses.append(response)
        body = b"" if converted.method == "HEAD" else response.body
        return AWSResponse(request.url, response.status, dict(response.headers), _RawBody(body))

    def repo(self, name: str, default_branch: str = "main") -> Repository:
        return self.services.engine.repositories.create_repository(name, f"s3://{BUCKET}/{name}", default_branch)

    def handle(self, request: Request) -> Response:
        return self.gateway.handle(request)


def signed(
    method: str,
    path: str,
    query: str = "",
    body: bytes = b"",
    headers: dict[str, str] | None = None,
    key: str = ACCESS_KEY,
    secret: str = SECRET,
) -> Request:
    """A request signed by botocore's SigV4 signer, for shapes no boto3 operation sends."""
    url = f"http://gateway.test{path}" + (f"?{query}" if query else "")
    aws = AWSRequest(method=method, url=url, data=body, headers=dict(headers or {}))
    aws.headers["X-Amz-Content-SHA256"] = hashlib.sha256(body).hexdigest()
    S3SigV4Auth(Credentials(key, secret), "s3", REGION).add_auth(aws)
    return Request.build(method, path, query, [*aws.headers.items(), ("Host", "gateway.test")], body)


def lookup(keys: dict[str, tuple[str, str]]) -> Callable[[str], tuple[str, str]]:
    def find(access_key_id: str) -> tuple[str, str]:
        try:
            return keys[access_key_id]
        except KeyError:
            raise auth_errors.CredentialNotFound(access_key_id) from None

    return find


@pytest.fixture
def harness() -> Harness:
    services = memory_services(clock=SettableClock())
    clock = Clock()
    keys = {ACCESS_KEY: (USER, SECRET)}
    gateway = S3Gateway(services.engine, lookup(keys), BotocoreSigner(), clock=clock)
    return Harness(services, gateway, clock, keys)


@pytest.fixture(params=["http", "https"])
def s3(harness: Harness, request: pytest.FixtureRequest) -> BaseClient:
    """boto3 over "http" (every payload signed) and "https" (unsigned payloads, aws-chunked with trailers)."""
    return harness.client(str(request.param))


@pytest.fixture
def s3_http(harness: Harness) -> BaseClient:
    """Presigns with SigV4 (boto3 presigns S3 URLs with SigV2 unless told otherwise)."""
    return harness.client("http", signature_version="s3v4")


@pytest.fixture
def repo(harness: Harness) -> Repository:
    return harness.repo("repo")
