"""Webhook hooks: a POST of the event's JSON to the hook's ``url`` with its ``query_params`` and ``headers``; any
answer but a 2xx fails the hook, as in lakeFS. No retries: a pre-hook's time is the caller's time.

Where it goes: the name is resolved once, every address it resolves to is checked (destinations.py), and the
connection is made to the checked address itself (TLS still verifies the certificate against the name), so DNS
cannot answer differently between the check and the connect. Redirects are never followed; no proxy is used.

How long it takes: ``timeout_seconds`` is a deadline for the whole exchange (resolve, connect, send, headers, the
kept part of the body), whatever the peer does. A socket timeout bounds each read only, so a server dripping a
byte every 1.5 s once held a commit 75 s under ``timeout: 2s``; here a timer shuts the socket at the deadline, which
ends any read in progress.
"""

from __future__ import annotations

import contextlib
import http.client
import socket
import ssl
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any
from urllib.parse import urlencode, urlsplit, urlunsplit

from chalicelib.graveler.actions import HookOutcome, HookSpec

from .destinations import Destinations

# How much of an answer is kept as the hook's output.
MAX_OUTPUT_BYTES = 64 * 1024
# getaddrinfo has no timeout of its own: it runs on these threads and is waited for until the deadline.
_RESOLVERS = ThreadPoolExecutor(max_workers=4, thread_name_prefix="webhook-dns")

Resolver = Callable[[str, int], list[str]]


class Refused(Exception):
    """The destination is not one webhooks may reach."""


class Expired(Exception):
    """The deadline passed."""


def resolve(host: str, port: int) -> list[str]:
    """The addresses ``host`` resolves to for TCP, in the resolver's order."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


class _Pinned(http.client.HTTPConnection):
    """An HTTP connection to a given address; the Host header still names the URL's host."""

    def __init__(self, host: str, port: int, address: str, timeout: float) -> None:
        super().__init__(host, port, timeout=timeout)
        self.address = address

    def connect(self) -> None:
        self.sock = socket.create_connection((self.address, self.port), self.timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class _PinnedTLS(_Pinned):
    default_port = 443  # so the Host header of https://host/ carries no ":443"

    def __init__(self, host: str, port: int, address: str, timeout: float, context: ssl.SSLContext) -> None:
        super().__init__(host, port, address, timeout)
        self.context = context

    def connect(self) -> None:
        super().connect()
        self.sock = self.context.wrap_socket(self.sock, server_hostname=self.host)


class WebhookHooks:
    """``destinations``: where webhooks may go (None: public addresses only). ``resolver`` and ``clock``: for
    tests (a resolver that answers one address, then another; a clock that tells the deadline)."""

    def __init__(
        self,
        destinations: Destinations | None = None,
        resolver: Resolver = resolve,
        clock: Callable[[], float] = time.monotonic,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        self.destinations = destinations or Destinations()
        self.resolver = resolver
        self.clock = clock
        self.tls = tls or ssl.create_default_context()

    def invoke(self, hook: HookSpec, payload: bytes, timeout_seconds: float) -> HookOutcome:
        url = with_query(str(hook.properties["url"]), hook.properties.get("query_params") or {})
        headers = {
            "Content-Type": "application/json",
            **{str(k): str(v) for k, v in (hook.properties.get("headers") or {}).items()},
        }
        request = f"Request:\nPOST {url}\n{payload.decode('utf-8')}\n\n"
        deadline = self.clock() + timeout_seconds
        try:
            status, body = self._exchange(url, headers, payload, deadline)
        except Refused as e:
            return HookOutcome(False, request + f"Response:\nnot sent: {e}\n", f"webhook destination refused: {e}")
        except Expired:
            return HookOutcome(
                False,
                request + f"Response:\nno answer within {timeout_seconds:.3g}s\n",
                f"webhook request failed: timed out after {timeout_seconds:.3g}s",
            )
        except (OSError, http.client.HTTPException, ValueError) as e:
            return HookOutcome(
                False, request + f"Response:\n{type(e).__name__}: {e}\n", f"webhook request failed: {type(e).__name__}"
            )
        text = body.decode("utf-8", errors="replace")
        output = request + f"Response:\n{status}\n{text}\n"
        if 200 <= status < 300:
            return HookOutcome(True, output)
        return HookOutcome(False, output, f"webhook request failed (status code: {status})")

    def _left(self, deadline: float) -> float:
        left = deadline - self.clock()
        if left <= 0:
            raise Expired()
        return left

    def _addresses(self, host: str, port: int, deadline: float) -> list[str]:
        """Every address of ``host``, each allowed; Refused names the first that is not."""
        future = _RESOLVERS.submit(self.resolver, host, port)
        try:
            addresses = future.result(timeout=self._left(deadline))
        except FutureTimeout:
            raise Expired() from None
        except OSError as e:
            raise Refused(f"{host} does not resolve ({e})") from None
        if not addresses:
            raise Refused(f"{host} does not resolve")
        for address in addresses:
            why = self.destinations.refusal(address, port)
            if why:
                shown = address if address == host else f"{host} resolves to {address}, which"
                raise Refused(why if address == host else f"{shown} {why.split(' ', 1)[1]}")
        return addresses

    def _exchange(self, url: str, headers: dict[str, str], payload: bytes, deadline: float) -> tuple[int, bytes]:
        parts = urlsplit(url)
        host = parts.hostname or ""
        tls = parts.scheme == "https"
        port = parts.port or (443 if tls else 80)
        address = self._addresses(host, port, deadline)[0]
        left = self._left(deadline)
        conn: _Pinned = _PinnedTLS(host, port, address, left, self.tls) if tls else _Pinned(host, port, address, left)
        expired = threading.Event()

        def cut() -> None:
            # Shutting the socket down ends a read or a connect in progress in the other thread at once.
            expired.set()
            sock: Any = conn.sock
            if sock is not None:
                with contextlib.suppress(OSError):
                    socket.socket.shutdown(sock, socket.SHUT_RDWR)

        timer = threading.Timer(left, cut)
        timer.daemon = True
        timer.start()
        try:
            target = urlunsplit(("", "", parts.path or "/", parts.query, ""))
            conn.request("POST", target, body=payload, headers=headers)
            answer = conn.getresponse()
            body = answer.read(MAX_OUTPUT_BYTES)
            status = answer.status
        except (OSError, http.client.HTTPException):
            if expired.is_set() or self.clock() >= deadline:
                raise Expired() from None
            raise
        finally:
            timer.cancel()
            conn.close()
        if expired.is_set():
            raise Expired()
        return status, body


def with_query(url: str, params: dict[str, Any]) -> str:
    """The url with the hook's query parameters added to those it already has (a list value repeats its name)."""
    if not params:
        return url
    parts = urlsplit(url)
    pairs: list[tuple[str, str]] = []
    for name, value in params.items():
        for v in value if isinstance(value, list) else [value]:
            pairs.append((str(name), str(v).lower() if isinstance(v, bool) else str(v)))
    query = "&".join(q for q in (parts.query, urlencode(pairs)) if q)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, parts.fragment))
