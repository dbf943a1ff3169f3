"""The web UI's files, served by the same app as the API: GET / (index.html) and GET /assets/{name}.

`make webui` builds webui/ into chalicelib/webui_dist/ (Chalice deploys chalicelib/, so the files travel in the
Lambda bundle and API Gateway serves them on the API's own origin: no CORS, no CDN). Asset names carry a
content hash, so they are cached for a year; index.html is never cached, so a new deployment shows at once.
The UI routes by URL hash (``/#/repositories/...``), so these two routes are all it needs.
"""

from __future__ import annotations

import re
from pathlib import Path

from chalice import Blueprint, Response

__all__ = ["bp"]

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
