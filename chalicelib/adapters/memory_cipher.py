"""The SecretCipher twin, the stand-in for KMS in tests and the local stack."""

from __future__ import annotations

import hmac
import json
import secrets
from collections.abc import Mapping

from chalicelib.auth.errors import DecryptionFailed
from chalicelib.graveler import errors

__all__ = ["MemoryCipher"]


class MemoryCipher:
    """SecretCipher twin from the standard library: an HMAC-SHA256 keystream (encrypt-then-MAC), with the tag
    over nonce, ciphertext and context, so tampering or another context fails like KMS does."""

    _NONCE = 16
    _TAG = 32

    def __init__(self, key: bytes | None = None) -> None:
        master = key if key is not None else secrets.token_bytes(32)
        self._stream_key = hmac.digest(master, b"stream", "sha256")
        self._mac_key = hmac.digest(master, b"mac", "sha256")

    def encrypt(self, plaintext: bytes, context: Mapping[str, str]) -> bytes:
        if not plaintext:
            raise errors.Invalid("nothing to encrypt")  # as KMS, which takes 1 to 4096 bytes
        nonce = secrets.token_bytes(self._NONCE)
        body = self._xor(nonce, plaintext)
        return nonce + body + self._tag(nonce, body, context)

    def decrypt(self, ciphertext: bytes, context: Mapping[str, str]) -> bytes:
        if len(ciphertext) < self._NONCE + self._TAG:
            raise DecryptionFailed("ciphertext too short")
        nonce, body, tag = ciphertext[: self._NONCE], ciphertext[self._NONCE : -self._TAG], ciphertext[-self._TAG :]
        if not hmac.compare_digest(tag, self._tag(nonce, body, context)):
            raise DecryptionFailed("ciphertext does not verify")
        return self._xor(nonce, body)

    def _xor(self, nonce: bytes, data: bytes) -> bytes:
        stream = b"".join(
            hmac.digest(self._stream_key, nonce + n.to_bytes(8, "big"), "sha256") for n in range(len(data) // 32 + 1)
        )
        return bytes(a ^ b for a, b in zip(data, stream, strict=False))  # the stream is at least as long

    def _tag(self, nonce: bytes, body: bytes, context: Mapping[str, str]) -> bytes:
        aad = json.dumps(sorted(context.items())).encode()
        return hmac.digest(self._mac_key, nonce + len(body).to_bytes(8, "big") + body + aad, "sha256")
