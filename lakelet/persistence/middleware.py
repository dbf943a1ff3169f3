"""The WSGI layer in front of moto's server: which requests change moto's state, and running one repeatably.

A request is journaled unless it is known to leave moto's state as it is: reads (GET, HEAD, OPTIONS; JSON and
query-protocol actions named Get*, Describe*, List*, Query, Scan, Decrypt, ...), moto's own ``/moto-api`` (the
stack sets its config on every start), and Lambda invokes, which moto routes to the app's handlers in process
(lakelet/stack/stepfunctions_local.py): replaying one would run a task again, and the writes a task makes are requests
of their own, journaled one by one. StartSyncExecution is left out for the same reason. Anything not recognised
is journaled: replaying a read costs a little time, forgetting a write would lose data.
"""

from __future__ import annotations

import io
import re
import threading
from collections.abc import Callable, Iterable
from typing import Any, BinaryIO
from urllib.parse import parse_qs, unquote

from moto.moto_server.threaded_moto_server import ThreadedMotoServer
from moto.moto_server.werkzeug_app import (
    DomainDispatcherApplication,
    MotoRequestHandler,
    create_backend_app,
)
from werkzeug.serving import make_server

from lakelet.persistence import determinism

WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]
#: A WSGI answer: the status line, the headers, the body's chunks.
Answer = tuple[str, list[Any], list[bytes]]

_READ_ACTION = re.compile(
    r"(Get|Describe|List|Query|Scan|BatchGet|TransactGet|Decrypt|Encrypt|ReEncrypt|GenerateDataKey|"
    r"GenerateRandom|GenerateMac|VerifyMac|Sign|Verify|Head|Search|Lookup|Validate|TestState)"
)
_NOT_REPLAYABLE = frozenset({"Invoke", "InvokeAsync", "InvokeWithResponseStream", "StartSyncExecution"})
_LAMBDA_INVOKE_PATH = re.compile(
    r"^/\d{4}-\d{2}-\d{2}/functions/[^/]+/(invocations|invoke-async/?|response-streaming-invocations)$"
)
_CREDENTIAL_SCOPE = re.compile(r"Credential=[^/,\s]+/\d{8}/[^/]+/([^/]+)/aws4_request")
_FORM = "application/x-www-form-urlencoded"


def action_changes_state(action: str) -> bool:
    return action not in _NOT_REPLAYABLE and _READ_ACTION.match(action) is None


def signing_service(environ: dict[str, Any]) -> str | None:
    match = _CREDENTIAL_SCOPE.search(environ.get("HTTP_AUTHORIZATION", ""))
    if match is None:
        credential = parse_qs(environ.get("QUERY_STRING", "")).get("X-Amz-Credential", [""])[0]
        match = _CREDENTIAL_SCOPE.search("Credential=" + unquote(credential))
    return match.group(1) if match else None


def may_change_state(environ: dict[str, Any]) -> bool:
    """From the method, path and headers only: False for requests that certainly change nothing."""
    path = environ.get("PATH_INFO", "")
    if path.startswith(("/moto-api", "/latest/")) or path == "/favicon.ico":
        return False
    if environ.get("REQUEST_METHOD", "GET") in ("GET", "HEAD", "OPTIONS"):
        return False
    target = environ.get("HTTP_X_AMZ_TARGET")
    if target:
        return action_changes_state(target.rsplit(".", 1)[-1])
    return not (_LAMBDA_INVOKE_PATH.match(path) and signing_service(environ) in (None, "lambda"))


def changes_state(environ: dict[str, Any], body: bytes) -> bool:
    """The full answer, once the body is read: query-protocol requests name their action in a form body."""
    if environ.get("CONTENT_TYPE", "").startswith(_FORM) and not environ.get("HTTP_X_AMZ_TARGET"):
        action = parse_qs(body.decode("utf-8", errors="replace")).get("Action", [""])[0]
        if action:
            return action_changes_state(action)
    return True


def read_body(environ: dict[str, Any]) -> bytes:
    """The whole request body, de-chunked; the environ is left reading it from memory, with its length set."""
    stream: BinaryIO = environ["wsgi.input"]
    length = environ.get("CONTENT_LENGTH") or ""
    chunked = "chunked" in environ.get("HTTP_TRANSFER_ENCODING", "").lower()
    if chunked or (not length and environ.get("wsgi.input_terminated")):
        body = stream.read()
    elif length:
        wanted = int(length)
        parts: list[bytes] = []
        while wanted > 0:
            part = stream.read(wanted)
            if not part:
                break
            parts.append(part)
            wanted -= len(part)
        body = b"".join(parts)
    else:
        body = b""
    environ.pop("HTTP_TRANSFER_ENCODING", None)
    set_body(environ, body)
    return body


def set_body(environ: dict[str, Any], body: bytes) -> None:
    environ["wsgi.input"] = io.BytesIO(body)
    environ["CONTENT_LENGTH"] = str(len(body))
    environ["wsgi.input_terminated"] = True


def recordable(environ: dict[str, Any]) -> dict[str, Any]:
    """The environ entries a replay needs: the CGI variables, the headers, moto's preserved header names."""
    return {
        key: value
        for key, value in environ.items()
        if not key.startswith(("wsgi.", "werkzeug.")) and isinstance(value, (str, dict))
    }


def replay_environ(recorded: dict[str, Any], body: bytes) -> dict[str, Any]:
    environ: dict[str, Any] = dict(recorded)
    environ.update(
        {
            "wsgi.version": (1, 0),
            "wsgi.url_scheme": "http",
            "wsgi.errors": io.StringIO(),
            "wsgi.multithread": False,
            "wsgi.multiprocess": False,
            "wsgi.run_once": False,
        }
    )
    set_body(environ, body)
    return environ


def whole(result: Iterable[bytes]) -> list[bytes]:
    """A WSGI answer's body chunks, all read (moto's work may run as they are), then the answer closed."""
    try:
        return list(result)
    finally:
        close = getattr(result, "close", None)
        if close is not None:
            close()


def run(app: WsgiApp, environ: dict[str, Any], seed: int, when: float) -> Answer:
    """Call ``app`` with moto's randomness and clock pinned to (seed, when); its status line, headers and body."""
    answer: list[Any] = []
    chunks: list[bytes] = []

    def start_response(status: str, headers: list[Any], exc_info: Any = None) -> Callable[[bytes], None]:
        answer[:] = [status, headers]
        return chunks.append

    with determinism.pinned(seed, when):
        chunks.extend(whole(app(environ, start_response)))
    if not answer:
        raise RuntimeError("moto answered without starting a response")
    return answer[0], answer[1], chunks


def writes_through(
    app: WsgiApp, write: Callable[[dict[str, Any], bytes, Callable[..., Any]], Iterable[bytes]]
) -> WsgiApp:
    """``app`` with each request that may change moto's state answered by ``write(environ, body, start_response)``
    (the body read), every other one by ``app`` itself."""

    def routed(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        if not may_change_state(environ):
            return app(environ, start_response)
        body = read_body(environ)
        if not changes_state(environ, body):
            return app(environ, start_response)
        return write(environ, body, start_response)

    return routed


class WriteLock:
    """moto's state-changing requests answered one at a time where nothing journals them (a stack without a data
    directory), as the journal's lock answers them otherwise (store.py); reads run beside them as before. moto's
    writes are not safe side by side: a TransactWriteItems that is cancelled puts back copies of its tables taken
    at its start, and an item put into one of them meanwhile was gone though its put had been answered."""

    def __init__(self) -> None:
        self._lock = threading.Lock()

    def wrap(self, app: WsgiApp) -> WsgiApp:
        """``app`` with its state-changing requests under the lock, their whole answers read inside it."""

        def write(environ: dict[str, Any], body: bytes, start_response: Callable[..., Any]) -> Iterable[bytes]:
            with self._lock:
                return whole(app(environ, start_response))

        return writes_through(app, write)

    def run(self, answer: Callable[[], Answer]) -> Answer:
        """``answer()`` under the lock: a write of the stack's own that skips the WSGI chain (inprocess_direct.py)."""
        with self._lock:
            return answer()


def moto_app() -> WsgiApp:
    """moto's server application, as ThreadedMotoServer builds it."""
    return DomainDispatcherApplication(create_backend_app)


class WrappedMotoServer(ThreadedMotoServer):
    """ThreadedMotoServer with ``wrap`` around moto's application (moto is pinned: this follows its code)."""

    def __init__(self, wrap: Callable[[WsgiApp], WsgiApp], ip_address: str, port: int) -> None:
        super().__init__(ip_address=ip_address, port=port, verbose=False)
        self._wrap = wrap

    def _server_entry(self) -> None:
        app = self._wrap(moto_app())
        self._server = make_server(self._ip_address, self._port, app, True, request_handler=MotoRequestHandler)
        self._server_ready_event.set()
        self._server.serve_forever()
