"""lakelet/stack/inprocess_aws.py builds the environ of an in-process call directly: the same keys and values, and
the same body read out, as moto's request handler (MotoRequestHandler.make_environ, werkzeug's underneath) made of
the same request line, headers and body, which is what it handed the WSGI chain before (issue 43)."""

from __future__ import annotations

import http.client
import io
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from botocore.awsrequest import AWSPreparedRequest, AWSRequest
from moto.moto_server.werkzeug_app import MotoRequestHandler
from werkzeug.serving import make_server

from lakelet.persistence import middleware
from lakelet.stack import inprocess_aws


@pytest.fixture(scope="module")
def server() -> Iterator[Any]:
    made = make_server("127.0.0.1", 0, lambda environ, start: [], True, request_handler=MotoRequestHandler)
    yield made
    made.server_close()


class _NoPeer:
    pass


def _as_the_handler_made_it(request: AWSPreparedRequest, server: Any) -> dict[str, Any]:
    """What inprocess_aws did before: the handler's make_environ over the headers in an HTTPMessage."""
    split = inprocess_aws.urlsplit(request.url)
    target = split.path or "/"
    if split.query:
        target += "?" + split.query
    body = inprocess_aws._body(request)
    chunked = "chunked" in str(request.headers.get("Transfer-Encoding", "")).lower()
    if chunked:
        body = (f"{len(body):x}\r\n".encode() + body + b"\r\n" if body else b"") + b"0\r\n\r\n"
    headers = http.client.HTTPMessage()
    for name, value in inprocess_aws._headers(request, split.netloc, body, chunked):
        headers[name] = value
    handler = MotoRequestHandler.__new__(MotoRequestHandler)
    handler.server = server
    handler.client_address = ("127.0.0.1", 0)
    handler.connection = _NoPeer()  # type: ignore[assignment]
    handler.rfile = io.BytesIO(body)
    handler.command = request.method
    handler.path = target
    handler.request_version = "HTTP/1.1"
    handler.headers = headers
    environ: dict[str, Any] = handler.make_environ()
    environ[inprocess_aws.IN_PROCESS] = True
    return environ


def _comparable(environ: dict[str, Any]) -> tuple[dict[str, Any], bytes]:
    kept = {key: value for key, value in environ.items() if key not in ("wsgi.input", "werkzeug.socket")}
    return kept, environ["wsgi.input"].read()


SIGNED = "AWS4-HMAC-SHA256 Credential=AKIAX/20260101/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=ab"


@pytest.mark.parametrize(
    ("method", "url", "headers", "body"),
    [
        (
            "POST",
            "http://127.0.0.1:5000/",
            {"X-Amz-Target": "DynamoDB_20120810.GetItem", "Content-Type": "application/x-amz-json-1.0"},
            b'{"TableName": "t"}',
        ),
        (
            "PUT",
            "http://127.0.0.1:5000/bucket/dir/a%20b%2Bc%2F%E2%82%AC.txt?x-id=PutObject",
            {
                "Authorization": SIGNED,
                "x-amz-meta-with_underscore": "u",
                "x-amz-meta-with-dash": "d",
                "x-amz-meta-note": "  caf\u00e9",
                "Content-MD5": b"abc==",
            },
            b"0123456789",
        ),
        ("GET", "http://127.0.0.1:5000/bucket/k?range-query=1&a=%2F", {"Range": "bytes=2-5"}, b""),
        ("HEAD", "http://127.0.0.1:5000//double/slash", {"Host": "elsewhere:1"}, b""),
        ("PUT", "http://127.0.0.1:5000/bucket/chunked", {"Transfer-Encoding": "chunked"}, b"x" * 70_000),
        ("PUT", "http://127.0.0.1:5000/bucket/empty-chunked", {"Transfer-Encoding": "chunked"}, b""),
        ("POST", "http://127.0.0.1:5000/", {"Content-Type": "application/x-www-form-urlencoded"}, b"Action=X"),
        ("DELETE", "http://127.0.0.1:5000/bucket/k", {"x-amz-meta-a_b": "1", "X-Amz-Meta-A_B": "2"}, b""),
    ],
)
def test_the_environ_is_the_handlers(
    server: Any, method: str, url: str, headers: dict[str, str | bytes], body: bytes
) -> None:
    request = AWSRequest(method=method, url=url, headers=headers, data=body).prepare()
    if "Transfer-Encoding" in headers:
        request.headers.pop("Content-Length", None)  # as botocore sends a streamed body
    built = inprocess_aws.environ_of(request, server)
    expected = _as_the_handler_made_it(request, server)
    assert _comparable(built) == _comparable(expected)
    assert list(built) == list(expected)  # the same order: a journal record's keys come out the same
    assert middleware.recordable(built) == middleware.recordable(expected)
    assert built["wsgi.errors"] is sys.stderr


def test_a_journaled_chunked_body_reads_the_same(server: Any) -> None:
    request = AWSRequest(
        method="PUT", url="http://127.0.0.1:5000/b/k", headers={"Transfer-Encoding": "chunked"}, data=b"abc" * 1000
    ).prepare()
    request.headers.pop("Content-Length", None)
    built, expected = inprocess_aws.environ_of(request, server), _as_the_handler_made_it(request, server)
    assert middleware.read_body(built) == middleware.read_body(expected) == b"abc" * 1000
    assert middleware.recordable(built) == middleware.recordable(expected)
