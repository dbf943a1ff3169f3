"""The headers of an HTTP request the stack's servers read, parsed without the email package when they are plain.

Python's HTTP servers (the API's and the S3 gateway's, lakelet/stack/devserver.py and s3server.py) read a
request's headers with ``http.client.parse_headers``, which hands them to the email package's feed parser: 15% of
the CPU of an API request reading a log of 100 commits, for eight header lines. While installed, the lines are
read as before (``http.client``'s own reader, with its line and count limits) and, when every line is a plain
``Name: value`` line (a name of visible ASCII without ':', no continuation line, no ``From `` line, the blank line
at the end), put into the same HTTPMessage the email parser would build, in one pass. Anything else goes to the
email parser, unchanged. The whole process's ``http.client`` uses it, including answers it reads as a client, which
take the same path for the same reason.
"""

from __future__ import annotations

import email.parser
import http.client
import re
import threading
from collections.abc import Callable
from typing import Any, BinaryIO

__all__ = ["install", "installed", "parse_headers", "uninstall"]

# A header line the email parser takes as one "name: value" field (its own pattern for a header's start, less
# the empty name, the "From " line and continuations): visible ASCII but ':' for the name, then the colon.
_PLAIN = re.compile(r"[\x21-\x39\x3b-\x7e]+:")
_OTHER_BREAKS = re.compile(r"[\r\x0b\x0c\x1c\x1d\x1e]")
_lock = threading.Lock()
_original: list[Callable[..., Any]] = []


def parse_headers(fp: BinaryIO, _class: type[http.client.HTTPMessage] = http.client.HTTPMessage) -> Any:
    """``http.client.parse_headers``'s result, faster for plain headers (see the module)."""
    lines = http.client._read_headers(fp)  # type: ignore[attr-defined]
    text = b"".join(lines).decode("iso-8859-1")
    fields = _plain_fields(text)
    if fields is None:
        return email.parser.Parser(_class=_class).parsestr(text)
    message = _class()
    for name, value in fields:
        message.set_raw(name, value)
    message.set_payload("")
    return message


def _plain_fields(text: str) -> list[tuple[str, str]] | None:
    """The (name, value) of each line as the email parser stores them, or None when a line is not plain."""
    # Lines end where the email parser ends them (CRLF, LF or a lone CR): an ASCII text with no lone CR and none of
    # the other breaks str.splitlines knows splits the same way.
    if not text.isascii() or _OTHER_BREAKS.search(text.replace("\r\n", "\n")):
        return None
    lines = text.splitlines(keepends=True)
    if not lines or lines[-1] not in ("\r\n", "\n"):
        return None
    fields = []
    for line in lines[:-1]:
        if not line.endswith("\n") or line.startswith("From "):
            return None
        match = _PLAIN.match(line)
        if match is None:
            return None
        name = match.group()[:-1]
        fields.append((name, line[match.end() :].lstrip(" \t").rstrip("\r\n")))
    return fields


def install() -> None:
    with _lock:
        if not _original:
            _original.append(http.client.parse_headers)
            http.client.parse_headers = parse_headers  # type: ignore[assignment]


def uninstall() -> None:
    with _lock:
        if _original:
            http.client.parse_headers = _original.pop()


def installed() -> bool:
    return bool(_original)
