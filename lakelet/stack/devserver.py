"""Serve a Chalice app over HTTP on this machine, like ``chalice local`` but fit for the official lakeFS clients.

Stock ``chalice local`` reads a request body only when a Content-Length header is present, so a body sent with
``Transfer-Encoding: chunked`` (how the lakeFS Python client uploads) reaches the route empty and the upload
"succeeds" with 0 bytes. :class:`DechunkingRequestHandler` decodes such bodies before they reach the app.
It also sends no body in answer to HEAD, as HTTP requires (chalice local writes one, which breaks the next
response on a kept-alive connection), and one Content-Length header where chalice local can send two.

:class:`ApiServer` runs the server on a background thread, so the same code serves ``lakelet up`` and tests.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from collections.abc import Callable, Mapping
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import BinaryIO

from chalice.app import Chalice
from chalice.config import Config
from chalice.local import (
    ChaliceRequestHandler,
    ForbiddenError,
    HeaderType,
    LambdaContext,
    LocalChalice,
    LocalDevServer,
    LocalGateway,
    LocalGatewayException,
    ThreadedHTTPServer,
)

from chalicelib.http_headers import first_unsafe
from lakelet.defaults import LISTEN_BACKLOG
from lakelet.stack.route_matcher import matcher_for

log = logging.getLogger(__name__)

# A chunk-size line is short; a long one is garbage, and reading it unbounded would let a client fill memory.
_MAX_LINE_BYTES = 8 * 1024
_CHUNK_SIZE = re.compile(rb"[0-9A-Fa-f]{1,16}")
# The most a caller without valid credentials may send: public routes (login, setup) take small JSON bodies.
# A larger body is refused before a byte of it is read, so nobody unauthenticated can make the server buffer
# gigabytes.
UNAUTHENTICATED_BODY_LIMIT = 1024 * 1024
NOT_FOUND_MESSAGE = "not found: no such API route"
# A body up to this size leaves in the same write as the headers.
COALESCED_BODY_BYTES = 64 * 1024
_INTERNAL = json.dumps({"message": "internal server error"}).encode()


class ChunkedBodyError(ValueError):
    """The request announced ``Transfer-Encoding: chunked`` but its body is not valid chunked encoding."""


class BodyTooLarge(ChunkedBodyError):
    """A chunked body went past the limit its sender was allowed."""


def _default_authenticated(headers: Mapping[str, str]) -> bool:
    """Whether the request's credentials (HTTP Basic or a login token) are valid, with the app's own check."""
    from chalicelib.api.endpoint import (
        authenticate,  # the app's module, imported when the server first needs it
    )
    from chalicelib.graveler import errors

    try:
        authenticate({name.lower(): value for name, value in headers.items()})
    except errors.GravelerError:
        return False
    except Exception:  # a store that cannot answer: the caller is not known to be authenticated
        log.exception("could not check the credentials of a request before its body")
        return False
    return True


def _read_line(stream: BinaryIO, what: str) -> bytes:
    line = stream.readline(_MAX_LINE_BYTES + 1)
    if not line.endswith(b"\n"):
        raise ChunkedBodyError(f"truncated or overlong {what}")
    return line


def read_chunked(stream: BinaryIO, limit: int | None = None) -> bytes:
    """Read one chunked-encoded body (RFC 9112 section 7.1) from ``stream`` and return the decoded bytes.

    Chunk extensions and trailer fields are read and dropped. Raises :class:`ChunkedBodyError` on malformed
    or truncated input, :class:`BodyTooLarge` once the body would pass ``limit`` bytes (before reading them).
    """
    parts: list[bytes] = []
    total = 0
    while True:
        size_field = _read_line(stream, "chunk size line").split(b";", 1)[0].strip()
        if not _CHUNK_SIZE.fullmatch(size_field):
            raise ChunkedBodyError(f"invalid chunk size {size_field[:32]!r}")
        size = int(size_field, 16)
        if size == 0:
            break
        total += size
        if limit is not None and total > limit:
            raise BodyTooLarge(f"body larger than {limit} bytes")
        data = stream.read(size)
        if len(data) != size:
            raise ChunkedBodyError(f"truncated chunk: expected {size} bytes, got {len(data)}")
        parts.append(data)
        if _read_line(stream, "chunk terminator").strip():
            raise ChunkedBodyError("chunk data longer than its declared size")
    while _read_line(stream, "trailer section").strip():
        pass  # trailer fields carry nothing the app reads
    return b"".join(parts)


class _Gateway(LocalGateway):
    """chalice local's stand-in for API Gateway (one per connection), its routes matched by an IndexedRouteMatcher
    (route_matcher.py), and its Lambda context's settings read from the config once: chalice reads three of them
    through the config's chain of stage and function settings for every request (4% of a log of 100 commits)."""

    def __init__(self, app_object: Chalice, config: Config) -> None:
        super().__init__(app_object, config)
        self.event_converter._route_matcher = matcher_for(app_object)
        self._context_settings: tuple[str, int, int] | None = None

    def _generate_lambda_context(self) -> LambdaContext:
        settings = self._context_settings
        if settings is None:
            timeout = self._config.lambda_timeout
            seconds = self.MAX_LAMBDA_EXECUTION_TIME if timeout is None else timeout
            settings = self._context_settings = (
                self._config.function_name,
                self._config.lambda_memory_size,
                seconds * 1000,
            )
        name, memory, max_runtime_ms = settings
        return LambdaContext(function_name=name, memory_size=memory, max_runtime_ms=max_runtime_ms)


class DechunkingRequestHandler(ChaliceRequestHandler):
    """chalice local's request handler, plus chunked request bodies and well-framed responses."""

    # Headers and body leave in separate writes; with Nagle's algorithm the body then waits for the client's
    # delayed ACK (~40 ms a response on a kept-alive connection, as the lakeFS client uses).
    disable_nagle_algorithm = True
    # Whether a request's credentials are valid; ApiServer may swap in another check (tests).
    authenticated: Callable[[Mapping[str, str]], bool] = staticmethod(_default_authenticated)

    def __init__(
        self, request: bytes, client_address: tuple[str, int], server: HTTPServer, app_object: Chalice, config: Config
    ) -> None:
        # ChaliceRequestHandler's own __init__ with _Gateway for its LocalGateway: BaseHTTPRequestHandler serves the
        # whole connection from its __init__, so the gateway has to be in place before it is called.
        self.local_gateway = _Gateway(app_object, config)
        BaseHTTPRequestHandler.__init__(self, request, client_address, server)  # type: ignore[arg-type]

    def _body_limit(self) -> int | None:
        """None when the caller authenticated; else UNAUTHENTICATED_BODY_LIMIT. Reads nothing of the body."""
        return None if self.authenticated(dict(self.headers.items())) else UNAUTHENTICATED_BODY_LIMIT

    def _parse_payload(self) -> tuple[HeaderType, bytes | None]:
        transfer_encoding = self.headers.get("Transfer-Encoding", "")
        if "chunked" not in transfer_encoding.lower():
            try:
                declared = int(self.headers.get("Content-Length") or 0)
            except ValueError:
                raise ChunkedBodyError("Content-Length is not a number") from None
            if declared < 0:
                raise ChunkedBodyError("Content-Length is negative")
            if declared > UNAUTHENTICATED_BODY_LIMIT and self._body_limit() is not None:
                raise BodyTooLarge(f"body larger than {UNAUTHENTICATED_BODY_LIMIT} bytes without valid credentials")
            return super()._parse_payload()
        body = read_chunked(self.rfile, self._body_limit())
        # The app sees what API Gateway would hand a Lambda: a plain body with its length, no transfer coding.
        headers: HeaderType = {
            name: value
            for name, value in self.headers.items()
            if name.lower() not in {"transfer-encoding", "content-length"}
        }
        headers["Content-Length"] = str(len(body))
        return headers, body if body else None

    def _generic_handle(self) -> None:
        try:
            super()._generic_handle()
        except BodyTooLarge as error:
            # The body was not read: the connection cannot carry another request.
            self.close_connection = True
            self._send_json(
                401,
                {"message": f"error authenticating request: {error}"},
                {"WWW-Authenticate": 'Basic realm="lakelet", charset="UTF-8"'},
            )
        except ChunkedBodyError as error:
            # The rest of the stream cannot be framed any more, so this connection ends here.
            self.close_connection = True
            self._send_json(400, {"message": f"bad request body: {error}"})

    def _send_error_response(self, error: LocalGatewayException) -> None:
        """chalice local's answer for a path no route matches mimics API Gateway's: 403 "Missing Authentication
        Token", or, when the request carries an Authorization header, a message that quotes that header back
        (the caller's Basic credentials, in a response body). The app has no Chalice authorizers, so a
        ForbiddenError means exactly "no route": answer a lakeFS-shaped 404 that quotes nothing."""
        if isinstance(error, ForbiddenError):
            self._send_json(404, {"message": NOT_FOUND_MESSAGE})
            return
        super()._send_error_response(error)

    def _send_json(self, code: int, body: dict[str, str], headers: dict[str, str] | None = None) -> None:
        self._send_http_response(
            code, {"Content-Type": "application/json", **(headers or {})}, json.dumps(body).encode()
        )

    # The base class bound these names to its own _generic_handle when it was defined: rebind them.
    do_GET = do_PUT = do_POST = do_HEAD = do_DELETE = do_PATCH = do_OPTIONS = _generic_handle

    def _send_http_response(self, code: int, headers: HeaderType, body: str | bytes | None) -> None:
        unsafe = first_unsafe(
            (name, item) for name, value in headers.items() for item in (value if isinstance(value, list) else [value])
        )
        if unsafe is not None:
            # A header with CR/LF would let a stored or requested value write headers and a body of its own.
            # Dropping just that header would still send the body (attacker-chosen bytes, maybe without their
            # content type), so the whole response goes, replaced by a fixed error that echoes nothing.
            log.error("refused to send a response with an unsafe header %s", unsafe)
            code, headers, body = 500, {"Content-Type": "application/json", "Connection": "close"}, _INTERNAL
            self.close_connection = True
        encoded = b"" if body is None else body if isinstance(body, bytes) else body.encode("utf-8")
        # The app may declare a Content-Length (an object's size, for HEAD); sending it next to the server's
        # own would give the client two, e.g. "20, 20". API Gateway sends one, measured from the payload.
        declared = None
        for name in [name for name in headers if name.lower() == "content-length"]:
            declared = headers.pop(name)
        head = self.command == "HEAD"
        self.send_response(code)
        self.send_header("Content-Length", str(declared) if head and declared is not None else str(len(encoded)))
        if code == 204 or (not encoded and not head):
            # No body, so no type (a 204, an empty 201): lakectl's generated client parses any answer typed JSON,
            # and fails on an empty one ("unexpected end of JSON input") after the change it asked for.
            headers.pop("Content-Type", None)
        elif body is not None:
            self.send_header("Content-Type", headers.pop("Content-Type", "application/json"))
        for name, value in headers.items():
            for item in value if isinstance(value, list) else [value]:
                self.send_header(name, item)
        payload = b"" if head else encoded
        if self.request_version == "HTTP/0.9":  # a response without a head at all, as http.server sends one
            self.wfile.write(payload)
            return
        self._headers_buffer.append(b"\r\n")
        if len(payload) <= COALESCED_BODY_BYTES:
            # Head and body in one write: one system call (and one wait for the GIL after it) a response.
            self._headers_buffer.append(payload)
            self.flush_headers()
        else:
            self.flush_headers()  # a large body is not copied to sit behind the headers
            self.wfile.write(payload)


def _serve_requests_on_threads(app: Chalice) -> type:
    """Make ``app.current_request`` thread-local, as chalice local does, so concurrent requests don't mix.

    Returns the app's previous class so that :meth:`ApiServer.stop` can put it back.
    """
    original = type(app)
    if not isinstance(app, LocalChalice):
        app.__class__ = type(f"Local{original.__name__}", (LocalChalice, original), {})
    return original


class _QueueingServer(ThreadedHTTPServer):
    request_queue_size = LISTEN_BACKLOG


class ApiServer:
    """A Chalice app served by :class:`DechunkingRequestHandler` on ``host:port`` from a background thread.

    ``port=0`` picks a free port; :attr:`port` and :attr:`url` tell which. Requests are served on threads.
    With a limited ``handler``, API Gateway's and Lambda's limits stand in front of the app
    (lakelet/stack/limited_api.py).
    """

    def __init__(
        self,
        app: Chalice,
        host: str = "127.0.0.1",
        port: int = 0,
        config: Config | None = None,
        handler: type[DechunkingRequestHandler] | None = None,
    ) -> None:
        """``handler``: the request handler (a subclass of DechunkingRequestHandler, which is the default), such as
        limited_api.limited_handler's, which puts API Gateway's and Lambda's limits in front of the app."""
        self._app = app
        self._original_class = _serve_requests_on_threads(app)
        handler = handler or DechunkingRequestHandler
        self._dev_server = LocalDevServer(
            app,
            config if config is not None else Config(chalice_stage="local"),
            host,
            port,
            handler_cls=handler,
            server_cls=_QueueingServer,
        )
        self._thread: threading.Thread | None = None

    @property
    def host(self) -> str:
        return str(self._dev_server.server.server_address[0])

    @property
    def port(self) -> int:
        return int(self._dev_server.server.server_address[1])

    @property
    def url(self) -> str:
        """The server's root URL, e.g. ``http://127.0.0.1:8000``."""
        return f"http://{self.host}:{self.port}"

    def start(self) -> None:
        """Begin serving on a daemon thread; returns at once (the socket is already listening)."""
        if self._thread is not None:
            raise RuntimeError("ApiServer already started")
        # serve_forever on the raw server: LocalDevServer's own prints "Serving on ...:0" for a free port.
        # A short poll interval: stop() waits for the serving loop to notice, up to one interval.
        self._thread = threading.Thread(
            target=self._dev_server.server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"lakelet-api-{self.port}",
            daemon=True,
        )
        self._thread.start()

    def stop(self) -> None:
        """Stop serving, release the port and give the app back its own class. Safe to call twice."""
        if self._thread is not None:
            self._dev_server.shutdown()
            self._thread.join()
            self._thread = None
        self._dev_server.server.server_close()
        self._app.__class__ = self._original_class
