"""The gateway's own HTTP request and response: what a Lambda event or a local HTTP server is translated into.

Nothing here knows Chalice, Lambda or a socket. Header names are lower-cased once, on the way in; a header sent
several times is joined with commas (as HTTP allows and as Lambda delivers it). The path stays percent-encoded
exactly as the client sent it, because the signature covers the encoded form.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from urllib.parse import unquote


def _lower_headers(pairs: Iterable[tuple[str, str]]) -> dict[str, str]:
    headers: dict[str, str] = {}
    for name, value in pairs:
        key = name.lower()
        headers[key] = f"{headers[key]},{value}" if key in headers else value
    return headers


def parse_query(raw: str) -> list[tuple[str, str]]:
    """``a=1&b&c=%2F`` -> [("a", "1"), ("b", ""), ("c", "/")], in order. ``+`` stays a plus sign: S3 clients
    percent-encode spaces, and the signature is computed over the percent-decoded values."""
    pairs: list[tuple[str, str]] = []
    for part in raw.split("&") if raw else ():
        if not part:
            continue
        name, _, value = part.partition("=")
        pairs.append((unquote(name), unquote(value)))
    return pairs


@dataclass(frozen=True, slots=True)
class Request:
    """One S3 request. Build it with :meth:`build`, which normalizes headers and splits the query."""

    method: str
    raw_path: str  # percent-encoded, without the query, e.g. "/repo/main/a%20b.txt"
    raw_query: str  # percent-encoded, without "?"
    headers: Mapping[str, str]  # lower-case names
    body: bytes = b""
    query: tuple[tuple[str, str], ...] = ()
    # The client's address as the deployment sees it (the Function URL's requestContext.http.sourceIp, the local
    # server's peer): what policy conditions on SourceIp test.
    source_ip: str = ""

    @classmethod
    def build(
        cls,
        method: str,
        raw_path: str,
        raw_query: str = "",
        headers: Mapping[str, str] | Iterable[tuple[str, str]] = (),
        body: bytes = b"",
        source_ip: str = "",
    ) -> Request:
        pairs = headers.items() if isinstance(headers, Mapping) else headers
        return cls(
            method=method.upper(),
            raw_path=raw_path or "/",
            raw_query=raw_query,
            headers=_lower_headers(pairs),
            body=body,
            query=tuple(parse_query(raw_query)),
            source_ip=source_ip,
        )

    def header(self, name: str, default: str = "") -> str:
        return self.headers.get(name.lower(), default)

    def has_param(self, name: str) -> bool:
        return any(key == name for key, _ in self.query)

    def param(self, name: str, default: str = "") -> str:
        return next((value for key, value in self.query if key == name), default)

    @property
    def path(self) -> str:
        """The decoded path."""
        return unquote(self.raw_path)


@dataclass(frozen=True, slots=True)
class Response:
    """One S3 response. For HEAD the body is dropped by whoever writes it out; Content-Length stays."""

    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
