"""What may go into an HTTP response header, for every place that builds one from stored or requested values.

A header value is sent as bytes on the wire; a CR or LF in it ends the header early and lets whoever chose the
value write headers (``Set-Cookie``) or a whole body of their own. Values that reach a header from the store
(content types and user metadata written before writes were validated) or from the request (S3's
``response-*`` overrides) are checked here: visible ASCII, space and tab only. Anything else is refused at the
request (an override: 400) or left out of the response (a stored value: see :func:`metadata_headers`).

Object bytes are anyone's upload: served from Lakelet's origin as a page, an HTML or SVG file would run its
script with the reader's session. :func:`object_headers` makes every response that carries them inert.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from urllib.parse import quote

# RFC 9110 field-value, restricted to ASCII: obs-text (bytes >= 0x80) has no agreed charset, and Python's
# http.server cannot even encode characters above U+00FF.
_VALUE = re.compile(r"[\t\x20-\x7e]*")
# RFC 9110 token: the characters a field name may use.
_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
FALLBACK_CONTENT_TYPE = "application/octet-stream"
# S3's header for metadata entries a response leaves out because HTTP cannot carry them.
MISSING_META = "x-amz-missing-meta"
# A document loaded from object bytes gets a unique opaque origin (sandbox: no script, no forms, no cookies of
# ours) and may load nothing (default-src 'none'), whatever its type or whatever a browser takes it for.
OBJECT_CSP = "sandbox; default-src 'none'"
# Types a browser shows as data rather than run as a document; only these may be served inline when asked.
# Not HTML, SVG, XML or PDF: each can carry script or active content.
INERT_TYPES = frozenset(
    {
        "text/plain",
        "text/csv",
        "text/tab-separated-values",
        "application/json",
        "application/octet-stream",
        "image/png",
        "image/jpeg",
        "image/gif",
        "image/webp",
        "image/avif",
        "image/bmp",
    }
)


def is_safe_value(value: object) -> bool:
    return isinstance(value, str) and _VALUE.fullmatch(value) is not None


def is_safe_name(name: object) -> bool:
    return isinstance(name, str) and _NAME.fullmatch(name) is not None


def is_wire_safe(name: object, value: object) -> bool:
    """The last check before bytes leave a server: no CR, LF or NUL, and encodable as Latin-1 (what
    http.server sends). Looser than :func:`is_safe_value`, which app code applies first."""
    if not isinstance(name, str) or not isinstance(value, str) or not is_safe_name(name):
        return False
    if any(c in value for c in "\r\n\x00"):
        return False
    try:
        value.encode("latin-1")
    except UnicodeEncodeError:
        return False
    return True


def first_unsafe(headers: Iterable[tuple[str, str]]) -> str | None:
    """The name of the first header a server must not send, or None."""
    for name, value in headers:
        if not is_wire_safe(name, value):
            return repr(name)[:80]
    return None


def content_type(stored: str) -> str:
    """A stored content type fit for a header; one that is not (stored before validation) reads as
    application/octet-stream, which no browser renders as a page."""
    return stored if stored and is_safe_value(stored) else FALLBACK_CONTENT_TYPE


def metadata_headers(prefix: str, metadata: Mapping[str, str]) -> dict[str, str]:
    """User metadata as ``prefix + name`` headers. An entry whose name or value HTTP cannot carry is left out
    and counted in ``x-amz-missing-meta``, as S3 does for metadata its REST API cannot return."""
    headers: dict[str, str] = {}
    missing = 0
    for name, value in metadata.items():
        if is_safe_name(prefix + name) and is_safe_value(value):
            headers[prefix + name] = value
        else:
            missing += 1
    if missing:
        headers[MISSING_META] = str(missing)
    return headers


def media_type(value: str) -> str:
    """``Text/HTML; charset=utf-8`` -> ``text/html``."""
    return value.split(";", 1)[0].strip().lower()


def is_inert(content_type: str) -> bool:
    return media_type(content_type) in INERT_TYPES


def attachment(path: str) -> str:
    """``attachment`` with the object's base name (RFC 6266): an ASCII fallback in ``filename`` and, for a name
    that needs more, the exact name percent-encoded in ``filename*``. Nothing from the path can end the value."""
    name = path.rstrip("/").rsplit("/", 1)[-1] or "download"
    plain = "".join(c if " " <= c <= "~" and c not in '"\\' else "_" for c in name)
    value = f'attachment; filename="{plain}"'
    if plain != name:
        value += "; filename*=UTF-8''" + quote(name, safe="")
    return value


def wants_inline(disposition: str | None) -> bool:
    return disposition is not None and disposition.split(";", 1)[0].strip().lower() == "inline"


def object_headers(content_type: str, path: str, disposition: str | None = None) -> dict[str, str]:
    """The headers every response carrying object bytes sends: a sandboxing CSP, ``nosniff`` (so a type is never
    guessed up into HTML) and a Content-Disposition. That is ``attachment`` unless the client asked for
    ``disposition`` itself: an ``inline`` one only for an inert type, an ``attachment`` one as asked."""
    if disposition is None or (wants_inline(disposition) and not is_inert(content_type)):
        disposition = attachment(path)
    elif not wants_inline(disposition) and disposition.split(";", 1)[0].strip().lower() != "attachment":
        disposition = attachment(path)  # a type browsers do not know is handled as inline by some: refuse it
    return {
        "Content-Security-Policy": OBJECT_CSP,
        "X-Content-Type-Options": "nosniff",
        "Content-Disposition": disposition,
    }
