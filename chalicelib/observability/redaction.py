"""``redact`` and ``redact_text``: secrets out of every log line (values under secret-named keys, HTTP auth
schemes, JWTs, secret access keys, key=value pairs that name a secret)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["REDACTED", "redact", "redact_text"]

REDACTED = "***"


# Keys whose values are secrets wherever they appear (headers, JSON bodies, extra log fields).
_SECRET_KEY = re.compile(
    r"authorization|password|passwd|secret|token|cookie|signature|credential|private.?key", re.IGNORECASE
)
# Names that match the pattern above but hold identifiers, not secrets.
_NOT_SECRET_KEYS = frozenset({"staging_token", "sealed_tokens", "access_key_id", "accesskeyid"})
_SECRET_WORD = re.compile(r"secret|password|passwd|token|signature", re.IGNORECASE)
# A word (matched whole from its start, possessively) and, looked ahead at without consuming, the separator and
# value after it; _redact_pairs checks the word for a keyword in Python. The regex it replaces,
# "[\w-]*secret[\w-]*...", took time quadratic in a long word: 284 s to log one request for a
# 100,000-character path.
_PAIR = re.compile(r"""(?<![\w-])([\w-]++)(?=(["']?\s*[:=]\s*["']?)([^"'\s&,;}]+))""")
_SECRET_TEXT: list[tuple[re.Pattern[str], str]] = [
    # HTTP auth schemes: "Basic <base64>", "Bearer <token>".
    (re.compile(r"\b(basic|bearer)(\s+)[A-Za-z0-9+/=._~-]+", re.IGNORECASE), r"\1\2" + REDACTED),
    # JWTs (login tokens) anywhere.
    (re.compile(r"\beyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*"), REDACTED),
    # A secret access key on its own: 40 characters of base64 with both cases (hex digests have one case).
    (
        re.compile(
            r"(?<![A-Za-z0-9+/])(?=[A-Za-z0-9+/]{0,39}[a-z])(?=[A-Za-z0-9+/]{0,39}[A-Z])[A-Za-z0-9+/]{40}(?![A-Za-z0-9+/=])"
        ),
        REDACTED,
    ),
]


def _is_secret_key(key: str) -> bool:
    return bool(_SECRET_KEY.search(key)) and key.lower() not in _NOT_SECRET_KEYS


def _redact_pairs(text: str) -> str:
    """key=value and "key": "value" pairs whose key names a secret (SigV4's Signature=, presigned URLs'
    X-Amz-Signature and X-Amz-Security-Token, JSON fragments in exception messages), value masked."""
    parts: list[str] = []
    done = 0
    for match in _PAIR.finditer(text):
        if match.start() < done or not _SECRET_WORD.search(match.group(1)):
            continue
        parts.append(text[done : match.start()] + match.group(1) + match.group(2) + REDACTED)
        done = match.end(3)
    parts.append(text[done:])
    return "".join(parts)


def redact_text(text: str) -> str:
    """``text`` with every secret-looking fragment replaced by REDACTED."""
    for pattern, replacement in _SECRET_TEXT:
        text = pattern.sub(replacement, text)
    return _redact_pairs(text)


def redact(value: Any) -> Any:
    """A copy of ``value`` (JSON-like: dicts, lists, strings) without secrets: values under secret-named keys are
    replaced whole, and secret-looking fragments of every string are masked."""
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, Mapping):
        return {k: REDACTED if isinstance(k, str) and _is_secret_key(k) else redact(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [redact(item) for item in value]
    if value is None or isinstance(value, bool | int | float):
        return value
    # Anything else (an exception in a stack trace, a datetime) is serialized with str(): mask that string.
    return redact_text(str(value))
