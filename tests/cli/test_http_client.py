"""The CLI's own HTTP client (lakelet/commands/api.py) against a raw socket server that counts connections and
requests: keep-alive, a connection the server closed while idle, lost answers (sent again for a GET, never for
a POST), a refused port, and the error mapping of non-JSON answers."""

import contextlib
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from lakelet.commands.api import Api
from lakelet.commands.errors import CLIError
from lakelet.commands.settings import Settings
from tests.clocks import ENDED_WITHIN_SECONDS, raised_within

Behaviour = Callable[[int], str]  # request number -> "answer" | "answer-close" | "drop"


class _Listener:
    """A server socket on a free local port, its connections accepted on a thread and handed to ``_accepted``."""

    def __init__(self) -> None:
        self.connections = 0
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            self._accepted(conn)

    def _accepted(self, conn: socket.socket) -> None:
        raise NotImplementedError

    def api(self) -> Api:
        return Api(Settings(f"http://127.0.0.1:{self.port}", "key", "secret", "test"))

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)  # wakes the accepting thread (close alone does not, on Linux)
        self.sock.close()


class RawServer(_Listener):
    """HTTP/1.1 over a plain socket: each request is answered, answered then the connection closed without a
    'Connection: close' header (an idle keep-alive timeout), or read and dropped with no answer."""

    def __init__(
        self,
        behaviour: Behaviour,
        body: bytes = b'{"ok": true}',
        status: str = "200 OK",
        content_type: str = "application/json",
    ) -> None:
        self.behaviour, self.body, self.status, self.content_type = behaviour, body, status, content_type
        self.closed = threading.Semaphore(0)  # released each time the server has closed a connection
        self.requests: list[str] = []
        super().__init__()

    def _accepted(self, conn: socket.socket) -> None:
        threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn: socket.socket) -> None:
        try:
            self._exchange(conn)
        finally:
            conn.close()
            self.closed.release()

    def _exchange(self, conn: socket.socket) -> None:
        buffer = b""
        while True:
            while b"\r\n\r\n" not in buffer:
                chunk = conn.recv(65536)
                if not chunk:
                    return
                buffer += chunk
            head, _, buffer = buffer.partition(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            while len(buffer) < length:
                buffer += conn.recv(65536)
            buffer = buffer[length:]
            self.requests.append(head.split(b"\r\n")[0].decode())
            action = self.behaviour(len(self.requests))
            if action == "drop":
                return
            conn.sendall(
                f"HTTP/1.1 {self.status}\r\nContent-Type: {self.content_type}\r\n"
                f"Content-Length: {len(self.body)}\r\n\r\n".encode()
                + self.body
            )
            if action == "answer-close":
                return


@pytest.fixture
def servers() -> Iterator[list[RawServer]]:
    made: list[RawServer] = []
    yield made
    for s in made:
        s.close()


def test_keep_alive_one_connection_for_many_calls(servers: list[RawServer]) -> None:
    server = RawServer(lambda n: "answer")
    servers.append(server)
    api = server.api()
    for _ in range(5):
        assert api.get("read", "/x") == {"ok": True}
    assert server.connections == 1 and len(server.requests) == 5
    assert server.requests[0] == "GET /api/v1/x HTTP/1.1"


def test_connection_closed_while_idle_is_reopened_even_for_a_post(servers: list[RawServer]) -> None:
    server = RawServer(lambda n: "answer-close")
    servers.append(server)
    api = server.api()
    assert api.raw("create", "POST", "/x", body={"a": 1}) == (200, {"ok": True})
    assert server.closed.acquire(timeout=10)  # the server's idle close has happened before the next call
    assert api.raw("create", "POST", "/x", body={"a": 2}) == (200, {"ok": True})
    assert server.connections == 2 and len(server.requests) == 2


def test_lost_answer_sent_again_for_a_get_never_for_a_post(servers: list[RawServer]) -> None:
    get_server = RawServer(lambda n: "drop" if n < 3 else "answer")
    servers.append(get_server)
    assert get_server.api().get("read", "/x") == {"ok": True}
    assert len(get_server.requests) == 3  # the first try and two retries

    post_server = RawServer(lambda n: "drop")
    servers.append(post_server)
    with pytest.raises(CLIError) as failed:
        post_server.api().raw("merge", "POST", "/x", body={})
    assert failed.value.message.startswith(f"cannot reach the lakeFS server at http://127.0.0.1:{post_server.port}")
    assert len(post_server.requests) == 1  # a POST whose answer was lost is not sent twice


def test_refused_port_is_one_line() -> None:
    with socket.create_server(("127.0.0.1", 0)) as probe:
        port = probe.getsockname()[1]  # free now, and nobody listens on it once closed
    api = Api(Settings(f"http://127.0.0.1:{port}", "key", "secret", "test"))
    with pytest.raises(CLIError) as failed:
        api.get("list repositories", "/repositories")
    assert failed.value.line() == (
        f"cannot reach the lakeFS server at http://127.0.0.1:{port} "
        "(ConnectionRefusedError): is it running? check server.endpoint_url with "
        "'lakelet doctor'"
    )


def test_answers_mapped_as_before(servers: list[RawServer]) -> None:
    html = RawServer(lambda n: "answer", b"<html>bad gateway</html>\n", "502 Bad Gateway", "text/html")
    servers.append(html)
    with pytest.raises(CLIError) as failed:
        html.api().get("list repositories", "/repositories")
    assert failed.value.line() == (
        "list repositories failed (502 <html>bad gateway</html>): retry, or run with --debug"
    )
    text = RawServer(lambda n: "answer", b"0123abcd", "201 Created", "text/html")
    servers.append(text)
    assert text.api().raw("create branch", "POST", "/b", body={}, text=True) == (201, "0123abcd")
    assert text.requests == ["POST /api/v1/b HTTP/1.1"]


def test_basic_auth_and_path_prefix(servers: list[RawServer]) -> None:
    seen: list[bytes] = []
    server = RawServer(lambda n: "answer")
    servers.append(server)
    api = Api(Settings(f"http://127.0.0.1:{server.port}/lakefs", "AKIA", "s3cr:t", "test"))
    original = api.send

    def spy(method: str, target: str, body: bytes | None, headers: dict[str, str]) -> tuple[int, str, bytes]:
        seen.append(headers["authorization"].encode())
        return original(method, target, body, headers)

    api.send = spy  # type: ignore[method-assign]
    api.get("list", "/repositories", {"after": "a b", "amount": 2, "flag": True, "none": None})
    assert server.requests == ["GET /lakefs/api/v1/repositories?after=a+b&amount=2&flag=true HTTP/1.1"]
    assert seen == [b"Basic QUtJQTpzM2NyOnQ="]  # base64("AKIA:s3cr:t")


class ScriptedServer(_Listener):
    """Answers the n-th request on any connection with the n-th scripted bytes, then closes the connection when
    the script says so; keeps each request's head and body as received."""

    def __init__(self, script: list[tuple[bytes, bool]]) -> None:
        self.script = script
        self.heads: list[list[str]] = []
        self.bodies: list[bytes] = []
        super().__init__()

    def _accepted(self, conn: socket.socket) -> None:
        with conn, conn.makefile("rb") as reader:
            while len(self.heads) < len(self.script):
                head = []
                while (line := reader.readline()) not in (b"\r\n", b""):
                    head.append(line.decode().rstrip("\r\n"))
                if not head:
                    break
                length = next((int(h.split(":")[1]) for h in head if h.lower().startswith("content-length")), 0)
                self.bodies.append(reader.read(length))
                self.heads.append(head)
                answer, close = self.script[len(self.heads) - 1]
                conn.sendall(answer)
                if close:
                    break


@pytest.fixture
def scripted() -> Iterator[Callable[[list[tuple[bytes, bool]]], ScriptedServer]]:
    made: list[ScriptedServer] = []

    def make(script: list[tuple[bytes, bool]]) -> ScriptedServer:
        made.append(ScriptedServer(script))
        return made[-1]

    yield make
    for s in made:
        s.close()


def test_answers_framed_as_http_client_frames_them(
    scripted: Callable[[list[tuple[bytes, bool]]], ScriptedServer],
) -> None:
    # Chunked (with an extension and a trailer), an interim 100 before the answer, a 204 and a HEAD with no body,
    # all on one kept-alive connection; then an HTTP/1.0 answer, one with no length and one whose length is no
    # number (ignored, as http.client does), each read to the close.
    server = scripted(
        [
            (
                b'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\n{"a":\r\n3\r\n 1}\r\n0\r\nT: v\r\n\r\n',
                False,
            ),
            (b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\n{}", False),
            (b"HTTP/1.1 204 No Content\r\n\r\n", False),
            (b"HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n", False),
            (b'HTTP/1.0 200 OK\r\nContent-Length: 8\r\n\r\n{"b": 2}', True),
            (b'HTTP/1.1 200 OK\r\n\r\n{"c": 3}', True),
            (b'HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n{"e": 5}', True),
            (b'HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\n{"d": 4}', False),
        ]
    )
    api = server.api()
    assert api.get("read", "/chunked") == {"a": 1}
    assert api.raw("create", "POST", "/created", body={"x": 1}) == (201, {})
    assert api.raw("delete", "DELETE", "/gone") == (204, None)
    assert api.send("HEAD", "/api/v1/head", None, {}) == (200, "OK", b"")
    assert server.connections == 1
    assert api.get("read", "/old") == {"b": 2}
    assert api.get("read", "/to-the-close") == {"c": 3}
    assert api.get("read", "/bad-length") == {"e": 5}
    assert api.get("read", "/after") == {"d": 4}
    assert server.connections == 4  # the HTTP/1.0 answer and those without a length closed theirs
    post = server.heads[1]
    assert post[0] == "POST /api/v1/created HTTP/1.1"
    assert f"Host: 127.0.0.1:{server.port}" in post and "Accept-Encoding: identity" in post
    assert "Content-Length: 8" in post and "Content-Type: application/json" in post
    assert server.bodies[1] == b'{"x": 1}'
    assert "Content-Length: 0" not in server.heads[0] and "Content-Length: 0" not in server.heads[2]


def test_a_post_without_a_body_says_so(scripted: Callable[[list[tuple[bytes, bool]]], ScriptedServer]) -> None:
    server = scripted([(b"HTTP/1.1 204 No Content\r\n\r\n", False)])
    assert server.api().raw("reset", "PUT", "/x") == (204, None)
    assert "Content-Length: 0" in server.heads[0]  # as http.client sends it for PUT, POST and PATCH


@pytest.mark.parametrize(
    "answer",
    [
        b"garbage\r\n\r\n",
        b"HTTP/1.1 2000 Nope\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
    ],
)
def test_a_broken_answer_is_one_line_never_a_traceback(
    scripted: Callable[[list[tuple[bytes, bool]]], ScriptedServer], answer: bytes
) -> None:
    server = scripted([(answer, True)])
    with pytest.raises(CLIError) as failed:
        server.api().raw("merge", "POST", "/x", body={})
    assert failed.value.line().startswith(f"cannot reach the lakeFS server at http://127.0.0.1:{server.port} (")
    assert len(server.heads) == 1  # a POST is never sent twice


class SilentServer(_Listener):
    """Accepts connections, reads what comes and never answers."""

    def __init__(self) -> None:
        self.held: list[socket.socket] = []
        super().__init__()

    def _accepted(self, conn: socket.socket) -> None:
        self.held.append(conn)


class StreamingServer(_Listener):
    """Answers every request with an endless body: chunked, or with no length (read to the close), counting
    what it sent; it stops when the client closes."""

    def __init__(self, chunked: bool) -> None:
        self.chunked, self.sent = chunked, 0
        super().__init__()

    def _accepted(self, conn: socket.socket) -> None:
        threading.Thread(target=self._stream, args=(conn,), daemon=True).start()

    def _stream(self, conn: socket.socket) -> None:
        block = b"x" * 65536
        head = b"Transfer-Encoding: chunked\r\n" if self.chunked else b""
        with conn, contextlib.suppress(OSError):
            conn.recv(65536)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" + head + b"\r\n")
            while self.sent < 1024 * 1024 * 1024:
                conn.sendall(b"10000\r\n" + block + b"\r\n" if self.chunked else block)
                self.sent += len(block)


def test_a_server_that_never_answers_ends_in_a_one_line_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LAKELET_HTTP_TIMEOUT", "0.3")
    server = SilentServer()
    try:
        for pooled in (False, True):  # the CLI's own client, then the urllib3 pool the transfers use
            api = server.api()
            if pooled:
                api.use_pool()
            with pytest.raises(CLIError) as failed:
                api.get("list", "/repositories")
            assert "did not answer in time" in failed.value.line()
            assert "LAKELET_HTTP_TIMEOUT" in str(failed.value.hint)
    finally:
        server.close()


@pytest.mark.parametrize("chunked", [True, False])
@pytest.mark.parametrize("pooled", [False, True])
def test_a_json_answer_is_read_up_to_its_bound(monkeypatch: pytest.MonkeyPatch, chunked: bool, pooled: bool) -> None:
    monkeypatch.setenv("LAKELET_HTTP_MAX_ANSWER_BYTES", str(1024 * 1024))
    server = StreamingServer(chunked)
    try:
        api = server.api()
        if pooled:
            api.use_pool()
        with pytest.raises(CLIError) as failed:
            api.get("list", "/repositories")
        assert "too large" in failed.value.line()
        assert server.connections == 1  # not asked again
        assert server.sent < 64 * 1024 * 1024  # the client stopped reading long before the server stopped
    finally:
        server.close()


def test_limits_come_from_the_environment_and_bad_ones_are_refused() -> None:
    from lakelet.commands.limits import limits_from

    limits = limits_from({"LAKELET_HTTP_TIMEOUT": "30", "LAKELET_HTTP_CONNECT_TIMEOUT": "2.5"})
    assert (limits.read, limits.connect) == (30.0, 2.5) and limits.max_body == 64 * 1024 * 1024
    assert limits.total == 600.0 and limits_from({"LAKELET_HTTP_DEADLINE": "45"}).total == 45.0
    for bad in ("0", "-1", "soon"):
        for name in ("LAKELET_HTTP_TIMEOUT", "LAKELET_HTTP_DEADLINE"):
            with pytest.raises(CLIError):
                limits_from({name: bad})


class TricklingServer(_Listener):
    """Answers every request with headers promising a body, then sends one byte of it every ``every`` seconds:
    each read gets its byte well within any read timeout, and the answer never ends."""

    def __init__(self, every: float = 0.5, in_head: bool = False) -> None:
        self.every, self.in_head, self.sent = every, in_head, 0
        self.stop = threading.Event()
        super().__init__()

    def _accepted(self, conn: socket.socket) -> None:
        threading.Thread(target=self._trickle, args=(conn,), daemon=True).start()

    def _trickle(self, conn: socket.socket) -> None:
        with conn, contextlib.suppress(OSError):
            conn.recv(65536)
            head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n"
            if not self.in_head:
                conn.sendall(head)
                head = b""
            for byte in head or b" " * 100000:  # a header line trickled byte by byte, or the body
                if self.stop.wait(self.every):
                    return
                conn.sendall(bytes([byte]))
                self.sent += 1

    def close(self) -> None:
        self.stop.set()
        super().close()


@pytest.mark.parametrize("in_head", [False, True])
@pytest.mark.parametrize("pooled", [False, True])
def test_a_trickling_server_is_cut_off_at_the_total_deadline(
    monkeypatch: pytest.MonkeyPatch, pooled: bool, in_head: bool
) -> None:
    # A byte every 0.5 s never lets the 5 s read timeout fire: only the total deadline (1.5 s) ends the request.
    monkeypatch.setenv("LAKELET_HTTP_TIMEOUT", "5")
    monkeypatch.setenv("LAKELET_HTTP_DEADLINE", "1.5")
    server = TricklingServer(in_head=in_head)
    try:
        api = server.api()
        if pooled:
            api.use_pool()
        started = time.monotonic()
        # The server trickles for hours: a request the deadline did not cut fails here instead of hanging.
        failed = raised_within(lambda: api.get("list", "/repositories"), ENDED_WITHIN_SECONDS)
        took = time.monotonic() - started
        assert isinstance(failed, CLIError), failed
        assert took > 1.4, took  # not before the deadline
        assert "did not finish answering within 1.5 s" in failed.message
        assert "LAKELET_HTTP_DEADLINE" in failed.hint
        assert server.connections == 1 and server.sent >= 2  # bytes kept coming; the request was not sent again
    finally:
        server.close()


def test_the_sdk_commands_have_the_deadline_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LAKELET_HTTP_TIMEOUT", "5")
    monkeypatch.setenv("LAKELET_HTTP_DEADLINE", "1")
    server = TricklingServer()
    try:
        api = server.api()
        started = time.monotonic()
        with pytest.raises(CLIError) as failed:
            api.call("read GC rules of r", api.repositories.get_gc_rules, "r")
        assert time.monotonic() - started < 4.0
        assert "did not finish answering within 1 s" in failed.value.message
    finally:
        server.close()


def test_an_answer_in_time_is_not_cut(servers: list[RawServer], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LAKELET_HTTP_DEADLINE", "0.5")
    server = RawServer(lambda n: "answer")
    servers.append(server)
    api = server.api()
    for _ in range(3):  # one kept-alive connection outlives every request's deadline
        assert api.get("read", "/x") == {"ok": True}
        time.sleep(0.3)
    assert server.connections == 1


@pytest.mark.parametrize("command", [["repo", "list"], ["gc", "get-config", "lakefs://r"]])
def test_the_cli_gives_up_on_a_trickling_server_at_its_deadline(run: Callable[..., Any], command: list[str]) -> None:
    server = TricklingServer()
    env = {
        "LAKECTL_SERVER_ENDPOINT_URL": f"http://127.0.0.1:{server.port}",
        "LAKECTL_CREDENTIALS_ACCESS_KEY_ID": "key",
        "LAKECTL_CREDENTIALS_SECRET_ACCESS_KEY": "secret",
        "LAKELET_HTTP_TIMEOUT": "5",
        "LAKELET_HTTP_DEADLINE": "1",
    }
    try:
        started = time.monotonic()
        result = run(*command, env=env)
        assert time.monotonic() - started < 4.0
        assert result.exit_code == 1
        assert "did not finish answering within 1 s" in result.stderr and "LAKELET_HTTP_DEADLINE" in result.stderr
    finally:
        server.close()
