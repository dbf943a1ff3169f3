"""Request headers parsed without the email package when plain (lakelet/stack/fast_headers.py): the same
HTTPMessage as http.client's own parse, for plain headers and for everything that falls back to it."""

from __future__ import annotations

import http.client
import io
from typing import Any

import pytest

from lakelet.stack import fast_headers

ORIGINAL = http.client.parse_headers

PLAIN = [
    b"Host: 127.0.0.1:8000\r\nUser-Agent: python-requests/2.32\r\nAccept-Encoding: gzip, deflate\r\n"
    b"Accept: */*\r\nConnection: keep-alive\r\nAuthorization: Basic QUtJQTpzZWNyZXQ=\r\n\r\n",
    b"Host: x\n\n",  # LF only
    b"X-Empty:\r\nX-Spaces:   padded value  \r\nX-Tab:\tv\r\n\r\n",  # trailing blanks are kept, leading ones not
    b"X-Dup: 1\r\nx-dup: 2\r\nX-Colon: a:b:c\r\nContent-Length: 0\r\n\r\n",
    b"\r\n",  # no header at all
]
UNUSUAL = [
    b"X-Folded: first\r\n  second\r\n\r\n",  # a continuation line
    b"From nobody\r\nHost: x\r\n\r\n",
    b"No colon here\r\nHost: x\r\n\r\n",
    b": empty name\r\n\r\n",
    b"Bad Name: v\r\n\r\n",
    b"X-Latin: caf\xe9\r\n\r\n",
    b"X-CR: a\rb\r\n\r\n",
    b"X-VT: a\x0bb\r\n\r\n",
    b"X-FF: a\x0cb\r\n\r\n",
    b"X-Sep: a\x1cb\r\n\r\n",
    b"Host: x\r\n",  # cut before the blank line
    b"",
]


def _state(message: Any) -> dict[str, Any]:
    state = {k: v for k, v in vars(message).items() if k not in ("policy", "defects")}
    defects = [(type(d).__name__, str(d)) for d in message.defects]  # defects compare by identity
    return state | {"items": message.items(), "defects": defects}


@pytest.mark.parametrize("raw", PLAIN + UNUSUAL)
def test_the_message_is_the_one_http_client_builds(raw: bytes) -> None:
    ours = fast_headers.parse_headers(io.BytesIO(raw + b"body bytes stay unread"))
    theirs = ORIGINAL(io.BytesIO(raw + b"body bytes stay unread"))
    assert type(ours) is type(theirs)
    assert _state(ours) == _state(theirs)
    assert ours.policy is theirs.policy


@pytest.mark.parametrize("raw", PLAIN)
def test_plain_headers_skip_the_email_parser(raw: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the email parser was called")

    monkeypatch.setattr(fast_headers.email.parser.Parser, "parsestr", refuse)
    fast_headers.parse_headers(io.BytesIO(raw))


def test_the_limits_of_http_client_still_hold() -> None:
    with pytest.raises(http.client.LineTooLong):
        fast_headers.parse_headers(io.BytesIO(b"X-Long: " + b"a" * 70_000 + b"\r\n\r\n"))
    with pytest.raises(http.client.HTTPException):
        fast_headers.parse_headers(io.BytesIO(b"".join(b"X-%d: v\r\n" % n for n in range(200)) + b"\r\n"))


def test_install_and_uninstall() -> None:
    fast_headers.install()
    fast_headers.install()
    try:
        assert http.client.parse_headers is fast_headers.parse_headers
    finally:
        fast_headers.uninstall()
        fast_headers.uninstall()
    assert http.client.parse_headers is ORIGINAL
