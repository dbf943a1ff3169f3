"""How long the CLI's client waits and how much it reads (the environment's settings over wire.Limits'
defaults), and a total deadline for one API request: from sending it to the last byte of its answer, retries included.

Socket timeouts bound each read, not the whole answer: a server that sends one byte just before every read
timeout holds a request forever. A ``Deadline`` is a watchdog timer: the sockets a request uses while it is the
thread's current deadline are registered with it, and when the time is up they are shut down, which ends any
read in progress (it returns end-of-file, or fails) on every transport the CLI uses: its own client (wire.py),
http.client for https, and urllib3's pools (the transfers' API calls and the lakefs_sdk commands), whose
connections register themselves through ``pool_classes``. Data transfers to and from storage are not under a
deadline (a large download may rightly take hours); their reads keep the read timeout.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self

from lakelet.commands.errors import CLIError

if TYPE_CHECKING:
    from lakelet.commands import wire

# How long to wait for a connection, for each read of an answer, and for a whole API request (seconds), and the
# largest JSON answer (bytes); transfers streamed to a file have the same connect and read timeouts, no total
# deadline and no size bound.
ENV_CONNECT_TIMEOUT = "LAKELET_HTTP_CONNECT_TIMEOUT"
ENV_READ_TIMEOUT = "LAKELET_HTTP_TIMEOUT"
ENV_DEADLINE = "LAKELET_HTTP_DEADLINE"
ENV_MAX_ANSWER = "LAKELET_HTTP_MAX_ANSWER_BYTES"


def limits_from(environ: Mapping[str, str]) -> wire.Limits:
    """The client's limits, wire.Limits' defaults unless the environment sets them."""
    from lakelet.commands import wire

    default = wire.Limits()

    def number(name: str, fallback: float) -> float:
        text = environ.get(name, "").strip()
        if not text:
            return fallback
        try:
            value = float(text)
        except ValueError:
            value = -1.0
        if not value > 0:
            raise CLIError(f"{name}={text!r} is not a positive number", f"unset {name} or give seconds, e.g. 30")
        return value

    return wire.Limits(
        connect=number(ENV_CONNECT_TIMEOUT, default.connect),
        read=number(ENV_READ_TIMEOUT, default.read),
        total=number(ENV_DEADLINE, default.total),
        max_body=int(number(ENV_MAX_ANSWER, default.max_body)),
    )


_current = threading.local()


class Deadline:
    """Shuts down the sockets watched under it once ``seconds`` have passed since it was entered."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.expired = False
        self._lock = threading.Lock()
        self._socks: list[socket.socket] = []
        self._timer: threading.Timer | None = None
        self._outer: Deadline | None = None

    def __enter__(self) -> Self:
        self._outer = getattr(_current, "deadline", None)
        _current.deadline = self
        self._timer = threading.Timer(self.seconds, self._expire)
        self._timer.daemon = True
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._timer is not None:
            self._timer.cancel()
        _current.deadline = self._outer

    def watch(self, sock: socket.socket | None) -> None:
        """Put ``sock`` under this deadline (at once shut down if it has already passed)."""
        if sock is None:
            return
        with self._lock:
            if sock not in self._socks:
                self._socks.append(sock)
            expired = self.expired
        if expired:
            _shut(sock)

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            socks = list(self._socks)
        for sock in socks:
            _shut(sock)


def _shut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):  # already closed: nothing to end
        sock.shutdown(socket.SHUT_RDWR)


def watch(sock: socket.socket | None) -> None:
    """Put ``sock`` under the calling thread's current deadline, if it has one."""
    deadline: Deadline | None = getattr(_current, "deadline", None)
    if deadline is not None:
        deadline.watch(sock)


def _refuse_when_expired() -> None:
    deadline: Deadline | None = getattr(_current, "deadline", None)
    if deadline is not None and deadline.expired:
        raise TimeoutError(f"the request's deadline ({deadline.seconds:g} s) has passed")


def pool_classes() -> dict[str, Any]:
    """urllib3's connection pools whose connections put their socket under the thread's deadline when they read
    an answer (a PoolManager's ``pool_classes_by_scheme``)."""
    import urllib3
    from urllib3.connection import HTTPConnection, HTTPSConnection

    class _Watched(HTTPConnection):
        def connect(self) -> None:
            _refuse_when_expired()  # urllib3's retries after the deadline open nothing and send nothing
            super().connect()

        def request(self, *args: Any, **kwargs: Any) -> None:
            _refuse_when_expired()
            super().request(*args, **kwargs)

        def getresponse(self) -> Any:
            watch(self.sock)
            return super().getresponse()

    class _WatchedTLS(_Watched, HTTPSConnection):
        pass

    class _Pool(urllib3.HTTPConnectionPool):
        ConnectionCls = _Watched

    class _TLSPool(urllib3.HTTPSConnectionPool):
        ConnectionCls = _WatchedTLS

    return {"http": _Pool, "https": _TLSPool}
