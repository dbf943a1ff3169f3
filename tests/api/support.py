"""Helpers of the API tests: an HTTP client for /api/v1 with credentials, and conformance checks."""

from __future__ import annotations

import base64
import contextlib
import json
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from chalice.local import LocalChalice
from chalice.test import Client, HTTPResponse

from chalicelib import wiring
from chalicelib.settings import LOCAL_WEBHOOK_DESTINATIONS, Settings
from tests.clocks import SettableClock

# app.py lives at the repository root, which pytest does not put on sys.path for tests under tests/.
ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from app import app as app  # noqa: E402 (re-exported: the API, GC and security tests import it from here)

PREFIX = "/api/v1"
BUCKET = "test-bucket"
NAMESPACE = f"s3://{BUCKET}/repos"
_NO_BODY = object()


@contextlib.contextmanager
def memory_services(bucket: str = BUCKET, settings: Settings | None = None) -> Iterator[wiring.Services]:
    """Every port in memory, with this deployment bucket (or these settings), installed as the app's services while
    in use. The engine's clock is settable (tests/clocks.py)."""
    # Hook tests use webhook servers on loopback, as the local stack allows (LOCAL_WEBHOOK_DESTINATIONS).
    settings = settings or Settings(bucket=bucket, webhook_allowed_destinations=LOCAL_WEBHOOK_DESTINATIONS)
    built = wiring.memory_services(settings, clock=SettableClock())
    wiring.set_services(built)
    try:
        yield built
    finally:
        wiring.set_services(None)


def basic(access_key_id: str, secret: str) -> str:
    return "Basic " + base64.b64encode(f"{access_key_id}:{secret}".encode()).decode()


def seg(value: str) -> str:
    """A path segment as a client sends it: percent-encoded."""
    return quote(value, safe="")


class Api:
    """A thin HTTP client for /api/v1 with HTTP Basic credentials (or none)."""

    def __init__(self, client: Client, credentials: tuple[str, str] | None) -> None:
        self.client = client
        self.credentials = credentials

    def request(
        self,
        method: str,
        path: str,
        *,
        query: Mapping[str, Any] | None = None,
        json_body: Any = _NO_BODY,
        body: bytes = b"",
        headers: Mapping[str, str] | None = None,
    ) -> HTTPResponse:
        url = PREFIX + path + ("?" + urlencode(query) if query else "")
        all_headers: dict[str, str] = {}
        if self.credentials is not None:
            all_headers["authorization"] = basic(*self.credentials)
        if json_body is not _NO_BODY:
            body = json.dumps(json_body).encode()
            all_headers["content-type"] = "application/json"
        all_headers.update(headers or {})
        return self.client.http.request(method, url, headers=all_headers, body=body)

    def get(self, path: str, **kw: Any) -> HTTPResponse:
        return self.request("GET", path, **kw)

    def head(self, path: str, **kw: Any) -> HTTPResponse:
        return self.request("HEAD", path, **kw)

    def post(self, path: str, **kw: Any) -> HTTPResponse:
        return self.request("POST", path, **kw)

    def delete(self, path: str, **kw: Any) -> HTTPResponse:
        return self.request("DELETE", path, **kw)

    # ---- shortcuts for arranging state --------------------------------------------------------------------

    def create_repo(self, name: str = "repo1", default_branch: str = "main", **extra: Any) -> dict[str, Any]:
        body = {"name": name, "storage_namespace": f"{NAMESPACE}/{name}", "default_branch": default_branch, **extra}
        response = self.post("/repositories", json_body=body)
        assert response.status_code == 201, response.body
        return json.loads(response.body)

    def upload(self, repo: str, branch: str, path: str, data: bytes, **headers: str) -> dict[str, Any]:
        response = self.post(
            f"/repositories/{repo}/branches/{branch}/objects",
            query={"path": path},
            body=data,
            headers={"content-type": "application/octet-stream", **headers},
        )
        assert response.status_code == 201, response.body
        return json.loads(response.body)

    def commit(self, repo: str, branch: str, message: str = "a commit", **extra: Any) -> dict[str, Any]:
        response = self.post(f"/repositories/{repo}/branches/{branch}/commits", json_body={"message": message, **extra})
        assert response.status_code == 201, response.body
        return json.loads(response.body)


def body_of(response: HTTPResponse) -> Any:
    return json.loads(response.body)


def assert_error(response: HTTPResponse, status: int) -> str:
    """The response is a lakeFS error with this status; returns its message."""
    assert response.status_code == status, (response.status_code, response.body)
    payload = json.loads(response.body)
    assert set(payload) == {"message"}, payload
    assert isinstance(payload["message"], str) and payload["message"]
    return str(payload["message"])


# Fields Lakelet adds to lakeFS's shapes, which the lakefs_sdk models ignore: VersionConfig.lakelet_version and
# .lakelet_features.
# Also the fields lakeFS's swagger.yml (v1.84) gives LoginConfig that lakefs-sdk 1.88's model leaves out (lakeFS
# sends them; the SDK drops them).
EXTENSION_FIELDS = frozenset(
    {"lakelet_version", "lakelet_features", "RBAC", "login_url", "login_url_method", "login_cookie_names", "logout_url"}
)


def without_extensions(payload: Any) -> Any:
    """``payload`` without Lakelet's EXTENSION_FIELDS, at any depth."""
    if isinstance(payload, dict):
        return {k: without_extensions(v) for k, v in payload.items() if k not in EXTENSION_FIELDS}
    if isinstance(payload, list):
        return [without_extensions(v) for v in payload]
    return payload


def conforms(model: Any, body: Any) -> Any:
    """``body`` is exactly an instance of the lakefs_sdk model (apart from Lakelet's EXTENSION_FIELDS): it parses,
    and nothing is lost or renamed."""
    parsed = model.from_dict(body)
    assert parsed.to_dict() == without_extensions(body)
    return parsed


@contextlib.contextmanager
def requests_per_thread() -> Iterator[None]:
    """Makes the app's ``current_request`` thread-local while the block runs, as chalice local (and so the local
    stack's server) keeps it; a Chalice app keeps one for the process otherwise, and requests raced from threads
    through test clients would read each other's bodies (deployed, a Lambda container serves one at a time)."""
    original = type(app)
    if issubclass(original, LocalChalice):
        yield
        return
    app.__class__ = type(f"ThreadLocal{original.__name__}", (LocalChalice, original), {})
    try:
        yield
    finally:
        app.__class__ = original
