"""Guarantee 2 (response side): no user-controlled value reaches a response header unchecked.

Read on the raw socket of both local servers, since a header injection only shows on the wire: a presigned
gateway GET with CR/LF in ``response-content-type``; entries stored before writes were validated (a content
type and a metadata value with CR/LF, injected straight into the store) read through the API (GET, HEAD,
stat) and the gateway (GET, HEAD); and the servers' own last check, fed a response with a CR/LF header.
"""

from __future__ import annotations

import json
from urllib.parse import urlsplit

import pytest
from chalice import Chalice, Response

from chalicelib.s3proxy import Response as S3Response
from lakelet.stack.devserver import ApiServer
from lakelet.stack.s3server import S3Server

from .servers import Stack, presigned_get, raw_request, signed_s3_request, stack

__all__ = ["stack"]

REPO = "headers"
INJECTED = "text/plain\r\nSet-Cookie: pwned=1\r\n\r\n<script>alert(1)</script>"


@pytest.fixture(scope="module")
def repo(stack: Stack) -> str:
    created = stack.api_request(
        "POST",
        "/repositories",
        json.dumps(
            {"name": REPO, "storage_namespace": f"s3://security-tests/{REPO}", "default_branch": "main"}
        ).encode(),
        {"Content-Type": "application/json"},
    )
    assert created.status == 201, created.body
    for path in ("ok.txt", "bad-type.txt", "bad-meta.txt"):
        uploaded = stack.api_request(
            "POST", f"/repositories/{REPO}/branches/main/objects?path={path}", b"hello", {"Content-Type": "text/plain"}
        )
        assert uploaded.status == 201, uploaded.body
    stack.stage(REPO, "main", "bad-type.txt", content_type=INJECTED)
    stack.stage(REPO, "main", "bad-meta.txt", user_metadata={"good": "yes", "evil": "x\r\nSet-Cookie: pwned=1"})
    return REPO


def assert_not_injected(response) -> None:  # type: ignore[no-untyped-def]
    assert b"pwned" not in response.head, response.head
    assert response.header("Set-Cookie") is None
    assert b"<script>" not in response.body


def test_presigned_get_refuses_crlf_in_response_content_type(stack: Stack, repo: str) -> None:
    url = urlsplit(presigned_get(stack, repo, "main/ok.txt", ResponseContentType=INJECTED))
    response = raw_request(
        stack.s3.port,
        f"GET {url.path}?{url.query} HTTP/1.1\r\nHost: {url.netloc}\r\nConnection: close\r\n\r\n".encode(),
    )
    assert_not_injected(response)
    assert response.status == 400
    assert b"<Code>InvalidArgument</Code>" in response.body


def test_presigned_get_keeps_a_plain_override(stack: Stack, repo: str) -> None:
    url = urlsplit(
        presigned_get(
            stack,
            repo,
            "main/ok.txt",
            ResponseContentType="text/csv",
            ResponseContentDisposition='attachment; filename="a.csv"',
        )
    )
    response = raw_request(
        stack.s3.port,
        f"GET {url.path}?{url.query} HTTP/1.1\r\nHost: {url.netloc}\r\nConnection: close\r\n\r\n".encode(),
    )
    assert response.status == 200
    assert response.header("Content-Type") == "text/csv"
    assert response.header("Content-Disposition") == 'attachment; filename="a.csv"'
    assert response.body == b"hello"


@pytest.mark.parametrize("method", ["GET", "HEAD"])
def test_gateway_reads_a_stored_crlf_content_type_safely(stack: Stack, repo: str, method: str) -> None:
    response = raw_request(stack.s3.port, signed_s3_request(stack, method, f"/{repo}/main/bad-type.txt"))
    assert_not_injected(response)
    assert response.status == 200
    assert response.header("Content-Type") == "application/octet-stream"


@pytest.mark.parametrize("method", ["GET", "HEAD"])
def test_api_reads_a_stored_crlf_content_type_safely(stack: Stack, repo: str, method: str) -> None:
    response = stack.api_request(method, f"/repositories/{repo}/refs/main/objects?path=bad-type.txt")
    assert_not_injected(response)
    assert response.status == 200
    assert response.header("Content-Type") == "application/octet-stream"


def test_api_stat_of_a_stored_crlf_content_type_is_json(stack: Stack, repo: str) -> None:
    response = stack.api_request("GET", f"/repositories/{repo}/refs/main/objects/stat?path=bad-type.txt")
    assert response.status == 200
    assert response.json()["content_type"] == INJECTED  # JSON escapes it: the value itself is kept
    assert response.header("Content-Type") == "application/json"
    assert b"pwned" not in response.head


def test_gateway_leaves_out_a_stored_crlf_metadata_value(stack: Stack, repo: str) -> None:
    response = raw_request(stack.s3.port, signed_s3_request(stack, "GET", f"/{repo}/main/bad-meta.txt"))
    assert_not_injected(response)
    assert response.status == 200
    assert response.header("x-amz-meta-good") == "yes"
    assert response.header("x-amz-meta-evil") is None
    assert response.header("x-amz-missing-meta") == "1"


def test_api_leaves_out_a_stored_crlf_metadata_value(stack: Stack, repo: str) -> None:
    response = stack.api_request("GET", f"/repositories/{repo}/refs/main/objects?path=bad-meta.txt")
    assert_not_injected(response)
    assert response.status == 200
    assert response.header("x-lakefs-meta-good") == "yes"
    assert response.header("x-amz-missing-meta") == "1"


def _one_request(server: ApiServer | S3Server, request: bytes):  # type: ignore[no-untyped-def]
    """Starts the server, sends one raw request, stops it; its answer."""
    server.start()
    try:
        return raw_request(server.port, request)
    finally:
        server.stop()


def test_the_api_server_never_sends_a_crlf_header() -> None:
    """The devserver's own last check, whatever the app answers. Chalice itself refuses a value with LF (its
    own 500), not one with a lone CR, which some clients also take as the end of a header line."""
    app = Chalice(app_name="crlf")

    @app.route("/x")
    def x() -> Response:
        return Response(body="<html>attacker</html>", headers={"X-Test": "a\rSet-Cookie: pwned=1"})

    response = _one_request(ApiServer(app, port=0), b"GET /x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert response.status == 500
    assert_not_injected(response)
    assert b"attacker" not in response.body
    assert response.json() == {"message": "internal server error"}


class _CrlfGateway:
    def handle(self, request: object) -> S3Response:
        return S3Response(200, {"Content-Type": "text/html\r\nSet-Cookie: pwned=1"}, b"<html>attacker</html>")

    def refuse_before_body(self, request: object) -> None:
        return None


def test_the_s3_server_never_sends_a_crlf_header() -> None:
    response = _one_request(
        S3Server(_CrlfGateway(), port=0),  # type: ignore[arg-type]
        b"GET /r/main/x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    )
    assert response.status == 500
    assert_not_injected(response)
    assert b"attacker" not in response.body
    assert b"<Code>InternalError</Code>" in response.body
