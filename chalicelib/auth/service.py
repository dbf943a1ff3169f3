"""Auth's front door: first-time setup, access keys, HTTP Basic and Bearer verification, secrets for SigV4,
login tokens and their revocation at logout, and the way to the Directory (users, groups, policies) and the
Authorizer.

Secrets are stored encrypted (auth/secrets.py: KMS on AWS), not hashed, because the S3 gateway verifies
AWS SigV4 signatures, which needs the user's secret in clear. Reading a secret costs a DynamoDB read and a
KMS Decrypt, so each warm container keeps what it read in memory for CACHE_TTL_SECONDS (key id -> user and
secret; never written anywhere, never logged). A Basic-auth miss caches only after the secret matched, so
wrong guesses pay a store read and a decryption each time; comparisons are constant-time. A key deleted
through another container keeps working here for at most the TTL (lakeFS caches credentials likewise).

Access key ids are identifiers, not secrets (they travel in clear in SigV4 headers), so an unknown key id
answers at once rather than spending a decryption to look like a known one.
"""

from __future__ import annotations

import base64
import contextlib
import hmac
import logging
import re
import secrets
import string
import time
from collections.abc import Callable
from dataclasses import dataclass

from chalicelib.graveler import errors
from chalicelib.graveler.storage.caches import TTLCache

from . import builtin
from . import errors as auth_errors
from . import secrets as sealed_secrets
from .addresses import AddressSigner
from .authorizer import Authorizer
from .directory import Directory, validate_id
from .errors import DecryptionFailed, InvalidToken
from .keys import ServerKeys
from .policies import Permission
from .ports import AuthStore, SecretCipher
from .records import Credential, User, new_user
from .tokens import Token, TokenSigner

__all__ = ["AuthService"]

log = logging.getLogger(__name__)

CACHE_TTL_SECONDS = 60.0
CACHE_MAX_ENTRIES = 1024
AUTH_FAILED = "error authenticating request"
# How much longer than its last token a revoked chain is remembered: a renewal that checked the chain a moment
# before the logout wrote its revocation, and the clocks of two containers.
CHAIN_LEEWAY_SECONDS = 120
# What the server key is derived for (auth/keys.py): one key per purpose.
TOKEN_PURPOSE = "login-token"
ADDRESS_PURPOSE = "staging-address"
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


@dataclass(frozen=True, slots=True)
class _Known:
    user: User
    secret: str


class AuthService:
    """Creates key pairs, verifies HTTP Basic credentials and login tokens, hands secrets to SigV4 verification,
    and holds the Directory (``directory``) and the Authorizer (``authorizer``) of this deployment."""

    def __init__(self, store: AuthStore, cipher: SecretCipher, clock: Callable[[], float] = time.time) -> None:
        self._store = store
        self._cipher = cipher
        self._clock = clock
        self._known: TTLCache[str, _Known] = TTLCache(CACHE_TTL_SECONDS, clock, CACHE_MAX_ENTRIES)
        self._users: TTLCache[str, User] = TTLCache(CACHE_TTL_SECONDS, clock, CACHE_MAX_ENTRIES)
        self._key_owners: TTLCache[str, str | None] = TTLCache(CACHE_TTL_SECONDS, clock, CACHE_MAX_ENTRIES)
        self.directory = Directory(store, self._changed, clock)
        self.authorizer = Authorizer(self.directory, clock)
        self._keys = ServerKeys(store, cipher)
        self._token_signer: TokenSigner | None = None
        self._address_signer: AddressSigner | None = None

    @property
    def store(self) -> AuthStore:
        return self._store

    def is_initialized(self) -> bool:
        """True once any user exists (setup_lakefs has run, or the local stack installed its admin)."""
        return bool(self._store.list_users(limit=1))

    def setup(
        self, username: str, access_key_id: str | None = None, secret: str | None = None
    ) -> tuple[Credential, str]:
        """Creates the first user and its key pair; a given pair is installed as is.

        The user joins the Admins group (created with the other built-in groups and policies if missing).
        Raises AlreadyExists once initialized, Invalid for a bad username or key pair.
        """
        validate_id("user", username)
        if (access_key_id is None) != (secret is None):
            raise errors.Invalid("an access key needs both access_key_id and secret_access_key")
        if access_key_id is not None and secret is not None:
            validate_key_pair(access_key_id, secret)
        if self.is_initialized():
            raise errors.AlreadyExists("lakelet is already initialized")
        builtin.install(self._store, self._clock)
        self._store.create_user(new_user(username, self._clock()))
        self._store.add_group_member(builtin.ADMINS, username)
        if access_key_id is not None and secret is not None:
            return self._install(access_key_id, secret, username), secret
        return self.create_credentials(username)

    def ensure_admin(self, access_key_id: str, secret: str, username: str = "admin") -> None:
        """Makes sure ``username`` exists, is an Admin and holds exactly this key pair. Idempotent.

        The caller (flags or environment of the local stack) is the source of truth: a key already stored for
        the same user with another secret gets the new secret. Raises Conflict when the key id belongs to
        another user, Invalid for a malformed pair.
        """
        validate_key_pair(access_key_id, secret)
        builtin.install(self._store, self._clock)
        with contextlib.suppress(auth_errors.UserExists):
            self._store.create_user(new_user(username, self._clock()))
        self._store.add_group_member(builtin.ADMINS, username)
        self.authorizer.forget()
        try:
            existing: Credential | None = self._store.get_credential(access_key_id)
        except auth_errors.CredentialNotFound:
            existing = None
        if existing is not None:
            if existing.user_id != username:
                raise errors.Conflict(f"access key {access_key_id} belongs to another user")
            if self._matches(existing, secret):
                return
            self._store.delete_credential(access_key_id)
            self._forget(access_key_id)
        self._install(access_key_id, secret, username)

    def create_credentials(self, user_id: str) -> tuple[Credential, str]:
        """A new random key pair for an existing user. Raises UserNotFound."""
        self._store.get_user(user_id)
        for _ in range(_KEY_CREATE_TRIES):
            secret = generate_secret()
            try:
                return self._install(generate_access_key_id(), secret, user_id), secret
            except errors.AlreadyExists:
                continue  # 36**14 ids make this all but impossible; retrying is cheaper than reasoning about it
        raise errors.TooManyTries("could not find a free access key id")

    def get_credentials(self, user_id: str, access_key_id: str) -> Credential:
        """One of the user's access keys. Raises CredentialNotFound (also for another user's key)."""
        credential = self._store.get_credential(access_key_id)
        if credential.user_id != user_id:
            raise auth_errors.CredentialNotFound(access_key_id)
        return credential

    def list_credentials(self, user_id: str) -> list[Credential]:
        """The user's access keys, sorted by id. Raises UserNotFound."""
        self._store.get_user(user_id)
        return self._store.list_credentials(user_id)

    def delete_credentials(self, user_id: str, access_key_id: str) -> None:
        """Deletes one of the user's access keys. Raises CredentialNotFound (also for another user's key)."""
        self.get_credentials(user_id, access_key_id)
        self._store.delete_credential(access_key_id)
        self._forget(access_key_id)

    def login(self, access_key_id: str, secret: str, ttl_seconds: int) -> Token:
        """A login token for the owner of this key pair, bound to the key and to this generation of the user.
        Raises Unauthorized."""
        user = self.authenticate_basic(access_key_id, secret)
        return self.token_signer().issue(user.id, ttl_seconds, access_key_id, user.generation)

    def authenticate_token(self, token: str) -> User:
        """The user a login token was issued to: the one check of a login token, whatever carries it (a Bearer
        header, a cookie). Raises Unauthorized for a forged, malformed or expired token, and once the access key
        that logged in or that user is gone: a user deleted and created again under the same id has another
        generation, so its old tokens stay dead. What this container read is trusted for CACHE_TTL_SECONDS; a
        deletion made here applies at once, one made through another container within that time. A revocation
        (logout) is never cached: every token request reads it from the store, so it applies at once everywhere."""
        try:
            claims = self.token_signer().verify(token)
        except InvalidToken as e:
            log.info("bearer token refused: %s", e)  # why, for the operator; the caller learns nothing
            raise errors.Unauthorized(AUTH_FAILED) from None
        if self._store.is_token_revoked(claims.chain_id):
            log.info("bearer token refused: its chain was revoked by a logout")
            raise errors.Unauthorized(AUTH_FAILED)
        if self._key_owner(claims.access_key_id) != claims.user_id:
            log.info("bearer token refused: its access key is gone or changed hands")
            raise errors.Unauthorized(AUTH_FAILED)
        user = self._token_user(claims.user_id)
        if user is None or user.generation != claims.generation:
            log.info("bearer token refused: its user is gone or was created again")
            raise errors.Unauthorized(AUTH_FAILED)
        return user

    def refresh(self, token: str, ttl_seconds: int) -> Token:
        """A new login token for the holder of a valid one (OAuth 2 token exchange, as Iceberg REST clients renew
        theirs before it expires): the same user, key, generation and chain, with a new expiry. Raises
        Unauthorized for a token ``authenticate_token`` refuses: a logout (with any token of the chain), a deleted
        key or user end the chain, the tokens renewed from it included."""
        user = self.authenticate_token(token)
        claims = self.token_signer().verify(token)
        return self.token_signer().issue(
            user.id, ttl_seconds, claims.access_key_id, user.generation, chain_id=claims.chain_id
        )

    def logout(self, token: str, chain_ttl_seconds: int = 0) -> bool:
        """Revokes the token's chain (the login it came from and every token renewed from it, before or after
        this one) for every container at once (the store holds the revocation). No token of the chain is issued
        once the revocation is written (a renewal checks it first), so every one of them expires within one token
        lifetime of now (``chain_ttl_seconds``, the lifetime renewals get; this token's own at least), plus the
        clocks' leeway: the revocation is kept until then. Returns False, revoking nothing, for a token that does
        not verify (forged, malformed or already expired): it opens nothing, and a logout must not fail for it."""
        try:
            claims = self.token_signer().verify(token)
        except InvalidToken:
            return False
        lifetime = max(chain_ttl_seconds, claims.expires - claims.issued)
        until = max(claims.expires, int(self._clock()) + lifetime) + CHAIN_LEEWAY_SECONDS
        self._store.revoke_token(claims.chain_id, until)
        return True

    def _key_owner(self, access_key_id: str) -> str | None:
        """The user id an access key belongs to (None if it does not exist), cached without its secret."""

        def load() -> str | None:
            try:
                return self._store.get_credential(access_key_id).user_id
            except auth_errors.CredentialNotFound:
                return None

        return self._key_owners.lookup(access_key_id, load)

    def _token_user(self, user_id: str) -> User | None:
        try:
            return self._users.lookup(user_id, lambda: self._store.get_user(user_id))
        except auth_errors.UserNotFound:
            return None  # not cached: a user created next is seen at once

    def authorize(self, user: User, permissions: list[Permission]) -> None:
        """Raises PermissionDenied (HTTP 403) unless the user's policies allow every permission."""
        self.authorizer.check(user.id, permissions)

    def token_signer(self) -> TokenSigner:
        if self._token_signer is None:
            self._token_signer = TokenSigner(self._keys.key(TOKEN_PURPOSE), self._clock)
        return self._token_signer

    def address_signer(self) -> AddressSigner:
        if self._address_signer is None:
            self._address_signer = AddressSigner(self._keys.key(ADDRESS_PURPOSE), self._clock)
        return self._address_signer

    def authenticate_basic(self, access_key_id: str, secret: str) -> User:
        """The user owning this key pair. Raises Unauthorized on any mismatch (unknown key, wrong secret)."""
        known = self._known.fresh(access_key_id)
        if known is None:
            try:
                known = self._load(access_key_id)
            except auth_errors.CredentialNotFound:
                raise errors.Unauthorized(AUTH_FAILED) from None
            if _same(known.secret, secret):
                self._known.put(access_key_id, known)
        if not _same(known.secret, secret):
            raise errors.Unauthorized(AUTH_FAILED)
        return known.user

    def secret_for_signing(self, access_key_id: str) -> tuple[User, str]:
        """The key's user and its secret in clear, for verifying a SigV4 signature (S3 gateway).

        Raises CredentialNotFound for an unknown key, a key whose user is gone, or one that does not decrypt.
        The caller must compare signatures in constant time and never log the secret.
        """
        known = self._known.fresh(access_key_id)
        if known is None:
            known = self._load(access_key_id)
            self._known.put(access_key_id, known)
        return known.user, known.secret

    # -- internals ----------------------------------------------------------------------------------------

    def _install(self, access_key_id: str, secret: str, user_id: str) -> Credential:
        sealed = sealed_secrets.seal(self._cipher, access_key_id, secret)
        credential = Credential(access_key_id, sealed, user_id, int(self._clock()))
        self._store.create_credential(credential)
        return credential

    def _matches(self, credential: Credential, secret: str) -> bool:
        try:
            stored = sealed_secrets.unseal(self._cipher, credential.access_key_id, credential.encrypted_secret)
        except DecryptionFailed:
            return False
        return _same(stored, secret)

    def _load(self, access_key_id: str) -> _Known:
        """Reads and decrypts the key. Raises CredentialNotFound when it cannot serve (see secret_for_signing)."""
        credential = self._store.get_credential(access_key_id)
        try:
            secret = sealed_secrets.unseal(self._cipher, access_key_id, credential.encrypted_secret)
        except DecryptionFailed as e:
            # Corrupt or tampered row: nobody can authenticate with it. The message names the key, not the secret.
            log.error("access key %s: %s", access_key_id, e)
            raise auth_errors.CredentialNotFound(access_key_id) from None
        try:
            user = self._store.get_user(credential.user_id)
        except auth_errors.UserNotFound:
            raise auth_errors.CredentialNotFound(access_key_id) from None
        return _Known(user, secret)

    def _forget(self, access_key_id: str) -> None:
        self._known.drop(access_key_id)
        self._key_owners.drop(access_key_id)

    def _changed(self, user_id: str | None) -> None:
        """The Directory changed something: forget cached permissions, and a deleted user's keys."""
        if user_id is not None:
            self._known.drop_where(lambda known: known.user.id == user_id)
            self._key_owners.drop_where(lambda owner: owner == user_id)
            self._users.drop(user_id)
        self.authorizer.forget()


def _same(stored: str, given: str) -> bool:
    return hmac.compare_digest(stored.encode("utf-8"), given.encode("utf-8"))
