"""The stack's own AWS calls reach its moto server's WSGI application in process, without a socket.

Why: the app, the S3 gateway and the workflows run in the same process as moto. Over loopback, each AWS call (two
for a stat, twelve for a commit) paid for a TCP connection (werkzeug's server closes every connection after one
response), a thread that moto's server starts for it, the HTTP framing and parsing on both sides, and, when a
response left in two writes, Nagle's algorithm holding the second until the client's delayed ACK (tens of ms). A
profile of ``lakelet up`` put the HTTP layers at about a third of the CPU of a stat, beside moto's own work.

What changes is only the transport under botocore: every client of the process (PynamoDB's, boto3's, the
workflows') still serialises and parses exactly as on AWS (signing: inprocess_signing.py; DynamoDB's calls come
through :func:`answer`, past botocore's session: inprocess_lean.py), and the request reaches the same WSGI chain a
socket would give it (the key-pair guard, the journal, moto), with the environ the server's own request handler
class would make of the same request line, headers and body (built here directly: werkzeug's handler parsed and
formatted them again, a profiled 1.6% of an upload), marked as the process's own (:data:`IN_PROCESS`): the guard
takes its claim of the stack's key without checking its signature again, which only this process's own clients
could have made, and moto's dispatcher hands it to moto's callback without Flask (lakelet/stack/moto_direct.py).
Clients in other processes (the CLI, Spark, a browser following a presigned URL) keep using moto's port, which
still serves.

:func:`install` patches botocore's URLLib3Session.send for requests to the stack's moto URL, and installs
moto_direct; :func:`uninstall` gives both back. Requests to any other URL are sent as before.
"""

from __future__ import annotations

import io
import logging
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import unquote, urlsplit

from botocore.awsrequest import AWSPreparedRequest, AWSResponse, HeadersDict
from botocore.exceptions import EndpointConnectionError
from botocore.httpsession import URLLib3Session
from urllib3._collections import HTTPHeaderDict
from werkzeug.http import parse_set_header
from werkzeug.serving import DechunkedInput

from lakelet.persistence import middleware
from lakelet.persistence.middleware import Answer

log = logging.getLogger(__name__)

_lock = threading.Lock()
_original_send: list[Callable[[URLLib3Session, AWSPreparedRequest], AWSResponse]] = []
# The moto server this process's calls go to in process: (URL prefix "http://host:port", the werkzeug server).
_target: list[tuple[str, Any]] = []
#: The environ key that marks a request as this process's own (set here only; a socket's request cannot have it).
IN_PROCESS = "lakelet.in_process"
#: Calls answered in process since the process started (tests read it).
counters = {"in_process": 0}
#: What werkzeug's server answers when the application raises.
FAILED: Answer = (
    "500 INTERNAL SERVER ERROR",
    [("Content-Type", "text/html; charset=utf-8")],
    [b"<html><title>500 Internal Server Error</title></html>"],
)


class _RawBody(io.BytesIO):
    """What botocore reads a response body from: urllib3's response has ``stream`` and ``read``."""

    def stream(self, amt: int = 2**16, decode_content: bool | None = None) -> Iterator[bytes]:
        while chunk := self.read(amt):
            yield chunk


class _NoPeer:
    """The socket of an in-process request: there is none (werkzeug's handler asks it for a TLS peer certificate)."""


_NO_PEER = _NoPeer()
#: Where moto's request handler keeps the original spelling of header names with underscores (moto/core/request.py).
PRESERVED_NAMES = "moto.preserved_header_names"


def install(moto_url: str, server: Any) -> None:
    """Answer this process's AWS calls to ``moto_url`` with ``server.app`` (read per call, so a layer put in
    front of it later, such as the bench's call counter, sees them), with the environ ``server``'s request
    handler would make."""
    with _lock:
        _target[:] = [(moto_url.rstrip("/"), server)]
        if not _original_send:
            _original_send.append(URLLib3Session.send)
            URLLib3Session.send = _send
    from lakelet.stack import moto_direct  # imports moto: only once a stack serves

    moto_direct.install(IN_PROCESS)


def uninstall() -> None:
    with _lock:
        _target.clear()
        if _original_send:
            URLLib3Session.send = _original_send.pop()
    from lakelet.stack import moto_direct

    moto_direct.uninstall()


def installed() -> bool:
    return bool(_original_send)


def answers(url: str) -> bool:
    """Whether a call to ``url`` is answered in process now (the stack's moto URL while installed)."""
    target = _target[0] if _target else None
    return target is not None and _same_origin(url, target[0])


def _send(session: URLLib3Session, request: AWSPreparedRequest) -> AWSResponse:
    target = _target[0] if _target else None
    if target is None or not _same_origin(request.url, target[0]):
        return _original_send[0](session, request)
    counters["in_process"] += 1
    return _answer(request, target[1])


def answer(request: AWSPreparedRequest) -> AWSResponse:
    """Answers in process a request to the stack's moto URL, sent without botocore's session
    (lakelet/stack/inprocess_lean.py); EndpointConnectionError when no stack answers that URL now."""
    target = _target[0] if _target else None
    if target is None or not _same_origin(request.url, target[0]):
        raise EndpointConnectionError(endpoint_url=request.url)
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


def _headers(request: AWSPreparedRequest, netloc: str, body: bytes, chunked: bool) -> list[tuple[str, str]]:
    """The headers http.client would send for the request (it adds Host, Accept-Encoding and, for a body,
    Content-Length), as the server's parser reads them (it strips the blanks before a value), without
    formatting and parsing them again."""
    sent = _header_pairs(request.headers)
    headers: list[tuple[str, str]] = []
    present = {name.lower() for name, _ in sent}
    if "host" not in present:
        headers.append(("Host", netloc))
        present.add("host")
    for name, value in sent:
        text = value.decode("latin-1") if isinstance(value, bytes) else str(value)
        headers.append((name, text.lstrip(" \t")))
    if "accept-encoding" not in present:
        headers.append(("Accept-Encoding", "identity"))
    if not chunked and "content-length" not in present and (body or request.method in {"POST", "PUT", "PATCH"}):
        headers.append(("Content-Length", str(len(body))))
    return headers


def _header_pairs(headers: Any) -> list[tuple[str, Any]]:
    """The request's headers as sent. botocore's HeadersDict keeps them in a dict by a key object that holds the
    name as set; its ``items()`` (MutableMapping's) looks each one up again through a new key object."""
    stored = getattr(headers, "_dict", None)
    if isinstance(headers, HeadersDict) and isinstance(stored, dict):
        return [(str(key), value) for key, value in stored.items()]
    return list(headers.items())


def environ_of(request: AWSPreparedRequest, server: Any) -> dict[str, Any]:
    """The environ moto's request handler (MotoRequestHandler.make_environ on werkzeug's) makes of the request
    line, headers and body a socket would have brought, built directly: the same keys and values, read from the
    same body (de-chunked, as werkzeug's DechunkedInput would read it). tests/lakelet/test_inprocess_environ.py
    compares the two."""
    split = urlsplit(request.url)
    target = split.path or "/"
    if split.query:
        target += "?" + split.query
    raw = body = _body(request)
    framed = "chunked" in str(request.headers.get("Transfer-Encoding", "")).lower()
    if framed:  # framed as a socket's body would be
        body = (f"{len(raw):x}\r\n".encode() + raw + b"\r\n" if raw else b"") + b"0\r\n\r\n"
    headers = _headers(request, split.netloc, body, framed)
    url = urlsplit(target)
    path_info = f"/{url.netloc}{url.path}" if not url.scheme and url.netloc else url.path
    address = server.server_address
    environ: dict[str, Any] = {
        "wsgi.version": (1, 0),
        "wsgi.url_scheme": "http" if server.ssl_context is None else "https",
        "wsgi.input": io.BytesIO(body),
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": server.multithread,
        "wsgi.multiprocess": server.multiprocess,
        "wsgi.run_once": False,
        "werkzeug.socket": _NO_PEER,
        "SERVER_SOFTWARE": server._server_version,
        "REQUEST_METHOD": request.method,
        "SCRIPT_NAME": "",
        "PATH_INFO": _latin1(unquote(path_info)),
        "QUERY_STRING": _latin1(url.query),
        "REQUEST_URI": _latin1(target),
        "RAW_URI": _latin1(target),
        "REMOTE_ADDR": "127.0.0.1",
        "REMOTE_PORT": 0,
        "SERVER_NAME": address[0],
        "SERVER_PORT": str(address[1]),
        "SERVER_PROTOCOL": "HTTP/1.1",
    }
    for name, sent in headers:
        if "_" in name:
            continue
        key = name.upper().replace("-", "_")
        value = sent.replace("\r\n", "")
        if key not in ("CONTENT_TYPE", "CONTENT_LENGTH"):
            key = f"HTTP_{key}"
            if key in environ:
                value = f"{environ[key]},{value}"
        environ[key] = value
    if "HTTP_TRANSFER_ENCODING" in environ and "chunked" in parse_set_header(environ["HTTP_TRANSFER_ENCODING"]):
        environ["wsgi.input_terminated"] = True
        # What werkzeug's DechunkedInput reads out of the framed body: the body itself.
        environ["wsgi.input"] = io.BytesIO(raw) if framed else DechunkedInput(environ["wsgi.input"])
    if url.scheme and url.netloc:
        environ["HTTP_HOST"] = url.netloc
    _preserve_underscored_names(environ, headers)
    environ[IN_PROCESS] = True  # no socket can set a key outside HTTP_*: the guard may trust it (moto_guard.py)
    return environ


def _preserve_underscored_names(environ: dict[str, Any], headers: list[tuple[str, str]]) -> None:
    """moto's handler keeps S3 metadata names with underscores (werkzeug's drops them), under their spelling."""
    names: dict[str, str] = {}
    if any("_" in name for name, _ in headers):
        dashed = {_environ_key(name) for name, _ in headers if "_" not in name}
        values: dict[str, list[str]] = {}
        for name, value in headers:
            if "_" not in name or not name.lower().startswith("x-amz-meta-"):
                continue
            key = _environ_key(name)
            if key in dashed:
                continue
            names.setdefault(key, name)
            values.setdefault(key, []).append(value.replace("\r\n", ""))
        for key, key_values in values.items():
            environ[key] = ",".join(key_values)
    environ[PRESERVED_NAMES] = names


def _environ_key(name: str) -> str:
    key = name.upper().replace("-", "_")
    return key if key in ("CONTENT_TYPE", "CONTENT_LENGTH") else f"HTTP_{key}"


def _latin1(text: str) -> str:
    return text.encode().decode("latin1")


def _answer(request: AWSPreparedRequest, server: Any) -> AWSResponse:
    environ = environ_of(request, server)
    try:
        answer = call(server.app, environ)
    except Exception:
        log.exception("moto failed on %s %s", request.method, environ["RAW_URI"])
        answer = FAILED
    return response(request.url, request.method, answer, request.stream_output)


def call(app: Any, environ: dict[str, Any]) -> Answer:
    """The WSGI app's answer to the environ: status line, headers, body chunks."""
    status_and_headers: list[Any] = []
    chunks: list[bytes] = []

    def start_response(status: str, response_headers: list[Any], exc_info: Any = None) -> Callable[[bytes], None]:
        status_and_headers[:] = [status, response_headers]
        return chunks.append

    chunks.extend(middleware.whole(app(environ, start_response)))
    status, response_headers = status_and_headers
    return status, response_headers, chunks


def response(url: str, method: str, answer: Answer, stream_output: bool = False, unique: bool = False) -> AWSResponse:
    """The answer as botocore's HTTP session hands it on (``unique``: no header name twice in it, so no
    urllib3 dict to merge them first)."""
    status, response_headers, chunks = answer
    payload = b"" if method == "HEAD" else b"".join(chunks)
    headers = dict(response_headers) if unique else HTTPHeaderDict(response_headers)
    result = AWSResponse(url, int(status[:3]), headers, _RawBody(payload))
    if not stream_output:
        result.content  # noqa: B018 - read now, as URLLib3Session.send does
    return result
