"""Login tokens: JWTs (RFC 7519) signed with HMAC-SHA256, as POST /auth/login hands out and Bearer auth takes.

Claims: sub (user id), iat and exp (Unix seconds), jti (random: the token's id), sid (the id of the chain the
token belongs to: a login starts one, its jti; a renewal by token exchange keeps it; logout revokes it), iss and
aud naming Lakelet, and what the token is bound to: akid (the access key that logged in) and gen (the user's
generation, auth/records.py). The signature only proves Lakelet issued the token; AuthService checks that the
key and that generation of the user still exist, and that the token's chain was not revoked, before it trusts one
(deleting either, or logging out with any token of the chain, ends every token of it). Only HS256 is
accepted, whatever the header says (no "none", no algorithm confusion); the signature is compared in
constant time before any claim is trusted.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import re
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .errors import InvalidToken

__all__ = ["Token"]

ISSUER = "lakelet"
AUDIENCE = "lakelet-api"
_HEADER = {"alg": "HS256", "typ": "JWT"}
_MAX_TOKEN_CHARS = 4096
# Clocks of two Lambda containers differ by a little; tokens are not refused for being a few seconds early.
_LEEWAY_SECONDS = 30
_BASE64URL = re.compile(r"[A-Za-z0-9_-]*")


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    """Only the canonical spelling (RFC 7515: base64url, no padding, unused bits zero): one token has one
    string, so ``=`` padding, characters outside the alphabet or other trailing bits are refused, not skipped."""
    if not _BASE64URL.fullmatch(text):
        raise InvalidToken("malformed token")
    try:
        data = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        raise InvalidToken("malformed token") from None
    if _b64(data) != text:
        raise InvalidToken("malformed token")
    return data


@dataclass(frozen=True, slots=True)
class Token:
    value: str
    user_id: str
    expires: int


@dataclass(frozen=True, slots=True)
class Claims:
    """What a verified token says: whom it was issued to, with which key, for which generation of the user;
    its id (jti), its chain's (sid: the jti of the login that started it; a token issued before chains has its
    own jti), when it was issued and when it expires (Unix seconds), which bound how long a revocation must be
    remembered."""

    user_id: str
    access_key_id: str
    generation: str
    token_id: str
    expires: int
    chain_id: str = ""
    issued: int = 0


class TokenSigner:
    """Issues and verifies login tokens with one key."""

    def __init__(self, key: bytes, clock: Callable[[], float] = time.time) -> None:
        self._key = key
        self._clock = clock

    def issue(
        self, user_id: str, ttl_seconds: int, access_key_id: str, generation: str, chain_id: str | None = None
    ) -> Token:
        """``chain_id``: the chain a renewal continues; None starts one (a login), named by the token's own id."""
        now = int(self._clock())
        expires = now + ttl_seconds
        token_id = secrets.token_hex(16)
        claims: dict[str, str | int] = {
            "sub": user_id,
            "akid": access_key_id,
            "gen": generation,
            "iat": now,
            "exp": expires,
            "jti": token_id,
            "sid": chain_id or token_id,
            "iss": ISSUER,
            "aud": AUDIENCE,
        }
        signing_input = _b64(json.dumps(_HEADER).encode()) + "." + _b64(json.dumps(claims).encode())
        return Token(signing_input + "." + _b64(self._sign(signing_input)), user_id, expires)

    def verify(self, token: str) -> Claims:
        """What the token was issued to. Raises InvalidToken if forged, malformed, expired or unbound."""
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
        key, generation = claims.get("akid"), claims.get("gen")
        if not isinstance(key, str) or not key or not isinstance(generation, str):
            raise InvalidToken("token is not bound to an access key and a user")  # issued before tokens were
        token_id = claims.get("jti")
        if not isinstance(token_id, str) or not token_id:
            raise InvalidToken("token lacks its id")  # every issued token has one: logout revokes by it
        chain_id = claims.get("sid", token_id)
        if not isinstance(chain_id, str) or not chain_id:
            raise InvalidToken("token lacks its chain")
        now = self._clock()
        if expires <= now:
            raise InvalidToken("token expired")
        if issued > now + _LEEWAY_SECONDS:
            raise InvalidToken("token issued in the future")
        return Claims(subject, key, generation, token_id, expires, chain_id, issued)

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
