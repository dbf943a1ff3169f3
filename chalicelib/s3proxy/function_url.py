"""The gateway as a Lambda function behind a Function URL (payload format 2.0, BUFFERED).

Why a Function URL and not a Chalice route: S3 paths are arbitrary (``/{repo}/{ref}/{any/depth/key}``) and
Chalice routes cannot express a greedy path that works locally too; and an HTTP API hands Lambda the path
percent-decoded (a key containing ``%2F`` or ``?`` would be mangled, and the signature covers the encoded path),
whereas a Function URL delivers ``rawPath`` and ``rawQueryString`` exactly as sent.

A binary body arrives base64-encoded inside the 6 MB invocation payload, and the response goes back the same
way; hence MAX_RESPONSE_BYTES (see the README, "S3 gateway", for what clients do about it).
"""

from __future__ import annotations

import base64
import threading
from collections.abc import Mapping
from typing import Any

from .gateway import S3Gateway
from .model import Request, Response

__all__ = ["handle_event"]

# Lambda returns at most 6 MB (6,291,556 bytes) of JSON; 4 MiB of body is 5.6 MB once base64-encoded.
MAX_RESPONSE_BYTES = 4 * 1024 * 1024

_lock = threading.Lock()
_built: tuple[object, S3Gateway] | None = None


def request_from_event(event: Mapping[str, Any]) -> Request:
    http = event.get("requestContext", {}).get("http", {})
    body = event.get("body") or ""
    data = base64.b64decode(body) if event.get("isBase64Encoded") else body.encode("utf-8")
    return Request.build(
        method=str(http.get("method", "GET")),
        raw_path=str(event.get("rawPath") or "/"),
        raw_query=str(event.get("rawQueryString") or ""),
        headers={str(k): str(v) for k, v in (event.get("headers") or {}).items()},
        body=data,
        source_ip=str(http.get("sourceIp") or ""),
    )


def event_response(response: Response) -> dict[str, Any]:
    return {
        "statusCode": response.status,
        "headers": dict(response.headers),
        "body": base64.b64encode(response.body).decode("ascii"),
        "isBase64Encoded": True,
    }


def _gateway() -> S3Gateway:
    """One gateway per warm container, rebuilt if the services are swapped (tests do)."""
    global _built
    from chalicelib.wiring import get_services

    services = get_services()
    with _lock:
        if _built is None or _built[0] is not services:
            _built = (services, S3Gateway.from_services(services, MAX_RESPONSE_BYTES))
        return _built[1]


def handle_event(event: Mapping[str, Any]) -> dict[str, Any]:
    """The Lambda handler's body: event in, Function URL response out."""
    return event_response(_gateway().handle(request_from_event(event)))
