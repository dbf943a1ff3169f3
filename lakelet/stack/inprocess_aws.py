"""The stack's own AWS calls reach its moto server's WSGI application in process, without a socket.

Why: the app, the S3 gateway and the workflows run in the same process as moto. Over loopback, each AWS call (two
for a stat, twelve for a commit) paid for a TCP connection (werkzeug's server closes every connection after one
response), a thread that moto's server starts for it, the HTTP framing and parsing on both sides, and, when a
response left in two writes, Nagle's algorithm holding the second until the client's delayed ACK (tens of ms). A
profile of ``lakelet up`` put the HTTP layers at about a third of the CPU of a stat, beside moto's own work.

What changes is only the transport under botocore: every client of the process (PynamoDB's, boto3's, the
workflows') still serialises, signs and parses exactly as on AWS, and the request reaches the same WSGI chain a
socket would give it (the key-pair guard, the journal, moto), with an environ built by the server's own request
handler class from the same request line, headers and body, marked as the process's own (:data:`IN_PROCESS`): the
guard takes its claim of the stack's key without checking its signature again, which only this process's own
clients could have made. Clients in other processes (the CLI, Spark, a browser
following a presigned URL) keep using moto's port, which still serves.

:func:`install` patches botocore's URLLib3Session.send for requests to the stack's moto URL; :func:`uninstall`
gives it back. Requests to any other URL are sent as before.
"""

from __future__ import annotations

import http.client
import io
import logging
import threading
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlsplit

from botocore.awsrequest import AWSPreparedRequest, AWSResponse
from botocore.httpsession import URLLib3Session
from urllib3._collections import HTTPHeaderDict

log = logging.getLogger(__name__)

_lock = threading.Lock()
_original_send: list[Callable[[URLLib3Session, AWSPreparedRequest], AWSResponse]] = []
# The moto server this process's calls go to in process: (URL prefix "http://host:port", the werkzeug server).
_target: list[tuple[str, Any]] = []
#: The environ key that marks a request as this process's own (set here only; a socket's request cannot have it).
IN_PROCESS = "lakelet.in_process"
#: Calls answered in process since the process started (tests read it).
counters = {"in_process": 0}
_INTERNAL_ERROR = b"<html><title>500 Internal Server Error</title></html>"


class _RawBody(io.BytesIO):
    """What botocore reads a response body from: urllib3's response has ``stream`` and ``read``."""

    def stream(self, amt: int = 2**16, decode_content: bool | None = None) -> Iterator[bytes]:
        while chunk := self.read(amt):
            yield chunk


class _NoPeer:
    """The request handler asks its connection for a TLS peer certificate; there is none."""


def install(moto_url: str, server: Any) -> None:
    """Answer this process's AWS calls to ``moto_url`` with ``server.app`` (read per call, so a layer put in
    front of it later, such as the bench's call counter, sees them), through ``server``'s request handler."""
    with _lock:
        _target[:] = [(moto_url.rstrip("/"), server)]
        if not _original_send:
            _original_send.append(URLLib3Session.send)
            URLLib3Session.send = _send


def uninstall() -> None:
    with _lock:
        _target.clear()
        if _original_send:
            URLLib3Session.send = _original_send.pop()


def installed() -> bool:
    return bool(_original_send)


def _send(session: URLLib3Session, request: AWSPreparedRequest) -> AWSResponse:
    target = _target[0] if _target else None
    if target is None or not _same_origin(request.url, target[0]):
        return _original_send[0](session, request)
    counters["in_process"] += 1
    return _answer(request, target[1])


def _same_origin(url: str, prefix: str) -> bool:
    return url.startswith(prefix) and (len(url) == len(prefix) or url[len(prefix)] in "/?")


def _body(request: AWSPreparedRequest) -> bytes:
    body = request.body
    if body is None:
        return b""
    if isinstance(body, bytes | bytearray):
        return bytes(body)
    if isinstance(body, str):
        return body.encode("utf-8")
    if hasattr(body, "read"):
        data = body.read()
        return data.encode("utf-8") if isinstance(data, str) else bytes(data)
    return b"".join(part.encode("utf-8") if isinstance(part, str) else bytes(part) for part in body)


def _headers(request: AWSPreparedRequest, netloc: str, body: bytes, chunked: bool) -> http.client.HTTPMessage:
    """The headers http.client would send for the request (it adds Host, Accept-Encoding and, for a body,
    Content-Length), as the server's parser reads them (it strips the blanks before a value), without
    formatting and parsing them again."""
    headers = http.client.HTTPMessage()
    present = set()
    if not any(name.lower() == "host" for name in request.headers):
        headers["Host"] = netloc
        present.add("host")
    for name, value in request.headers.items():
        text = value.decode("latin-1") if isinstance(value, bytes) else str(value)
        headers[name] = text.lstrip(" \t")
        present.add(name.lower())
    if "accept-encoding" not in present:
        headers["Accept-Encoding"] = "identity"
    if not chunked and "content-length" not in present and (body or request.method in {"POST", "PUT", "PATCH"}):
        headers["Content-Length"] = str(len(body))
    return headers


def _answer(request: AWSPreparedRequest, server: Any) -> AWSResponse:
    split = urlsplit(request.url)
    target = split.path or "/"
    if split.query:
        target += "?" + split.query
    body = _body(request)
    chunked = "chunked" in str(request.headers.get("Transfer-Encoding", "")).lower()
    if chunked:  # the handler's environ de-chunks the input, as it would a socket's
        body = (f"{len(body):x}\r\n".encode() + body + b"\r\n" if body else b"") + b"0\r\n\r\n"
    headers = _headers(request, split.netloc, body, chunked)
    handler = server.RequestHandlerClass.__new__(server.RequestHandlerClass)
    handler.server = server
    handler.client_address = ("127.0.0.1", 0)
    handler.connection = _NoPeer()
    handler.rfile = io.BytesIO(body)
    handler.command = request.method
    handler.path = target
    handler.request_version = "HTTP/1.1"
    handler.headers = headers
    environ = handler.make_environ()
    environ[IN_PROCESS] = True  # no socket can set a key outside HTTP_*: the guard may trust it (moto_guard.py)
    status_and_headers: list[Any] = []
    chunks: list[bytes] = []

    def start_response(status: str, response_headers: list[Any], exc_info: Any = None) -> Callable[[bytes], None]:
        status_and_headers[:] = [status, response_headers]
        return chunks.append

    try:
        result = server.app(environ, start_response)
        try:
            chunks.extend(result)
        finally:
            close = getattr(result, "close", None)
            if close is not None:
                close()
    except Exception:
        # What werkzeug's server answers when the application raises.
        log.exception("moto failed on %s %s", request.method, target)
        status_and_headers[:] = ["500 INTERNAL SERVER ERROR", [("Content-Type", "text/html; charset=utf-8")]]
        chunks[:] = [_INTERNAL_ERROR]
    status, response_headers = status_and_headers
    payload = b"" if request.method == "HEAD" else b"".join(chunks)
    response = AWSResponse(request.url, int(status[:3]), HTTPHeaderDict(response_headers), _RawBody(payload))
    if not request.stream_output:
        response.content  # noqa: B018 - read now, as URLLib3Session.send does
    return response
