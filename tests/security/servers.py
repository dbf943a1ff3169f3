"""The two local HTTP servers of ``lakelet up`` (the API's devserver and the S3 gateway's server), in this
process over the in-memory stores, plus a raw-socket client: header injection is only visible on the wire.

Import ``stack`` into a test module to use it (``from .servers import stack``): one pair of servers per module.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from app import app
from chalicelib import wiring
from chalicelib.graveler.records import Entry, StagedEntry
from chalicelib.s3proxy import S3Gateway
from chalicelib.settings import Settings
from lakelet.stack.devserver import ApiServer
from lakelet.stack.s3server import S3Server

BUCKET = "security-tests"
PREFIX = "/api/v1"


@dataclass
class RawResponse:
    status: int
    head: bytes  # the status line and header block, as sent
    headers: list[tuple[str, str]]
    body: bytes

    def header(self, name: str) -> str | None:
        return next((v for k, v in self.headers if k.lower() == name.lower()), None)

    def json(self) -> Any:
        return json.loads(self.body)


def raw_request(port: int, request: bytes, timeout: float = 10.0) -> RawResponse:
    """Sends ``request`` (which should say ``Connection: close``) and reads the whole answer off the socket."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(request)
        chunks = []
        while True:
            try:
                data = sock.recv(65536)
            except ConnectionResetError:
                break
            if not data:
                break
            chunks.append(data)
    raw = b"".join(chunks)
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    status = int(lines[0].split()[1])
    headers = []
    for line in lines[1:]:
        name, _, value = line.decode("latin-1").partition(":")
        headers.append((name.strip(), value.strip()))
    return RawResponse(status, head, headers, body)


@dataclass
class Stack:
    services: wiring.Services
    api: ApiServer
    s3: S3Server
    key: str
    secret: str

    def basic(self) -> str:
        return "Basic " + base64.b64encode(f"{self.key}:{self.secret}".encode()).decode()

    def api_request(
        self, method: str, target: str, body: bytes = b"", headers: dict[str, str] | None = None, auth: bool = True
    ) -> RawResponse:
        lines = [
            f"{method} {PREFIX}{target} HTTP/1.1",
            "Host: 127.0.0.1",
            "Connection: close",
            f"Content-Length: {len(body)}",
        ]
        if auth:
            lines.append(f"Authorization: {self.basic()}")
        lines.extend(f"{k}: {v}" for k, v in (headers or {}).items())
        return raw_request(self.api.port, ("\r\n".join(lines) + "\r\n\r\n").encode() + body)

    def stage(self, repo: str, branch: str, path: str, **changes: Any) -> None:
        """Rewrites a staged entry in the store as a writer without validation (older code) could have left it."""
        engine = self.services.engine
        token = engine.branches.get_branch(repo, branch).staging_token
        staged = engine.ports.staging.get(token, path)
        assert staged is not None and staged.value is not None
        entry: Entry = dataclasses.replace(staged.value, **changes)
        engine.ports.staging.set(token, StagedEntry(staged.key, entry))


@pytest.fixture(scope="module")
def stack() -> Iterator[Stack]:
    services = wiring.memory_services(Settings(bucket=BUCKET))
    wiring.set_services(services)
    credential, secret = services.auth.setup("admin")
    api = ApiServer(app, port=0)
    s3 = S3Server(S3Gateway.from_services(services), port=0)
    api.start()
    s3.start()
    try:
        yield Stack(services, api, s3, credential.access_key_id, secret)
    finally:
        api.stop()
        s3.stop()
        wiring.set_services(None)


def signed_s3_request(
    stack: Stack, method: str, path: str, query: str = "", body: bytes = b"", headers: dict[str, str] | None = None
) -> bytes:
    """The bytes of an S3 request signed with SigV4 (header auth) by botocore, ready for the raw socket."""
    import hashlib

    from botocore.auth import S3SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    host = f"127.0.0.1:{stack.s3.port}"
    url = f"http://{host}{path}" + (f"?{query}" if query else "")
    aws = AWSRequest(method=method, url=url, data=body, headers=dict(headers or {}))
    aws.headers["X-Amz-Content-SHA256"] = hashlib.sha256(body).hexdigest()
    aws.headers["Host"] = host
    S3SigV4Auth(Credentials(stack.key, stack.secret), "s3", "us-east-1").add_auth(aws)
    target = path + (f"?{query}" if query else "")
    lines = [f"{method} {target} HTTP/1.1", "Connection: close", f"Content-Length: {len(body)}"]
    lines.extend(f"{k}: {v}" for k, v in aws.headers.items() if k.lower() != "content-length")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def presigned_get(stack: Stack, bucket: str, key: str, **params: str) -> str:
    """A presigned GetObject URL for the gateway (path style), with extra parameters such as
    ResponseContentType."""
    import boto3
    from botocore.config import Config

    client = boto3.client(
        "s3",
        endpoint_url=stack.s3.url,
        region_name="us-east-1",
        aws_access_key_id=stack.key,
        aws_secret_access_key=stack.secret,
        config=Config(signature_version="s3v4", s3={"addressing_style": "path"}),
    )
    return str(client.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": key, **params}))
