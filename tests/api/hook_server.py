"""A local webhook server on 127.0.0.1 for hook tests: it records every request and answers by path."""

from __future__ import annotations

import json
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass
class Received:
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: dict[str, Any]


@dataclass
class HookServer:
    """``answers``: path -> (status, body, delay seconds). Unknown paths answer 200."""

    url: str
    received: list[Received] = field(default_factory=list)
    answers: dict[str, tuple[int, str, float]] = field(default_factory=dict)

    def on(self, path: str, status: int, body: str = "", delay: float = 0.0) -> str:
        self.answers[path] = (status, body, delay)
        return self.url + path

    def bodies(self, path: str) -> list[dict[str, Any]]:
        return [r.body for r in self.received if r.path == path]


def start_hook_server() -> tuple[HookServer, ThreadingHTTPServer]:
    state = HookServer("")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            parts = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            state.received.append(
                Received(parts.path, parse_qs(parts.query), dict(self.headers.items()), json.loads(raw or b"{}"))
            )
            status, body, delay = state.answers.get(parts.path, (200, "ok", 0.0))
            if delay:
                time.sleep(delay)
            data = body.encode()
            try:
                self.send_response(status)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except OSError:
                pass  # the client gave up (a timeout test)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return state, server


@dataclass
class Raw:
    """A raw TCP server on loopback: ``answer`` bytes first, then ``drip`` one byte every ``every`` seconds."""

    answer: bytes
    drip: bool = False
    every: float = 0.1
    sent: int = 0
    requests: int = 0
    done: threading.Event = field(default_factory=threading.Event)
    port: int = 0

    def start(self) -> Raw:
        listener = socket.create_server(("127.0.0.1", 0))
        self.port = listener.getsockname()[1]
        self._listener = listener
        threading.Thread(target=self._serve, daemon=True).start()
        return self

    def _serve(self) -> None:
        while not self.done.is_set():
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            self.requests += 1
            conn.recv(65536)
            try:
                conn.sendall(self.answer)
                while self.drip and not self.done.is_set():
                    conn.sendall(b"x")
                    self.sent += 1
                    time.sleep(self.every)
            except OSError:
                pass
            finally:
                conn.close()

    def stop(self) -> None:
        self.done.set()
        self._listener.close()
