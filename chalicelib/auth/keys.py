"""The server's own secret: one random 256-bit key, stored sealed by the SecretCipher (KMS) in the AuthStore.

Every container reads it once (a DynamoDB read and a KMS Decrypt) and derives a key per purpose from it
(HMAC-SHA256(master, purpose)), so login tokens and staging addresses never share a key. The first
container to need it creates it (put-if-absent: concurrent starters agree on the one that was stored).
Nothing to configure, nothing in the environment: whoever can read the table still needs kms:Decrypt.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading

from chalicelib.graveler import errors

from . import secrets as sealed_secrets
from .ports import SecretCipher, ServerKeyStore

MASTER_KEY_NAME = "master"
MASTER_KEY_BYTES = 32
_CONTEXT_PURPOSE = "lakelet:server-key"


class ServerKeys:
    """Derives per-purpose keys from the stored master key, loading (or creating) it on first use."""

    def __init__(self, store: ServerKeyStore, cipher: SecretCipher) -> None:
        self._store = store
        self._cipher = cipher
        self._lock = threading.Lock()
        self._master: bytes | None = None

    def key(self, purpose: str) -> bytes:
        """A 32-byte key for ``purpose`` (e.g. "login-token"). Raises StorageError when the stores are down."""
        return hmac.digest(self._load(), purpose.encode("utf-8"), hashlib.sha256)

    def _load(self) -> bytes:
        with self._lock:
            if self._master is None:
                self._master = self._get_or_create()
            return self._master

    def _get_or_create(self) -> bytes:
        context = {"purpose": _CONTEXT_PURPOSE, "name": MASTER_KEY_NAME}
        try:
            stored = self._store.get_server_key(MASTER_KEY_NAME)
        except errors.NotFound:
            fresh = secrets.token_bytes(MASTER_KEY_BYTES)
            try:
                self._store.create_server_key(MASTER_KEY_NAME, _seal(self._cipher, fresh, context))
                return fresh
            except errors.AlreadyExists:
                stored = self._store.get_server_key(MASTER_KEY_NAME)  # another container won the race
        return _unseal(self._cipher, stored, context)


def _seal(cipher: SecretCipher, key: bytes, context: dict[str, str]) -> str:
    return sealed_secrets.b64(cipher.encrypt(key, context))


def _unseal(cipher: SecretCipher, stored: str, context: dict[str, str]) -> bytes:
    return cipher.decrypt(sealed_secrets.unb64(stored, "server key"), context)
