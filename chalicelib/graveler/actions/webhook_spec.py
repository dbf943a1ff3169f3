"""What a webhook hook's properties may say, checked when its action file is read (``lakelet actions validate``
and every run alike), so a file that would reach somewhere it must not is refused with its reason, not sent.

Refused here, whatever the deployment allows: a URL that is not plain http(s)://host[:port]/..., credentials in
the URL (``user:pass@``: they would be sent as Authorization, and kept in the run's output), a host spelled as a
number other than the dotted quad (``0x7f000001``, ``2130706433``, ``0177.0.0.1``, ``127.1``: resolvers read them
as addresses, people do not), and headers that change where or how the request goes: ``Host`` (another virtual
host than the URL's), hop-by-hop headers (RFC 9110 section 7.6.1: ``Connection``, ``Keep-Alive``,
``Proxy-Authenticate``, ``Proxy-Authorization``, ``Proxy-Connection``, ``TE``, ``Trailer``, ``Transfer-Encoding``,
``Upgrade``) and ``Content-Length`` (the body is the event's; another length would smuggle a second request).
Header names must be HTTP tokens and values free of control characters (no CR/LF injection).

Where the request may go at all (the addresses the name resolves to) is the deployment's to say: the webhook
adapter checks the address it connects to (chalicelib/adapters/hooks/destinations.py).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from .errors import InvalidActionFile

__all__ = ["FORBIDDEN_HEADERS", "check_webhook"]

FORBIDDEN_HEADERS = frozenset(
    {
        "host",
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "trailers",
        "transfer-encoding",
        "upgrade",
        "content-length",
    }
)
MAX_URL_CHARS = 2048
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_HOST = re.compile(r"[A-Za-z0-9._-]+|\[[0-9A-Fa-f:.]+\]")
# Every label numeric (decimal, octal or hex): a spelling of an IPv4 address. Only the canonical dotted quad
# (four decimal labels 0-255 without leading zeros) is taken as one.
_NUMERIC_LABEL = re.compile(r"(?:0[xX][0-9A-Fa-f]*|[0-9]+)")
_CANONICAL_IPV4 = re.compile(
    r"(?:(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\.){3}(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
)


def check_webhook(props: Mapping[str, Any], hook_id: str) -> None:
    """Raises InvalidActionFile naming the hook and what is wrong."""
    url = props.get("url")
    if not isinstance(url, str) or not re.match(r"^https?://[^/\s]+", url):
        raise InvalidActionFile(f"hook '{hook_id}': webhook url must be an http(s) URL")
    _check_url(url, hook_id)
    params = props.get("query_params")
    if params is not None:
        ok = isinstance(params, dict) and all(
            isinstance(v, (str, int, float, bool)) or (isinstance(v, list) and all(isinstance(x, str) for x in v))
            for v in params.values()
        )
        if not ok:
            raise InvalidActionFile(f"hook '{hook_id}': query_params maps names to a string or a list of strings")
    headers = props.get("headers")
    if headers is not None:
        if not (isinstance(headers, dict) and all(isinstance(v, str) for v in headers.values())):
            raise InvalidActionFile(f"hook '{hook_id}': headers maps names to strings")
        for name, value in headers.items():
            _check_header(str(name), value, hook_id)


def _check_url(url: str, hook_id: str) -> None:
    if len(url) > MAX_URL_CHARS or any(ord(c) < 0x21 or ord(c) == 0x7F for c in url):
        raise InvalidActionFile(
            f"hook '{hook_id}': webhook url must be at most {MAX_URL_CHARS} characters, without spaces or controls"
        )
    parts = urlsplit(url)
    if "@" in parts.netloc:
        raise InvalidActionFile(
            f"hook '{hook_id}': webhook url must not carry credentials (user:password@); send them in a header"
        )
    host = parts.netloc.rsplit(":", 1)[0] if not parts.netloc.endswith("]") else parts.netloc
    if not _HOST.fullmatch(host):
        raise InvalidActionFile(f"hook '{hook_id}': webhook url has no valid host: {url[:200]!r}")
    try:
        port = parts.port
    except ValueError:
        raise InvalidActionFile(f"hook '{hook_id}': webhook url has an invalid port: {url[:200]!r}") from None
    if port == 0:
        raise InvalidActionFile(f"hook '{hook_id}': webhook url has an invalid port: {url[:200]!r}")
    labels = host.rstrip(".").split(".")
    numeric = not host.startswith("[") and all(_NUMERIC_LABEL.fullmatch(label) for label in labels)
    if numeric and not _CANONICAL_IPV4.fullmatch(host):
        raise InvalidActionFile(
            f"hook '{hook_id}': webhook host {host!r} is an address spelled as a number other than a dotted "
            "quad (such as 127.0.0.1); write the address plainly"
        )


def _check_header(name: str, value: str, hook_id: str) -> None:
    if not _TOKEN.fullmatch(name):
        raise InvalidActionFile(f"hook '{hook_id}': header name {name[:100]!r} is not an HTTP token")
    if name.lower() in FORBIDDEN_HEADERS:
        raise InvalidActionFile(
            f"hook '{hook_id}': header {name!r} may not be set by an action (Host, Content-Length and hop-by-hop "
            "headers change where or how the request goes)"
        )
    if any((ord(c) < 0x20 and c != "\t") or ord(c) == 0x7F for c in value):
        raise InvalidActionFile(f"hook '{hook_id}': header {name!r} holds a control character (CR, LF, ...)")
