"""Serve a Chalice app over HTTP on this machine, like ``chalice local`` but fit for the official lakeFS clients.

Stock ``chalice local`` reads a request body only when a Content-Length header is present, so a body sent with
``Transfer-Encoding: chunked`` (how the lakeFS Python client uploads) reaches the route empty and the upload
"succeeds" with 0 bytes. :class:`DechunkingRequestHandler` decodes such bodies before they reach the app.
It also sends no body in answer to HEAD, as HTTP requires (chalice local writes one, which breaks the next
response on a kept-alive connection), and one Content-Length header where chalice local can send two.

:class:`ApiServer` runs the server on a background thread, so the same code serves ``lakelet local`` and tests.
"""

from __future__ import annotations

import re
import threading
from typing import BinaryIO

from chalice.app import Chalice
from chalice.config import Config
from chalice.local import ChaliceRequestHandler, HeaderType, LocalChalice, LocalDevServer

# A chunk-size line is short; a long one is garbage, and reading it unbounded would let a client fill memory.
_MAX_LINE_BYTES = 8 * 1024
_CHUNK_SIZE = re.compile(rb"[0-9A-Fa-f]{1,16}")


class ChunkedBodyError(ValueError):
    """The request announced ``Transfer-Encoding: chunked`` but its body is not valid chunked encoding."""


def _read_line(stream: BinaryIO, what: str) -> bytes:
    line = stream.readline(_MAX_LINE_BYTES + 1)
    if not line.endswith(b"\n"):
        raise ChunkedBodyError(f"truncated or overlong {what}")
    return line


def read_chunked(stream: BinaryIO) -> bytes:
    """Read one chunked-encoded body (RFC 9112 section 7.1) from ``stream`` and return the decoded bytes.

    Chunk extensions and trailer fields are read and dropped. Raises :class:`ChunkedBodyError` on malformed
    or truncated input.
    """
    parts: list[bytes] = []
    while True:
        size_field = _read_line(stream, "chunk size line").split(b";", 1)[0].strip()
        if not _CHUNK_SIZE.fullmatch(size_field):
            raise ChunkedBodyError(f"invalid chunk size {size_field[:32]!r}")
        size = int(size_field, 16)
        if size == 0:
            break
        data = stream.read(size)
        if len(data) != size:
            raise ChunkedBodyError(f"truncated chunk: expected {size} bytes, got {len(data)}")
        parts.append(data)
        if _read_line(stream, "chunk terminator").strip():
            raise ChunkedBodyError("chunk data longer than its declared size")
    while _read_line(stream, "trailer section").strip():
        pass  # trailer fields carry nothing the app reads
    return b"".join(parts)


class DechunkingRequestHandler(ChaliceRequestHandler):
    """chalice local's request handler, plus chunked request bodies and well-framed responses."""

    # Headers and body leave in separate writes; with Nagle's algorithm the body then waits for the client's
    # delayed ACK (~40 ms a response on a kept-alive connection, as the lakeFS client uses).
    disable_nagle_algorithm = True

    def _parse_payload(self) -> tuple[HeaderType, bytes | None]:
        transfer_encoding = self.headers.get("Transfer-Encoding", "")
        if "chunked" not in transfer_encoding.lower():
            return super()._parse_payload()
        body = read_chunked(self.rfile)  # type: ignore[arg-type]
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
        except ChunkedBodyError as error:
            # The rest of the stream cannot be framed any more, so this connection ends here.
            self.close_connection = True
            self.send_error(400, f"Bad chunked request body: {error}")

    # The base class bound these names to its own _generic_handle when it was defined: rebind them.
    do_GET = do_PUT = do_POST = do_HEAD = do_DELETE = do_PATCH = do_OPTIONS = _generic_handle

    def _send_http_response(self, code: int, headers: HeaderType, body: str | bytes | None) -> None:
        encoded = b"" if body is None else body if isinstance(body, bytes) else body.encode("utf-8")
        # The app may declare a Content-Length (an object's size, for HEAD); sending it next to the server's
        # own would give the client two, e.g. "20, 20". API Gateway sends one, measured from the payload.
        declared = None
        for name in [name for name in headers if name.lower() == "content-length"]:
            declared = headers.pop(name)
        head = self.command == "HEAD"
        self.send_response(code)
        self.send_header("Content-Length", str(declared) if head and declared is not None else str(len(encoded)))
        if body is not None:
            self.send_header("Content-Type", headers.pop("Content-Type", "application/json"))
        self._send_headers(headers)
        if not head:
            self.wfile.write(encoded)


def _serve_requests_on_threads(app: Chalice) -> type:
    """Make ``app.current_request`` thread-local, as chalice local does, so concurrent requests don't mix.

    Returns the app's previous class so that :meth:`ApiServer.stop` can put it back.
    """
    original = type(app)
    if not isinstance(app, LocalChalice):
        app.__class__ = type(f"Local{original.__name__}", (LocalChalice, original), {})
    return original


class ApiServer:
    """A Chalice app served by :class:`DechunkingRequestHandler` on ``host:port`` from a background thread.

    ``port=0`` picks a free port; :attr:`port` and :attr:`url` tell which. Requests are served on threads.
    """

    def __init__(self, app: Chalice, host: str = "127.0.0.1", port: int = 0, config: Config | None = None) -> None:
        self._app = app
        self._original_class = _serve_requests_on_threads(app)
        self._dev_server = LocalDevServer(
            app,
            config if config is not None else Config(chalice_stage="local"),
            host,
            port,
            handler_cls=DechunkingRequestHandler,
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
