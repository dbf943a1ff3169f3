"""The connection to the server: a small HTTP client of the CLI's own (wire.py over a socket for http://, the
standard library's http.client for https://; one keep-alive connection per thread) for the lakeFS routes the
commands speak, urllib3 pools for parallel transfers and presigned URLs, and the official ``lakefs_sdk`` only
for the rare commands that still use its models (``auth``, ``gc set-config|get-config|delete-config``), imported
inside them.

Importing ``lakefs_sdk`` (pydantic models for the whole API) or urllib3 costs more than a whole ordinary command;
``lakelet --help`` and ``lakelet repo list`` import neither (tests/cli/test_startup.py counts their modules).

Every call goes through ``raw``/``pages`` (or ``call`` for the SDK), which turn API errors and unreachable
servers into one-line ``CLIError``s naming the operation.
"""

from __future__ import annotations

import base64
import json
import threading
import urllib.parse
from collections.abc import Callable, Iterator, Mapping
from functools import cached_property
from typing import TYPE_CHECKING, Any, TypeVar

from lakelet.commands.errors import CLIError, from_status
from lakelet.commands.limits import ENV_DEADLINE, ENV_MAX_ANSWER, ENV_READ_TIMEOUT, limits_from
from lakelet.commands.settings import Settings

if TYPE_CHECKING:
    import socket

    import urllib3

    from lakelet.commands import wire
    from lakelet.commands.limits import Deadline

T = TypeVar("T")

# A request that failed before any answer is sent again, twice at most (urllib3's Retry(total=2) of the plain
# calls before this client): connection errors only, never an answer, never a redirect.
RETRIES = 2
# Methods a lost answer may be repeated for (urllib3's Retry.DEFAULT_ALLOWED_METHODS): a POST whose answer was
# lost is not sent twice.
IDEMPOTENT = frozenset({"GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE"})


def _overdue(settings: Settings, seconds: float) -> CLIError:
    return CLIError(
        f"the lakeFS server at {settings.endpoint} did not finish answering within {seconds:g} s",
        f"is it overloaded? allow longer with {ENV_DEADLINE}=SECONDS",
    )


def _unreachable(settings: Settings, error: Exception) -> CLIError:
    reason = getattr(error, "reason", None) or error
    if isinstance(reason, TimeoutError) or type(reason).__name__.endswith("TimeoutError"):
        return CLIError(
            f"the lakeFS server at {settings.endpoint} did not answer in time ({type(reason).__name__})",
            f"is it overloaded? wait longer with {ENV_READ_TIMEOUT}=SECONDS",
        )
    if type(reason).__name__ == "TooLarge":
        return CLIError(
            f"the answer of the lakeFS server at {settings.endpoint} is too large: {reason}",
            f"is server.endpoint_url a lakeFS server? (the bound is {ENV_MAX_ANSWER})",
        )
    return CLIError(
        f"cannot reach the lakeFS server at {settings.endpoint} ({type(reason).__name__})",
        "is it running? check server.endpoint_url with 'lakelet doctor'",
    )


def _dropped(sock: socket.socket) -> bool:
    """An idle kept-alive socket that is readable has been closed by the server (or holds bytes nobody asked
    for): either way it cannot carry the next request."""
    import select

    try:
        readable, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):
        return True
    return bool(readable)


class Api:
    """One server connection, built lazily: commands that fail on their arguments never connect. The pools
    keep as many connections as the largest useful --parallelism, so that none is dropped and reopened."""

    def __init__(self, settings: Settings, pool_size: int = 64) -> None:
        self.settings = settings
        self.pool_size = pool_size
        self._local = threading.local()
        parts = urllib.parse.urlsplit(settings.api_url)
        self._scheme, self._host, self._port = parts.scheme, parts.hostname or "", parts.port
        self._base_path = parts.path.rstrip("/")
        self._pooled = False

    @cached_property
    def limits(self) -> wire.Limits:
        import os

        return limits_from(os.environ)

    @cached_property
    def client(self) -> Any:
        import lakefs_sdk  # only the rare commands that use its models load it

        from lakelet.commands.limits import pool_classes

        conf = lakefs_sdk.Configuration(
            host=self.settings.api_url, username=self.settings.access_key_id, password=self.settings.secret_access_key
        )
        conf.connection_pool_maxsize = self.pool_size
        conf.retries = 1  # type: ignore[assignment]  # the SDK declares it None-only
        client = lakefs_sdk.ApiClient(conf)
        client.rest_client.pool_manager.pool_classes_by_scheme = pool_classes()  # calls under their deadline
        return client

    @cached_property
    def http(self) -> urllib3.PoolManager:
        """For transfers and S3 presigned URLs; retries only on connection errors, never on answers."""
        import urllib3

        from lakelet.commands.limits import pool_classes

        manager = urllib3.PoolManager(
            maxsize=self.pool_size,
            retries=urllib3.Retry(total=2, redirect=0, status=0, raise_on_status=False),
            timeout=urllib3.Timeout(connect=self.limits.connect, read=self.limits.read),
        )
        manager.pool_classes_by_scheme = pool_classes()  # API calls through it are under their deadline
        return manager

    def use_pool(self) -> None:
        """From now on, API calls too go through the urllib3 pool: a transfer already loaded urllib3 for its
        storage requests, and its threads share the pool's connections (as many as the largest --parallelism)
        rather than opening one each."""
        self._pooled = True

    @cached_property
    def auth_headers(self) -> dict[str, str]:
        """HTTP basic auth, as the SDK and urllib3.make_headers build it."""
        pair = f"{self.settings.access_key_id}:{self.settings.secret_access_key}".encode("latin-1")
        return {"authorization": "Basic " + base64.b64encode(pair).decode()}

    def __getattr__(self, name: str) -> Any:
        """``api.auth`` -> lakefs_sdk.AuthApi, ``api.repositories`` -> RepositoriesApi (rare commands only)."""
        classes = {"repositories": "RepositoriesApi", "auth": "AuthApi"}
        if name not in classes:
            raise AttributeError(name)
        import lakefs_sdk

        value = getattr(lakefs_sdk, classes[name])(self.client)
        setattr(self, name, value)
        return value

    def call(self, what: str, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """An SDK call (rare commands only)."""
        import urllib3
        from lakefs_sdk.exceptions import ApiException

        from lakelet.commands.limits import Deadline

        with Deadline(self.limits.total) as deadline:
            try:
                return fn(*args, **kwargs)
            except ApiException as e:
                if deadline.expired:
                    raise _overdue(self.settings, deadline.seconds) from None
                raise from_status(what, e.status or 0, e.body, e.reason or "") from None
            except urllib3.exceptions.HTTPError as e:
                if deadline.expired:
                    raise _overdue(self.settings, deadline.seconds) from None
                raise _unreachable(self.settings, e) from None

    def url(self, path: str, query: Mapping[str, Any] | None = None) -> str:
        url = self.settings.api_url + path
        if query:
            pairs = {
                k: ("true" if v is True else "false" if v is False else v) for k, v in query.items() if v is not None
            }
            url += "?" + urllib.parse.urlencode(pairs, doseq=True)
        return url

    def target(self, path: str, query: Mapping[str, Any] | None = None) -> str:
        """The request target (path and query) of an API route."""
        return self._base_path + self.url(path, query)[len(self.settings.api_url) :]

    def _connection(self) -> wire.Connection | wire.TLSConnection:
        conn: wire.Connection | wire.TLSConnection | None = getattr(self._local, "conn", None)
        if conn is not None and conn.sock is not None and _dropped(conn.sock):
            self._drop()  # closed by the server while idle (keep-alive timeout): open a new one, as urllib3 does
            conn = None
        if conn is None:
            from lakelet.commands import wire  # not at start: ``lakelet --help`` never connects

            if self._scheme == "https":
                import ssl

                # Certificates verified against the system's CAs, host name checked: urllib3's defaults.
                conn = wire.TLSConnection(self._host, self._port, ssl.create_default_context(), self.limits)
            else:
                conn = wire.Connection(self._host, self._port, self.limits)
            self._local.conn = conn
        return conn

    def _drop(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    def send(self, method: str, target: str, body: bytes | None, headers: Mapping[str, str]) -> tuple[int, str, bytes]:
        """One request on this thread's keep-alive connection: (status, reason, body). Connection errors are
        retried (RETRIES); an answer lost after the request was sent only for idempotent methods, or when a
        kept-alive connection turned out closed by the server before it read anything."""
        from lakelet.commands.limits import Deadline

        with Deadline(self.limits.total) as deadline:
            try:
                return self._send(method, target, body, headers, deadline)
            except CLIError:
                if deadline.expired:
                    raise _overdue(self.settings, deadline.seconds) from None
                raise

    def _send(
        self, method: str, target: str, body: bytes | None, headers: Mapping[str, str], deadline: Deadline
    ) -> tuple[int, str, bytes]:
        from lakelet.commands import wire

        last: Exception | None = None
        for _ in range(RETRIES + 1):
            if deadline.expired:
                break  # no try after the deadline: it would only be cut off at once
            conn = self._connection()
            reused = conn.sock is not None
            deadline.watch(conn.sock)
            try:
                conn.request(method, target, body, headers)
            except OSError as e:  # refused, reset, DNS, TLS: nothing reached the server
                self._drop()
                last = e
                continue
            deadline.watch(conn.sock)
            try:
                answer = conn.answer(method)
            except (wire.BadAnswer, OSError) as e:
                self._drop()
                last = e
                if deadline.expired:
                    break  # the sockets were shut down: the request's time is up
                if isinstance(e, (wire.TooLarge, TimeoutError)):
                    break  # asking again would wait as long, or read as much, once more
                if method in IDEMPOTENT or (reused and isinstance(e, wire.ClosedBeforeAnswer)):
                    continue
                raise _unreachable(self.settings, e) from None
            if answer.will_close:
                self._drop()
            return answer.status, answer.reason, answer.body
        assert last is not None
        raise _unreachable(self.settings, last) from None

    def _send_pooled(
        self, method: str, url: str, body: bytes | None, headers: Mapping[str, str]
    ) -> tuple[int, str, bytes]:
        import urllib3

        from lakelet.commands import wire
        from lakelet.commands.limits import Deadline

        with Deadline(self.limits.total) as deadline:
            try:
                response = self.http.request(
                    method, url, body=body, headers=dict(headers), redirect=False, preload_content=False
                )
                data = response.read(self.limits.max_body + 1)
            except urllib3.exceptions.HTTPError as e:
                if deadline.expired:
                    raise _overdue(self.settings, deadline.seconds) from None
                raise _unreachable(self.settings, e) from None
        if deadline.expired:  # shut down mid-body: what was read is cut short
            response.close()
            raise _overdue(self.settings, deadline.seconds)
        if len(data) > self.limits.max_body:
            response.close()  # the rest is never read: the connection cannot carry another request
            raise _unreachable(self.settings, wire.TooLarge(f"the answer holds more than {self.limits.max_body} bytes"))
        response.release_conn()
        return response.status, response.reason or "", data

    def raw(
        self,
        what: str,
        method: str,
        path: str,
        query: Mapping[str, Any] | None = None,
        body: Any = None,
        ok: tuple[int, ...] = (200, 201, 204),
        headers: Mapping[str, str] | None = None,
        text: bool = False,
    ) -> tuple[int, Any]:
        """An API call; answers outside ``ok`` raise. Returns (status, parsed JSON or None), or with ``text``
        (status, the body as text)."""
        all_headers = {**self.auth_headers, "Accept": "application/json", **(headers or {})}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            all_headers["Content-Type"] = "application/json"
        if self._pooled:
            status, reason, payload = self._send_pooled(method, self.url(path, query), data, all_headers)
        else:
            status, reason, payload = self.send(method, self.target(path, query), data, all_headers)
        parsed = None
        if text and status in ok:
            return status, payload.decode(errors="replace")
        if payload:
            try:
                parsed = json.loads(payload)
            except ValueError:
                parsed = None
        if status not in ok:
            raise from_status(what, status, payload, reason)
        return status, parsed

    def get(self, what: str, path: str, query: Mapping[str, Any] | None = None) -> Any:
        """A GET's parsed answer."""
        return self.raw(what, "GET", path, query)[1]

    def pages(
        self,
        what: str,
        path: str,
        query: Mapping[str, Any] | None = None,
        *,
        after: str = "",
        amount: int = 1000,
        limit: int | None = None,
    ) -> Iterator[dict[str, Any]]:
        """Every result of a paginated listing, following ``pagination.next_offset``; at most ``limit``."""
        seen = 0
        if limit is not None:
            amount = min(amount, limit)  # --amount N asks the server for N, not a full page
        while True:
            _, page = self.raw(what, "GET", path, {**(query or {}), "after": after or "", "amount": amount})
            for item in (page or {}).get("results") or []:
                yield item
                seen += 1
                if limit is not None and seen >= limit:
                    return
            pagination = (page or {}).get("pagination") or {}
            if not pagination.get("has_more"):
                return
            after = pagination["next_offset"]

    def raw_pages(self, what: str, path: str, query: Mapping[str, Any] | None = None) -> Iterator[dict[str, Any]]:
        """Every result of a paginated listing (the transfer commands' name for ``pages``)."""
        return self.pages(what, path, query)

    def sdk_pages(
        self,
        what: str,
        fn: Callable[..., Any],
        *args: Any,
        amount: int = 1000,
        after: str = "",
        limit: int | None = None,
        **kwargs: Any,
    ) -> Iterator[Any]:
        """Every result of a paginated SDK listing (rare commands only), after ``after``, at most ``limit``."""
        seen = 0
        if limit is not None:
            amount = min(amount, limit)
        while True:
            page = self.call(what, fn, *args, after=after, amount=amount, **kwargs)
            for item in page.results:
                yield item
                seen += 1
                if limit is not None and seen >= limit:
                    return
            if not page.pagination.has_more:
                return
            after = page.pagination.next_offset


def q(value: str) -> str:
    """A path segment, percent-encoded."""
    return urllib.parse.quote(value, safe="")
