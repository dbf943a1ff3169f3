"""The web UI's files, served by the same app as the API: GET / (index.html) and GET /assets/{name}; and lakeFS's
UI addresses (``/repositories/...``, ``/auth/...``), redirected to the same pages of ours (webui_links.py).

`make webui` builds webui/ into chalicelib/webui_dist/ (Chalice deploys chalicelib/, so the files travel in the
Lambda bundle and API Gateway serves them on the API's own origin: no CORS, no CDN). Asset names carry a
content hash, so they are cached for a year; index.html is never cached, so a new deployment shows at once.
The UI routes by URL hash (``/#/repositories/...``), so these two routes are all it needs; the others exist
for people and links that know lakeFS's addresses. Chalice has no catch-all route that works locally ({proxy+}
does not match under chalice local), so each depth of lakeFS's paths is a route of its own. Nothing under
/api/v1 or /iceberg is touched: an unknown API path still answers a JSON 404.
"""

from __future__ import annotations

import re
from pathlib import Path

from chalice import Blueprint, Response

from chalicelib.webui_links import hash_route, relative_redirect

__all__ = ["UI_ROUTES", "bp"]

DIST = Path(__file__).resolve().parent / "webui_dist"
# Flat names only: no "/", no leading dot, nothing a path traversal could use.
_ASSET_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")
_TYPES = {
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
    ".woff2": "font/woff2",
    ".map": "application/json",
}
# The UI loads only its own files and talks only to its own origin; objects are previewed from blob: URLs;
# presigned uploads go straight to S3, whose host is not known here (connect-src allows https: for it).
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; img-src 'self' blob: data:; media-src 'self' blob:; style-src 'self'; "
    "connect-src 'self' https: http://127.0.0.1:* http://localhost:*; object-src 'none'; frame-ancestors 'none'; "
    "base-uri 'self'; form-action 'self'"
)
Headers = dict[str, str | list[str]]
_SECURITY_HEADERS: Headers = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
}
NOT_BUILT = (
    "<!doctype html><meta charset=utf-8><title>Lakelet</title><p>The web UI is not built in this deployment. "
    "Run <code>make webui</code> (needs Node 20) and restart. The API is at <code>api/v1</code>.</p>"
)

bp = Blueprint(__name__)
# Every route of this blueprint: the UI's files and lakeFS's UI addresses, public, outside the API, never data.
UI_ROUTES = frozenset(
    {
        "/",
        "/assets/{name}",
        "/repositories",
        "/repositories/{a}",
        "/repositories/{a}/{b}",
        "/repositories/{a}/{b}/{c}",
        "/repositories/{a}/{b}/{c}/{d}",
        "/auth",
        "/auth/{a}",
        "/auth/{a}/{b}",
        "/auth/{a}/{b}/{c}",
        "/auth/{a}/{b}/{c}/{d}",
        "/datasets",
        "/setup",
    }
)


def _not_found() -> Response:
    return Response(body={"message": "not found"}, status_code=404, headers={"Content-Type": "application/json"})


@bp.route("/", methods=["GET"])
def index() -> Response:
    path = DIST / "index.html"
    headers: Headers = {**_SECURITY_HEADERS, "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-cache"}
    if not path.is_file():
        return Response(body=NOT_BUILT.encode(), status_code=503, headers=headers)
    return Response(body=path.read_bytes(), status_code=200, headers=headers)


@bp.route("/assets/{name}", methods=["GET"])
def asset(name: str) -> Response:
    content_type = _TYPES.get(Path(name).suffix)
    if not _ASSET_NAME.fullmatch(name) or content_type is None:
        return _not_found()
    path = DIST / "assets" / name
    if not path.is_file():
        return _not_found()
    headers: Headers = {
        **_SECURITY_HEADERS,
        "Content-Type": content_type,
        "Cache-Control": "public, max-age=31536000, immutable",
    }
    return Response(body=path.read_bytes(), status_code=200, headers=headers)


def _to_ui(*parts: str) -> Response:
    """A 302 from a lakeFS UI path (its segments) to our UI's page for it."""
    request = bp.current_request
    query = dict((request.query_params or {}).items()) if request else {}  # the last value of each name
    raw_path = str((request.context or {}).get("path", "")) if request else ""
    depth = len(parts) - 1 + (1 if raw_path.endswith("/") else 0)  # folders between the UI's root and here
    headers: Headers = {"Location": relative_redirect(depth, hash_route(parts, query)), "Cache-Control": "no-cache"}
    return Response(body=b"", status_code=302, headers=headers)


# lakeFS's UI paths (its webui/src/pages/index.jsx), one route per depth; the deepest is /auth/users/U/policies/
# effective. Path parameters arrive percent-encoded (toolchain notes): decoded here, re-encoded in the hash.
def _decoded(*parts: str) -> list[str]:
    from urllib.parse import unquote

    return [unquote(p) for p in parts]


@bp.route("/repositories", methods=["GET"])
def lakefs_repositories() -> Response:
    return _to_ui("repositories")


@bp.route("/repositories/{a}", methods=["GET"])
def lakefs_repository(a: str) -> Response:
    return _to_ui("repositories", *_decoded(a))


@bp.route("/repositories/{a}/{b}", methods=["GET"])
def lakefs_repository_tab(a: str, b: str) -> Response:
    return _to_ui("repositories", *_decoded(a, b))


@bp.route("/repositories/{a}/{b}/{c}", methods=["GET"])
def lakefs_repository_item(a: str, b: str, c: str) -> Response:
    return _to_ui("repositories", *_decoded(a, b, c))


@bp.route("/repositories/{a}/{b}/{c}/{d}", methods=["GET"])
def lakefs_repository_item_page(a: str, b: str, c: str, d: str) -> Response:
    return _to_ui("repositories", *_decoded(a, b, c, d))


@bp.route("/auth", methods=["GET"])
def lakefs_auth() -> Response:
    return _to_ui("auth")


@bp.route("/auth/{a}", methods=["GET"])
def lakefs_auth_tab(a: str) -> Response:
    return _to_ui("auth", *_decoded(a))


@bp.route("/auth/{a}/{b}", methods=["GET"])
def lakefs_auth_item(a: str, b: str) -> Response:
    return _to_ui("auth", *_decoded(a, b))


@bp.route("/auth/{a}/{b}/{c}", methods=["GET"])
def lakefs_auth_item_tab(a: str, b: str, c: str) -> Response:
    return _to_ui("auth", *_decoded(a, b, c))


@bp.route("/auth/{a}/{b}/{c}/{d}", methods=["GET"])
def lakefs_auth_item_page(a: str, b: str, c: str, d: str) -> Response:
    return _to_ui("auth", *_decoded(a, b, c, d))


@bp.route("/datasets", methods=["GET"])
def lakefs_datasets() -> Response:
    return _to_ui("datasets")


@bp.route("/setup", methods=["GET"])
def lakefs_setup() -> Response:
    return _to_ui("setup")
