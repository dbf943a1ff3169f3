"""The conformance walk over real HTTP: the app served by the local stack's server (lakelet/stack/devserver.py),
called with http.client, in the shape of chalice.test.Client's ``http.request`` so one walk serves both. The test
client hands over the app's answer as the app built it; only a real server shows what goes on the wire (a default
Content-Type, a Content-Length)."""

from __future__ import annotations

import http.client
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from urllib.parse import urlsplit

from chalice import Chalice

from lakelet.stack.devserver import ApiServer


@dataclass(frozen=True)
class Answer:
    status_code: int
    headers: dict[str, str]
    body: bytes


class _Http:
    def __init__(self, base: str) -> None:
        self._netloc = urlsplit(base).netloc

    def request(self, method: str, url: str, headers: dict[str, str], body: bytes = b"") -> Answer:
        connection = http.client.HTTPConnection(self._netloc, timeout=60)
        try:
            connection.request(method, url, body=body or None, headers=headers)
            response = connection.getresponse()
            data = response.read()
            return Answer(response.status, dict(response.getheaders()), data)
        finally:
            connection.close()


class HttpClient:
    def __init__(self, base: str) -> None:
        self.http = _Http(base)


@contextmanager
def served(app: Chalice) -> Iterator[HttpClient]:
    server = ApiServer(app, port=0)
    server.start()
    try:
        yield HttpClient(server.url)
    finally:
        server.stop()
