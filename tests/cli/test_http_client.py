"""The CLI's own HTTP client (lakelet/commands/api.py) against a raw socket server that counts connections and
requests: keep-alive, a connection the server closed while idle, lost answers (sent again for a GET, never for
a POST), a refused port, and the error mapping of non-JSON answers."""

import contextlib
import socket
import threading
from collections.abc import Callable, Iterator

import pytest

from lakelet.commands.api import Api
from lakelet.commands.errors import CLIError
from lakelet.commands.settings import Settings

Behaviour = Callable[[int], str]  # request number -> "answer" | "answer-close" | "drop"


class RawServer:
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
        self.connections = 0
        self.closed = threading.Semaphore(0)  # released each time the server has closed a connection
        self.requests: list[str] = []
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

    def api(self) -> Api:
        return Api(Settings(f"http://127.0.0.1:{self.port}", "key", "secret", "test"))

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)  # wakes the accepting thread (close alone does not, on Linux)
        self.sock.close()


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
