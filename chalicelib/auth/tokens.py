"""Login tokens: JWTs (RFC 7519) signed with HMAC-SHA256, as POST /auth/login hands out and Bearer auth takes.

Claims: sub (user id), iat and exp (Unix seconds), jti (random), iss and aud naming Lakelet. Only HS256 is
accepted, whatever the header says (no "none", no algorithm confusion); the signature is compared in
constant time before any claim is trusted.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .errors import InvalidToken

ISSUER = "lakelet"
AUDIENCE = "lakelet-api"
_HEADER = {"alg": "HS256", "typ": "JWT"}
_MAX_TOKEN_CHARS = 4096
# Clocks of two Lambda containers differ by a little; tokens are not refused for being a few seconds early.
_LEEWAY_SECONDS = 30


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        raise InvalidToken("malformed token") from None


@dataclass(frozen=True, slots=True)
class Token:
    value: str
    user_id: str
    expires: int


class TokenSigner:
    """Issues and verifies login tokens with one key."""

    def __init__(self, key: bytes, clock: Callable[[], float] = time.time) -> None:
        self._key = key
        self._clock = clock

    def issue(self, user_id: str, ttl_seconds: int) -> Token:
        now = int(self._clock())
        expires = now + ttl_seconds
        claims: dict[str, str | int] = {
            "sub": user_id,
            "iat": now,
            "exp": expires,
            "jti": secrets.token_hex(16),
            "iss": ISSUER,
            "aud": AUDIENCE,
        }
        signing_input = _b64(json.dumps(_HEADER).encode()) + "." + _b64(json.dumps(claims).encode())
        return Token(signing_input + "." + _b64(self._sign(signing_input)), user_id, expires)

    def verify(self, token: str) -> str:
        """The user id the token was issued to. Raises InvalidToken if forged, malformed or expired."""
        if len(token) > _MAX_TOKEN_CHARS or token.count(".") != 2:
            raise InvalidToken("malformed token")
        header_b64, claims_b64, signature_b64 = token.split(".")
        if not hmac.compare_digest(self._sign(f"{header_b64}.{claims_b64}"), _unb64(signature_b64)):
            raise InvalidToken("token signature does not verify")
        header, claims = _json(header_b64), _json(claims_b64)
        if header.get("alg") != "HS256":
            raise InvalidToken("unsupported token algorithm")
        if claims.get("iss") != ISSUER or claims.get("aud") != AUDIENCE:
            raise InvalidToken("token not issued for this API")
        subject, expires, issued = claims.get("sub"), claims.get("exp"), claims.get("iat")
        if not isinstance(subject, str) or not subject or not isinstance(expires, int) or not isinstance(issued, int):
            raise InvalidToken("token lacks its claims")
        now = self._clock()
        if expires <= now:
            raise InvalidToken("token expired")
        if issued > now + _LEEWAY_SECONDS:
            raise InvalidToken("token issued in the future")
        return subject

    def _sign(self, signing_input: str) -> bytes:
        return hmac.digest(self._key, signing_input.encode("ascii"), hashlib.sha256)


def _json(part: str) -> dict[str, Any]:
    try:
        value = json.loads(_unb64(part))
    except (UnicodeDecodeError, ValueError):
        raise InvalidToken("malformed token") from None
    if not isinstance(value, dict):
        raise InvalidToken("malformed token")
    return value
