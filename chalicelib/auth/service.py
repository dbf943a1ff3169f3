"""Users and access keys: first-time setup, key creation and HTTP Basic verification.

Secrets are never stored. Each credential keeps ``pbkdf2_sha256$<iterations>$<salt hex>$<digest hex>``:
PBKDF2-HMAC-SHA256 with a random 16-byte salt per credential. Generated secrets carry 240 random bits and
would be safe behind a plain salted HMAC, but ``setup_lakefs`` and ``ensure_admin`` accept secrets a person
chose, so a key-stretching function is worth having should the table ever leak. The cost is modest
(ITERATIONS, ~15 ms on one core) and paid once per key per warm container: successful verifications are cached
in-process for CACHE_TTL_SECONDS, keyed by (access key id, sha256(secret)), so the secret itself is not kept
either. Failures are never cached, so guessing pays the full cost every time. Comparisons are constant-time.
The iteration count is part of the stored string, so raising it later does not invalidate existing keys.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
import string
import threading
import time
from collections.abc import Callable

from chalicelib.graveler import errors

from .ports import AuthStore
from .records import Credential, User

ITERATIONS = 50_000
SALT_BYTES = 16
SCHEME = "pbkdf2_sha256"
CACHE_TTL_SECONDS = 60.0
CACHE_MAX_ENTRIES = 1024
# lakeFS's shape: AKIAJ + 14 random upper-case alphanumerics + Q (20 characters, like an AWS key id, which
# S3 clients expect), and a secret of 30 random bytes in standard base64 (40 characters).
ACCESS_KEY_PREFIX = "AKIAJ"
ACCESS_KEY_SUFFIX = "Q"
ACCESS_KEY_RANDOM_CHARS = 14
SECRET_RANDOM_BYTES = 30
_KEY_ALPHABET = string.ascii_uppercase + string.digits
_KEY_CREATE_TRIES = 5
# No ":" (HTTP Basic splits on the first one) and no "/" (SigV4 credential scopes are slash-separated).
_ACCESS_KEY_ID = re.compile(r"[A-Za-z0-9_.+=@-]{3,128}")
# Printable ASCII without spaces: HTTP Basic has no agreed encoding for anything else.
_SECRET = re.compile(r"[\x21-\x7e]{8,256}")


def hash_secret(secret: str, salt: bytes | None = None, iterations: int = ITERATIONS) -> str:
    """The stored form of a secret (see the module docstring)."""
    salt = secrets.token_bytes(SALT_BYTES) if salt is None else salt
    digest = hashlib.pbkdf2_hmac("sha256", secret.encode(), salt, iterations)
    return f"{SCHEME}${iterations}${salt.hex()}${digest.hex()}"


def verify_secret(stored: str, secret: str) -> bool:
    """True when ``secret`` hashes to ``stored``; False for any mismatch or malformed stored value."""
    try:
        scheme, iterations, salt_hex, digest_hex = stored.split("$")
        if scheme != SCHEME:
            return False
        digest = hashlib.pbkdf2_hmac("sha256", secret.encode(), bytes.fromhex(salt_hex), int(iterations))
    except ValueError:
        return False
    return hmac.compare_digest(digest.hex(), digest_hex)


def generate_access_key_id() -> str:
    body = "".join(secrets.choice(_KEY_ALPHABET) for _ in range(ACCESS_KEY_RANDOM_CHARS))
    return ACCESS_KEY_PREFIX + body + ACCESS_KEY_SUFFIX


def generate_secret() -> str:
    return base64.b64encode(secrets.token_bytes(SECRET_RANDOM_BYTES)).decode("ascii")


def validate_key_pair(access_key_id: str, secret: str) -> None:
    """Raises Invalid for a key pair a client could not send back over HTTP Basic or SigV4."""
    if not _ACCESS_KEY_ID.fullmatch(access_key_id):
        raise errors.Invalid("access key id must be 3-128 characters of letters, digits and _.+=@-")
    if not _SECRET.fullmatch(secret):
        raise errors.Invalid("secret access key must be 8-256 printable ASCII characters without spaces")


class AuthService:
    """Creates users and key pairs and verifies HTTP Basic credentials against the AuthStore."""

    def __init__(self, store: AuthStore, clock: Callable[[], float] = time.time) -> None:
        self._store = store
        self._clock = clock
        self._lock = threading.Lock()
        # (access key id, sha256(secret)) -> (user, expiry on self._clock)
        self._verified: dict[tuple[str, bytes], tuple[User, float]] = {}

    def is_initialized(self) -> bool:
        """True once any user exists (setup_lakefs has run, or the local stack installed its admin)."""
        return bool(self._store.list_users(limit=1))

    def setup(
        self, username: str, access_key_id: str | None = None, secret: str | None = None
    ) -> tuple[Credential, str]:
        """Creates the first (admin) user and its key pair; a given pair is installed as is.

        Raises AlreadyExists once initialized, Invalid for a bad username or key pair.
        """
        if not username or len(username) > 256 or any(c.isspace() for c in username):
            raise errors.Invalid("username must be 1-256 characters without spaces")
        if (access_key_id is None) != (secret is None):
            raise errors.Invalid("an access key needs both access_key_id and secret_access_key")
        if access_key_id is not None and secret is not None:
            validate_key_pair(access_key_id, secret)
        if self.is_initialized():
            raise errors.AlreadyExists("lakelet is already initialized")
        self._store.create_user(User(username, int(self._clock())))
        if access_key_id is not None and secret is not None:
            credential = Credential(access_key_id, hash_secret(secret), username, int(self._clock()))
            self._store.create_credential(credential)
            return credential, secret
        return self.create_credentials(username)

    def ensure_admin(self, access_key_id: str, secret: str, username: str = "admin") -> None:
        """Makes sure ``username`` exists and holds exactly this key pair. Idempotent.

        The caller (flags or environment of the local stack) is the source of truth: a key already stored for
        the same user with another secret gets the new secret. Raises Conflict when the key id belongs to
        another user, Invalid for a malformed pair.
        """
        validate_key_pair(access_key_id, secret)
        try:
            self._store.create_user(User(username, int(self._clock())))
        except errors.UserExists:
            pass
        try:
            existing: Credential | None = self._store.get_credential(access_key_id)
        except errors.CredentialNotFound:
            existing = None
        if existing is not None:
            if existing.user_id != username:
                raise errors.Conflict(f"access key {access_key_id} belongs to another user")
            if verify_secret(existing.secret_hash, secret):
                return
            self._store.delete_credential(access_key_id)
            self._forget(access_key_id)
        self._store.create_credential(Credential(access_key_id, hash_secret(secret), username, int(self._clock())))

    def create_credentials(self, user_id: str) -> tuple[Credential, str]:
        """A new random key pair for an existing user. Raises UserNotFound."""
        self._store.get_user(user_id)
        for _ in range(_KEY_CREATE_TRIES):
            secret = generate_secret()
            credential = Credential(generate_access_key_id(), hash_secret(secret), user_id, int(self._clock()))
            try:
                self._store.create_credential(credential)
            except errors.AlreadyExists:
                continue  # 36**14 ids make this all but impossible; retrying is cheaper than reasoning about it
            return credential, secret
        raise errors.TooManyTries("could not find a free access key id")

    def authenticate_basic(self, access_key_id: str, secret: str) -> User:
        """The user owning this key pair. Raises Unauthorized on any mismatch (unknown key, wrong secret)."""
        cache_key = (access_key_id, hashlib.sha256(secret.encode()).digest())
        now = self._clock()
        with self._lock:
            hit = self._verified.get(cache_key)
        if hit is not None and hit[1] > now:
            return hit[0]
        try:
            credential = self._store.get_credential(access_key_id)
        except errors.CredentialNotFound:
            # Same work as a wrong secret, so a caller cannot tell unknown keys from known ones by timing.
            verify_secret(_DUMMY_HASH, secret)
            raise errors.Unauthorized("error authenticating request") from None
        if not verify_secret(credential.secret_hash, secret):
            raise errors.Unauthorized("error authenticating request")
        try:
            user = self._store.get_user(credential.user_id)
        except errors.UserNotFound:
            raise errors.Unauthorized("error authenticating request") from None
        with self._lock:
            if len(self._verified) >= CACHE_MAX_ENTRIES:
                self._verified = {k: v for k, v in self._verified.items() if v[1] > now}
                if len(self._verified) >= CACHE_MAX_ENTRIES:
                    self._verified.clear()
            self._verified[cache_key] = (user, now + CACHE_TTL_SECONDS)
        return user

    def _forget(self, access_key_id: str) -> None:
        with self._lock:
            self._verified = {k: v for k, v in self._verified.items() if k[0] != access_key_id}


_DUMMY_HASH = hash_secret("not-a-real-secret", salt=b"\x00" * SALT_BYTES)
