"""Fixtures of the write-side security tests (tests/security/test_{namespaces,immutable,bounds,write_headers,
commit_drop}.py): the API through chalice.test.Client and the S3 gateway through real boto3 clients, both over
one set of in-memory services whose deployment bucket is BUCKET.

Test modules import the fixtures they use from here (no conftest: other suites share this folder).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.awsrequest import AWSPreparedRequest, AWSResponse
from botocore.client import BaseClient
from botocore.config import Config
from chalice.test import Client, HTTPResponse

from chalicelib import wiring
from chalicelib.s3proxy import Request, Response, S3Gateway
from tests.api.support import Api, app, memory_services
from tests.s3proxy.conftest import _RawBody, signed, to_gateway_request

BUCKET = "security-bucket"
NAMESPACE = f"s3://{BUCKET}"
REPO = "repo1"
BACKING = "/repositories/{repo}/branches/{branch}/staging/backing"


@pytest.fixture
def services() -> Iterator[wiring.Services]:
    with memory_services(BUCKET) as built:
        yield built


@pytest.fixture
def credentials(services: wiring.Services) -> tuple[str, str]:
    credential, secret = services.auth.setup("admin")
    return credential.access_key_id, secret


@pytest.fixture
def api(services: wiring.Services, credentials: tuple[str, str]) -> Iterator[Api]:
    with Client(app) as test_client:
        yield Api(test_client, credentials)


class Gateway:
    """The S3 gateway over the test's services: a boto3 client, and raw signed requests for what boto3 will not
    send (control characters in headers)."""

    def __init__(self, services: wiring.Services, credentials: tuple[str, str]) -> None:
        self.gateway = S3Gateway.from_services(services)
        self.credentials = credentials

    def client(self) -> BaseClient:
        key, secret = self.credentials
        client = boto3.client(
            "s3",
            endpoint_url="http://gateway.test",
            region_name="us-east-1",
            aws_access_key_id=key,
            aws_secret_access_key=secret,
            config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1}),
        )
        client.meta.events.register("before-send", self._send)
        return client

    def _send(self, request: AWSPreparedRequest, **kwargs: Any) -> AWSResponse:
        response = self.gateway.handle(to_gateway_request(request))
        body = b"" if request.method == "HEAD" else response.body
        return AWSResponse(request.url, response.status, dict(response.headers), _RawBody(body))

    def raw(
        self, method: str, path: str, query: str = "", body: bytes = b"", headers: dict[str, str] | None = None
    ) -> Response:
        key, secret = self.credentials
        request: Request = signed(method, path, query, body, headers, key=key, secret=secret)
        return self.gateway.handle(request)


@pytest.fixture
def s3(services: wiring.Services, credentials: tuple[str, str]) -> Gateway:
    return Gateway(services, credentials)


def create_repo(api: Api, name: str = REPO) -> dict[str, Any]:
    response = api.post("/repositories", json_body={"name": name, "storage_namespace": f"{NAMESPACE}/{name}"})
    assert response.status_code == 201, response.body
    return dict(json.loads(response.body))


@pytest.fixture
def repo(api: Api) -> str:
    create_repo(api)
    return REPO


def staging_location(api: Api, path: str, repo: str = REPO, branch: str = "main") -> dict[str, Any]:
    response = api.get(BACKING.format(repo=repo, branch=branch), query={"path": path, "presign": "true"})
    assert response.status_code == 200, response.body
    return dict(json.loads(response.body))


def link(
    api: Api, path: str, address: str, data: bytes, repo: str = REPO, branch: str = "main", **fields: Any
) -> HTTPResponse:
    """PUT .../staging/backing for ``data`` uploaded at ``address``: the true size and MD5, unless ``fields``
    say otherwise."""
    body = {
        "staging": {"physical_address": address},
        "checksum": hashlib.md5(data).hexdigest(),
        "size_bytes": len(data),
        **fields,
    }
    return api.request("PUT", BACKING.format(repo=repo, branch=branch), query={"path": path}, json_body=body)


def presigned_upload(api: Api, services: wiring.Services, path: str, data: bytes, **fields: Any) -> HTTPResponse:
    """A presigned upload as the lakeFS client makes it: an address, the bytes PUT there, then the link."""
    address = staging_location(api, path)["physical_address"]
    services.engine.ports.blocks.put(address, data)
    return link(api, path, address, data, **fields)
