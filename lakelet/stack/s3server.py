"""Serve the S3 gateway over HTTP on this machine: the local stand-in for its Lambda Function URL.

A plain threaded HTTP/1.1 server that turns each request into a ``chalicelib.s3proxy.Request`` exactly as the
client sent it (percent-encoded path and query, every header, the body de-chunked when it came with
``Transfer-Encoding: chunked``), hands it to ``S3Gateway.handle`` and writes the answer back. HTTP/1.1 also
gives the ``100 Continue`` that S3 clients wait for before sending a large body. Unlike the Lambda, it puts no
limit on body sizes, so ``aws s3 cp`` of large files works with the clients' default part sizes, unless given
``limits`` (``lakelet up --aws-limits``): then a request or answer over the Function URL's 6 MB payload gets
Lambda's answer (lakelet/stack/aws_limits.py).
"""

from __future__ import annotations

import base64
import json
import logging
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

from chalicelib.http_headers import first_unsafe
from chalicelib.s3proxy import Request, S3Gateway
from chalicelib.s3proxy.function_url import event_response
from lakelet.defaults import LISTEN_BACKLOG
from lakelet.stack.aws_limits import URL_REQUEST_TOO_LARGE, URL_RESPONSE_TOO_LARGE, AwsLimits
from lakelet.stack.devserver import ChunkedBodyError, read_chunked

log = logging.getLogger(__name__)

# What the server sends instead of a response whose headers it must not write (see _send).
_INTERNAL_ERROR = (
    b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>InternalError</Code>'
    b"<Message>We encountered an internal error. Please try again.</Message></Error>"
)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = LISTEN_BACKLOG
    gateway: S3Gateway
    limits: AwsLimits | None = None


# Content types a Function URL hands the function as text; any other body arrives base64-encoded in the event.
_TEXT_TYPES = ("text/", "application/json", "application/xml", "application/javascript", "application/x-www-form")
# The Function URL event's requestContext (account, API id, domain, request id, time, http ...), in bytes of JSON.
_URL_CONTEXT_BYTES = 1_000


def url_event_bytes(request: Request, content_type: str) -> int:
    """The size of the Function URL (payload 2.0) event the gateway's Lambda would be invoked with."""
    text = content_type.lower().startswith(_TEXT_TYPES)
    body = request.body.decode("utf-8", errors="replace") if text else base64.b64encode(request.body).decode()
    event = {
        "version": "2.0",
        "routeKey": "$default",
        "rawPath": request.raw_path,
        "rawQueryString": request.raw_query,
        "headers": dict(request.headers),
        "body": body,
        "isBase64Encoded": not text,
    }
    return len(json.dumps(event, separators=(",", ":")).encode()) + _URL_CONTEXT_BYTES


class S3RequestHandler(BaseHTTPRequestHandler):
    """One connection; each request goes to the server's gateway."""

    protocol_version = "HTTP/1.1"
    server_version = "LakeletS3"
    # Headers and body leave in separate writes; without this a kept-alive client waits ~40 ms per response.
    disable_nagle_algorithm = True
    server: _Server

    _expect_continue = False

    def handle_expect_100(self) -> bool:
        """Holds back ``100 Continue`` until the signature verifies (see _handle): a client that waits for it
        sends no body that would be refused anyway."""
        self._expect_continue = True
        return True

    def _has_body(self) -> bool:
        chunked = "chunked" in self.headers.get("Transfer-Encoding", "").lower()
        return chunked or self.headers.get("Content-Length", "0").strip() not in ("", "0")

    def _body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            return read_chunked(self.rfile)  # type: ignore[arg-type]
        length = int(self.headers.get("Content-Length") or 0)
        if length < 0:
            raise ValueError("negative Content-Length")
        return self.rfile.read(length) if length > 0 else b""

    def _handle(self) -> None:
        target = urlsplit(self.path)
        headers = [(name, value) for name, value in self.headers.items() if name.lower() != "transfer-encoding"]
        if self._has_body():
            # Authenticate on the request line and headers before reading a byte of the body.
            refused = self.server.gateway.refuse_before_body(
                Request.build(self.command, target.path or "/", target.query, headers, b"", self.client_address[0])
            )
            if refused is not None:
                self.close_connection = True  # the unread body cannot be told apart from a next request
                self._send(refused.status, refused.headers, refused.body)
                return
        if self._expect_continue:
            self.send_response_only(100)
            self.end_headers()
            self._expect_continue = False
        try:
            body = self._body()
        except (ChunkedBodyError, ValueError) as error:
            self.close_connection = True
            self.send_error(400, f"Bad request body: {error}")
            return
        request = Request.build(self.command, target.path or "/", target.query, headers, body, self.client_address[0])
        limits = self.server.limits
        if limits is not None and url_event_bytes(request, self.headers.get("Content-Type", "")) > (
            limits.lambda_request_bytes
        ):
            self._send_limit(URL_REQUEST_TOO_LARGE)  # Lambda refused the invocation: the gateway never ran
            return
        response = self.server.gateway.handle(request)
        if limits is not None and len(json.dumps(event_response(response))) > limits.lambda_response_bytes:
            self._send_limit(URL_RESPONSE_TOO_LARGE)
            return
        self._send(response.status, response.headers, response.body)

    def _send_limit(self, answer: tuple[int, dict[str, str]]) -> None:
        status, body = answer
        self._send(status, {"Content-Type": "application/json"}, json.dumps(body).encode())

    def _send(self, status: int, response_headers: dict[str, str], body: bytes) -> None:
        unsafe = first_unsafe(response_headers.items())
        if unsafe is not None:
            # A header with CR/LF would let a stored or requested value write headers and a body of its own.
            # Dropping that header alone would still send the body (the object's bytes, maybe an HTML page an
            # attacker stored): the whole response goes, replaced by a fixed error that echoes nothing.
            log.error("refused to send a response with an unsafe header %s", unsafe)
            status, response_headers, body = (
                500,
                {"Content-Type": "application/xml", "Connection": "close"},
                _INTERNAL_ERROR,
            )
            self.close_connection = True
        self.send_response(status)
        declared = None
        for name, value in response_headers.items():
            if name.lower() == "content-length":
                declared = value  # HEAD declares the object's size; otherwise the body's length is sent below
                continue
            self.send_header(name, value)
        head = self.command == "HEAD"
        self.send_header("Content-Length", str(declared) if head and declared is not None else str(len(body)))
        self.end_headers()
        if not head and body:
            self.wfile.write(body)

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _handle

    def log_message(self, format: str, *args: object) -> None:
        # One line per request, shaped like the API's (lakelet up prints INFO of this logger on stderr).
        log.info("%s - - [%s] S3 %s", self.address_string(), self.log_date_time_string(), format % args)


class S3Server:
    """An S3Gateway served on ``host:port`` from a background thread. ``port=0`` picks a free port."""

    def __init__(
        self, gateway: S3Gateway, host: str = "127.0.0.1", port: int = 0, limits: AwsLimits | None = None
    ) -> None:
        self._server = _Server((host, port), S3RequestHandler)
        self._server.gateway = gateway
        self._server.limits = limits
        self._thread: threading.Thread | None = None

    @property
    def host(self) -> str:
        return str(self._server.server_address[0])

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        """The endpoint S3 clients take, e.g. ``http://127.0.0.1:8001``."""
        return f"http://{self.host}:{self.port}"

    def start(self) -> None:
        if self._thread is not None:
            raise RuntimeError("S3Server already started")
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"lakelet-s3-{self.port}",
            daemon=True,
        )
        self._thread.start()

    def stop(self) -> None:
        """Stop serving and release the port. Safe to call twice."""
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join()
            self._thread = None
        self._server.server_close()
