"""HTTP/1.1 over a plain socket, for API calls to an ``http://`` server: what the CLI's client (api.py) needs of
http.client (one keep-alive connection, a request, its answer) without its import, which brings the email
package's parser and ssl with it: some thirty modules, a sixth of ``lakelet repo list``'s start. ``https://``
servers still go through http.client and ssl.

The request carries what http.client's would (Host, Accept-Encoding: identity, Content-Length when a body is
sent or the method expects one); the answer is read as http.client reads it: 1xx answers skipped, a body by
Content-Length, chunked transfer coding, or up to the close, none for HEAD, 204 and 304.
"""

from __future__ import annotations

import socket
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import http.client
    import io
    import ssl

# A JSON answer larger than this is no lakeFS answer (a page of 1,000 objects with metadata is a few MB): the
# client stops reading rather than hold whatever a broken or hostile server streams. Downloads do not come here.
MAX_BODY = 64 * 1024 * 1024
MAX_LINE = 65536  # http.client's limit on a status or header line
MAX_HEADERS = 100  # and on the number of header lines
_BODY_METHODS = frozenset({"PATCH", "POST", "PUT"})  # sent with Content-Length: 0 when there is no body


class BadAnswer(Exception):
    """What came back is no HTTP/1.x answer (http.client's HTTPException)."""


class ClosedBeforeAnswer(ConnectionResetError, BadAnswer):
    """The server closed the connection without a byte of an answer (http.client's RemoteDisconnected): on a
    kept-alive connection, its idle timeout."""


@dataclass(frozen=True, slots=True)
class Answer:
    status: int
    reason: str
    body: bytes
    will_close: bool


class TooLarge(BadAnswer):
    """The answer's body is larger than the client takes (MAX_BODY)."""


@dataclass(frozen=True, slots=True)
class Limits:
    """How long to wait to connect, for each read of an answer, and for a whole request from its sending to the
    last byte of its answer, retries included (seconds); and how large a body may be."""

    connect: float = 10.0
    read: float = 120.0
    max_body: int = MAX_BODY
    total: float = 600.0


class Connection:
    """One connection to ``host:port``, opened by the first request and kept alive between them."""

    def __init__(self, host: str, port: int | None, limits: Limits = Limits()) -> None:
        self.host, self.port = host, port or 80
        self.limits = limits
        self.sock: socket.socket | None = None
        self._stream: io.BufferedReader | None = None

    def close(self) -> None:
        if self._stream is not None:
            self._stream.close()
        if self.sock is not None:
            self.sock.close()
        self.sock = None
        self._stream = None

    def request(self, method: str, target: str, body: bytes | None, headers: Mapping[str, str]) -> None:
        """Sends the request whole (connecting first if need be); an OSError means nothing reached the server
        intact."""
        if self.sock is None:
            self.sock = socket.create_connection((self.host, self.port), timeout=self.limits.connect)
            self.sock.settimeout(self.limits.read)  # a server that stops answering ends in TimeoutError
            self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # as http.client sets it
            self._stream = self.sock.makefile("rb")
        host = self.host if self.host.isascii() else self.host.encode("idna").decode("ascii")  # as http.client
        host = host if ":" not in host else f"[{host}]"
        lines = [f"{method} {target} HTTP/1.1", f"Host: {host}" + ("" if self.port == 80 else f":{self.port}")]
        lines.append("Accept-Encoding: identity")
        if body is not None or method in _BODY_METHODS:
            lines.append(f"Content-Length: {len(body or b'')}")
        lines.extend(f"{name}: {value}" for name, value in headers.items())
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        self.sock.sendall(head + body if body else head)

    def answer(self, method: str) -> Answer:
        """The answer to the request just sent (OSError or BadAnswer when there is none)."""
        while True:
            version, status, reason = self._status_line()
            headers = self._headers()
            if status >= 200:
                break  # 100 Continue and other interim answers are skipped, as http.client does
        connection = headers.get("connection", "").lower()
        will_close = "close" in connection or (version == "HTTP/1.0" and "keep-alive" not in connection)
        if method == "HEAD" or status in (204, 304):
            return Answer(status, reason, b"", will_close)
        if "chunked" in headers.get("transfer-encoding", "").lower():
            return Answer(status, reason, self._chunked(), will_close)
        try:
            size = int(headers.get("content-length", ""))
        except ValueError:
            size = -1
        if size >= 0:
            self._check_size(size)
            return Answer(status, reason, self._exactly(size), will_close)
        # No length, or one that is no number (which http.client ignores too): the body runs to the close.
        body = self._read().read(self.limits.max_body + 1)
        self._check_size(len(body))
        return Answer(status, reason, body, True)

    def _check_size(self, size: int) -> None:
        if size > self.limits.max_body:
            raise TooLarge(f"the answer holds more than {self.limits.max_body} bytes")

    def _read(self) -> io.BufferedReader:
        if self._stream is None:
            raise BadAnswer("not connected")
        return self._stream

    def _line(self) -> bytes:
        line = self._read().readline(MAX_LINE + 1)
        if len(line) > MAX_LINE:
            raise BadAnswer("answer line too long")
        return line

    def _status_line(self) -> tuple[str, int, str]:
        line = self._line()
        if not line:
            raise ClosedBeforeAnswer("the server closed the connection without an answer")
        version, _, rest = line.decode("iso-8859-1").rstrip("\r\n").partition(" ")
        code, _, reason = rest.partition(" ")
        if not version.startswith("HTTP/1.") or len(code) != 3 or not code.isdigit():
            raise BadAnswer(f"bad status line {line[:80]!r}")
        return version, int(code), reason.strip()

    def _headers(self) -> dict[str, str]:
        headers: dict[str, str] = {}
        for _ in range(MAX_HEADERS + 1):
            line = self._line()
            if line in (b"\r\n", b"\n", b""):
                return headers
            name, _, value = line.decode("iso-8859-1").partition(":")
            key = name.strip().lower()
            headers[key] = f"{headers[key]}, {value.strip()}" if key in headers else value.strip()
        raise BadAnswer(f"more than {MAX_HEADERS} header lines")

    def _exactly(self, size: int) -> bytes:
        data = self._read().read(size)
        if len(data) < size:
            raise BadAnswer(f"answer cut short: {len(data)} of {size} bytes")
        return data

    def _chunked(self) -> bytes:
        parts: list[bytes] = []
        received = 0
        while True:
            size_line = self._line().split(b";", 1)[0].strip()
            try:
                size = int(size_line, 16)
            except ValueError:
                raise BadAnswer(f"bad chunk size {size_line[:20]!r}") from None
            if size == 0:
                break
            received += size
            self._check_size(received)
            parts.append(self._exactly(size))
            self._exactly(2)  # the CRLF after each chunk
        while self._line() not in (b"\r\n", b"\n", b""):  # trailers
            pass
        return b"".join(parts)


class TLSConnection:
    """The same interface over http.client's HTTPS connection, its errors as this module's: ssl costs more
    than http.client's import anyway."""

    def __init__(self, host: str, port: int | None, context: ssl.SSLContext, limits: Limits = Limits()) -> None:
        import http.client

        self.limits = limits
        self._conn = http.client.HTTPSConnection(host, port, context=context, timeout=limits.connect)

    @property
    def sock(self) -> socket.socket | None:
        return self._conn.sock

    def close(self) -> None:
        self._conn.close()

    def request(self, method: str, target: str, body: bytes | None, headers: Mapping[str, str]) -> None:
        self._conn.request(method, target, body=body, headers=dict(headers))
        if self._conn.sock is not None:
            self._conn.sock.settimeout(self.limits.read)

    def answer(self, method: str) -> Answer:
        import http.client

        try:
            response: http.client.HTTPResponse = self._conn.getresponse()
            data = response.read(self.limits.max_body + 1)
            if len(data) > self.limits.max_body:
                raise TooLarge(f"the answer holds more than {self.limits.max_body} bytes")
        except http.client.RemoteDisconnected as e:
            raise ClosedBeforeAnswer(str(e)) from e
        except http.client.HTTPException as e:
            raise BadAnswer(f"{type(e).__name__}: {e}") from e
        return Answer(response.status, response.reason or "", data, bool(response.will_close))
