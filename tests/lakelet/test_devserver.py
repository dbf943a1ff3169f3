"""The local HTTP server hands chunked request bodies to Chalice routes intact (stock chalice local drops them)."""

from __future__ import annotations

import hashlib
import http.client
import io
import json
import os
import socket
import time
from collections.abc import Iterator
from typing import ClassVar

import pytest
from chalice import Chalice, Response
from chalice.config import Config
from chalice.local import MatchResult

from lakelet.stack.devserver import (
    COALESCED_BODY_BYTES,
    ApiServer,
    ChunkedBodyError,
    DechunkingRequestHandler,
    read_chunked,
)
from lakelet.stack.route_matcher import IndexedRouteMatcher

OCTETS = "application/octet-stream"


def _echo_app() -> Chalice:
    app = Chalice(app_name="echo")

    @app.route("/echo", methods=["POST", "PUT"], content_types=[OCTETS, "text/plain"])
    def echo() -> Response:
        request = app.current_request
        body = request.raw_body or b""
        summary = {
            "length": len(body),
            "sha256": hashlib.sha256(body).hexdigest(),
            "content_length": request.headers.get("content-length"),
            "transfer_encoding": request.headers.get("transfer-encoding"),
            "meta": request.headers.get("x-lakefs-meta-color"),
        }
        return Response(body=json.dumps(summary), status_code=201, headers={"Content-Type": "application/json"})

    @app.route("/thing", methods=["GET", "HEAD"])
    def thing() -> Response:
        return Response(body=json.dumps({"thing": True}), headers={"Content-Type": "application/json"})

    @app.route("/sized", methods=["GET", "HEAD"])
    def sized() -> Response:
        # Like the object route: the app declares the length itself, and sends no body to HEAD.
        data = b"" if app.current_request.method == "HEAD" else b"0123456789"
        return Response(body=data, headers={"Content-Type": OCTETS, "Content-Length": "10"})

    @app.route("/gone", methods=["DELETE"])
    def gone() -> Response:
        return Response(body=b"", status_code=204, headers={})

    return app


@pytest.fixture
def server() -> Iterator[ApiServer]:
    api = ApiServer(_echo_app(), port=0)
    api.start()
    yield api
    api.stop()


def _post_chunked(server: ApiServer, chunks: list[bytes], extra: dict[str, str] | None = None) -> dict[str, object]:
    connection = http.client.HTTPConnection(server.host, server.port, timeout=10)
    try:
        headers = {"Content-Type": OCTETS, **(extra or {})}
        # An iterable body with no length makes http.client send Transfer-Encoding: chunked, one chunk each.
        connection.request("POST", "/echo", body=iter(chunks), headers=headers, encode_chunked=True)
        response = connection.getresponse()
        assert response.status == 201, response.read()
        return json.loads(response.read())
    finally:
        connection.close()


def _raw_exchange(server: ApiServer, request: bytes) -> bytes:
    with socket.create_connection((server.host, server.port), timeout=10) as sock:
        sock.sendall(request)
        sock.shutdown(socket.SHUT_WR)
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    return received


def test_single_chunk_body_arrives_intact(server: ApiServer) -> None:
    body = os.urandom(300_000)
    summary = _post_chunked(server, [body], {"x-lakefs-meta-color": "blue"})
    assert summary["length"] == len(body)
    assert summary["sha256"] == hashlib.sha256(body).hexdigest()
    # The route sees a plain body, as behind API Gateway: a length and no transfer coding.
    assert summary["content_length"] == str(len(body))
    assert summary["transfer_encoding"] is None
    assert summary["meta"] == "blue"


def test_multi_chunk_body_is_reassembled_in_order(server: ApiServer) -> None:
    chunks = [bytes([i]) * (i * 997 + 1) for i in range(40)]
    summary = _post_chunked(server, chunks)
    joined = b"".join(chunks)
    assert summary["length"] == len(joined)
    assert summary["sha256"] == hashlib.sha256(joined).hexdigest()


def test_zero_length_chunked_body(server: ApiServer) -> None:
    summary = _post_chunked(server, [])
    assert summary["length"] == 0
    assert summary["sha256"] == hashlib.sha256(b"").hexdigest()


def test_content_length_bodies_still_work(server: ApiServer) -> None:
    connection = http.client.HTTPConnection(server.host, server.port, timeout=10)
    try:
        connection.request("PUT", "/echo", body=b"plain text", headers={"Content-Type": "text/plain"})
        response = connection.getresponse()
        summary = json.loads(response.read())
    finally:
        connection.close()
    assert summary["length"] == len(b"plain text")
    assert summary["content_length"] == str(len(b"plain text"))


def test_extensions_and_trailers_are_dropped_and_the_connection_is_reused(server: ApiServer) -> None:
    request = (
        b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n"
        b"5;name=value\r\nhello\r\n6\r\n world\r\n0\r\nX-Checksum: abc\r\n\r\n"
        b"GET /thing HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    received = _raw_exchange(server, request)
    assert received.count(b"HTTP/1.1 ") == 2
    assert hashlib.sha256(b"hello world").hexdigest().encode() in received
    assert b'{"thing": true}' in received


def test_malformed_chunked_body_is_a_400(server: ApiServer) -> None:
    request = (
        b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\n"
        b"Transfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n"
    )
    received = _raw_exchange(server, request)
    assert received.startswith(b"HTTP/1.1 400 ")


def test_head_answers_headers_only_and_keeps_the_connection_usable(server: ApiServer) -> None:
    connection = http.client.HTTPConnection(server.host, server.port, timeout=10)
    try:
        connection.request("HEAD", "/thing")
        head = connection.getresponse()
        assert head.status == 200
        assert head.read() == b""
        assert head.getheader("Content-Length") == str(len(b'{"thing": true}'))
        # Had the HEAD answer carried a body, this second response on the same connection would be garbage.
        connection.request("GET", "/thing")
        get = connection.getresponse()
        assert json.loads(get.read()) == {"thing": True}
    finally:
        connection.close()


def test_stop_frees_the_port_and_restores_the_app_class() -> None:
    app = _echo_app()
    original = type(app)
    api = ApiServer(app, port=0)
    api.start()
    port = api.port
    api.stop()
    assert type(app) is original
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", port))


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (b"0\r\n\r\n", b""),
        (b"3\r\nabc\r\n0\r\n\r\n", b"abc"),
        (b"A\r\n0123456789\r\n1\r\nx\r\n0\r\n\r\n", b"0123456789x"),
        (b"2\nab\n0\n\n", b"ab"),  # bare LF line ends are tolerated
    ],
)
def test_read_chunked_decodes(raw: bytes, expected: bytes) -> None:
    assert read_chunked(io.BytesIO(raw)) == expected


@pytest.mark.parametrize(
    "raw",
    [
        b"",  # nothing at all
        b"5\r\nabc",  # truncated data
        b"3\r\nabcdef\r\n0\r\n\r\n",  # data longer than declared
        b"-3\r\nabc\r\n0\r\n\r\n",  # sign
        b"0x3\r\nabc\r\n0\r\n\r\n",  # int(..., 16) would accept this; HTTP does not
        b"3\r\nabc\r\n0\r\n",  # missing the end of the trailer section
        b"1" * 20000,  # an endless size line
    ],
)
def test_read_chunked_rejects_malformed_input(raw: bytes) -> None:
    with pytest.raises(ChunkedBodyError):
        read_chunked(io.BytesIO(raw))


def test_one_content_length_even_when_the_app_declares_one(server: ApiServer) -> None:
    connection = http.client.HTTPConnection(server.host, server.port, timeout=10)
    try:
        connection.request("GET", "/sized", headers={"Accept": OCTETS})
        get = connection.getresponse()
        assert get.msg.get_all("Content-Length") == ["10"]
        assert get.read() == b"0123456789"
        connection.request("HEAD", "/sized", headers={"Accept": OCTETS})
        head = connection.getresponse()
        # For HEAD the declared length (of what GET would send) is the one to keep, with no body.
        assert head.msg.get_all("Content-Length") == ["10"]
        assert head.read() == b""
        connection.request("GET", "/thing")
        assert json.loads(connection.getresponse().read()) == {"thing": True}
    finally:
        connection.close()


def test_a_no_content_answer_has_no_content_type(server: ApiServer) -> None:
    """lakectl's generated client reads any answer typed JSON as an error body: an empty one failed every delete."""
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    connection.request("DELETE", "/gone")
    response = connection.getresponse()
    assert response.status == 204 and response.read() == b""
    assert response.getheader("Content-Type") is None
    connection.close()


def _queued_connections(port: int, wanted: int) -> int:
    """How many connections the listening socket takes while nobody accepts them (stops at the first that
    the kernel does not complete: a full accept queue drops the handshake)."""
    opened: list[socket.socket] = []
    try:
        for _ in range(wanted):
            try:
                opened.append(socket.create_connection(("127.0.0.1", port), timeout=0.3))
            except OSError:
                break
        return len(opened)
    finally:
        for sock in opened:
            sock.close()


def test_the_api_and_gateway_queue_a_burst_of_connections() -> None:
    """A burst of 40 client threads must not be reset: both servers listen with a real backlog (not 5)."""
    from lakelet.stack.s3server import S3Server

    api = ApiServer(_echo_app(), "127.0.0.1", 0)  # listening, not yet accepting
    gateway = S3Server(object(), "127.0.0.1", 0)  # type: ignore[arg-type]
    try:
        assert _queued_connections(api.port, 64) == 64
        assert _queued_connections(gateway.port, 64) == 64
    finally:
        api.stop()
        gateway.stop()


class _CountingWriter(io.RawIOBase):
    """The handler's wfile, counting the writes (system calls) each response takes."""

    writes: ClassVar[list[int]] = []

    def __init__(self, inner: io.BufferedIOBase) -> None:
        self._inner = inner

    def writable(self) -> bool:
        return True

    def write(self, data: bytes) -> int:  # type: ignore[override]
        _CountingWriter.writes.append(len(data))
        return self._inner.write(data)


class _CountingHandler(DechunkingRequestHandler):
    def setup(self) -> None:
        super().setup()
        self.wfile = _CountingWriter(self.wfile)  # type: ignore[has-type,arg-type]


@pytest.mark.parametrize(("path", "writes"), [("/thing", 1), ("/sized", 1), ("/big", 2)])
def test_a_small_answer_leaves_in_one_write(path: str, writes: int) -> None:
    app = _echo_app()

    @app.route("/big")
    def big() -> Response:
        return Response(body=b"x" * (COALESCED_BODY_BYTES + 1), headers={"Content-Type": OCTETS})

    api = ApiServer(app, port=0, handler=_CountingHandler)
    api.start()
    try:
        _CountingWriter.writes = []
        connection = http.client.HTTPConnection(api.host, api.port, timeout=10)
        connection.request("GET", path, headers={"Accept": OCTETS})
        response = connection.getresponse()
        body = response.read()
        connection.close()
    finally:
        api.stop()
    assert response.status == 200
    assert len(_CountingWriter.writes) == writes
    assert sum(_CountingWriter.writes) > len(body) > 0


def test_requests_are_routed_by_the_indexed_matcher(server: ApiServer, monkeypatch: pytest.MonkeyPatch) -> None:
    routed: list[str] = []
    match = IndexedRouteMatcher.match_route

    def counted(self: IndexedRouteMatcher, url: str) -> MatchResult:
        routed.append(url)
        return match(self, url)

    monkeypatch.setattr(IndexedRouteMatcher, "match_route", counted)
    connection = http.client.HTTPConnection(server.host, server.port, timeout=10)
    try:
        for path in ("/thing", "/thing?x=1"):
            connection.request("GET", path)
            response = connection.getresponse()
            assert response.status == 200 and json.loads(response.read()) == {"thing": True}
    finally:
        connection.close()
    assert routed == ["/thing", "/thing?x=1"]


def test_each_request_gets_a_fresh_lambda_context_from_the_config() -> None:
    app = Chalice(app_name="context")

    @app.route("/context")
    def context() -> dict[str, object]:
        lambda_context = app.lambda_context
        return {
            "name": lambda_context.function_name,
            "memory": lambda_context.memory_limit_in_mb,
            "remaining": lambda_context.get_remaining_time_in_millis(),
        }

    config = Config(chalice_stage="local", config_from_disk={"lambda_timeout": 3, "lambda_memory_size": 512})
    api = ApiServer(app, port=0, config=config)
    api.start()
    connection = http.client.HTTPConnection(api.host, api.port, timeout=10)
    try:
        answers = []
        for _ in range(2):  # one kept-alive connection: one gateway, a context per request
            connection.request("GET", "/context")
            answers.append(json.loads(connection.getresponse().read()))
            time.sleep(1.2)
    finally:
        connection.close()
        api.stop()
    for answer in answers:
        assert answer["name"] == "api_handler" and int(answer["memory"]) == 512
        # Counted from this request's start: a context kept from the first would have 1,800 ms left at most.
        assert 1_800 < answer["remaining"] <= 3_000, answer
