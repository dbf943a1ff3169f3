"""AuthService: setup, key pairs, secrets encrypted at rest, the verification cache and secrets for SigV4."""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping

import pytest

from chalicelib.adapters.memory import MemoryAuthStore, MemoryCipher
from chalicelib.auth import errors as auth_errors
from chalicelib.auth import secrets as sealed
from chalicelib.auth import service as auth_service
from chalicelib.auth.records import Credential
from chalicelib.auth.service import AuthService
from chalicelib.graveler import errors


class FakeClock:
    def __init__(self, now: float = 1_700_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def store() -> MemoryAuthStore:
    return MemoryAuthStore()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


class CountingCipher(MemoryCipher):
    """Counts decryptions: each one is a KMS call on AWS."""

    def __init__(self) -> None:
        super().__init__()
        self.decryptions = 0

    def decrypt(self, ciphertext: bytes, context: Mapping[str, str]) -> bytes:
        self.decryptions += 1
        return super().decrypt(ciphertext, context)


@pytest.fixture
def cipher() -> CountingCipher:
    return CountingCipher()


@pytest.fixture
def auth(store: MemoryAuthStore, cipher: CountingCipher, clock: FakeClock) -> AuthService:
    return AuthService(store, cipher, clock)


def test_setup_creates_the_admin_with_a_lakefs_shaped_key_pair(auth: AuthService, store: MemoryAuthStore) -> None:
    assert not auth.is_initialized()
    credential, secret = auth.setup("admin")
    assert auth.is_initialized()
    assert re.fullmatch(r"AKIAJ[A-Z0-9]{14}Q", credential.access_key_id)
    assert re.fullmatch(r"[A-Za-z0-9+/]{40}", secret)
    assert credential.user_id == "admin" and credential.creation_date == 1_700_000_000
    stored = store.get_credential(credential.access_key_id)
    assert secret not in stored.encrypted_secret
    user = auth.authenticate_basic(credential.access_key_id, secret)
    assert (user.id, user.creation_date) == ("admin", 1_700_000_000) and user.generation


def test_setup_twice_is_already_exists(auth: AuthService) -> None:
    auth.setup("admin")
    with pytest.raises(errors.AlreadyExists):
        auth.setup("other")


def test_setup_installs_a_given_key_pair(auth: AuthService) -> None:
    credential, secret = auth.setup("jane", "AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
    assert credential.access_key_id == "AKIAIOSFODNN7EXAMPLE"
    assert secret == "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    assert auth.authenticate_basic("AKIAIOSFODNN7EXAMPLE", secret).id == "jane"


@pytest.mark.parametrize(
    ("username", "akid", "secret"),
    [
        ("", None, None),
        ("has space", None, None),
        ("admin", "AKIAIOSFODNN7EXAMPLE", None),
        ("admin", None, "a-long-enough-secret"),
        ("admin", "has:colon", "a-long-enough-secret"),
        ("admin", "has/slash", "a-long-enough-secret"),
        ("admin", "AKIAIOSFODNN7EXAMPLE", "short"),
        ("admin", "AKIAIOSFODNN7EXAMPLE", "with a space in it"),
    ],
)
def test_setup_refuses_bad_input(auth: AuthService, username: str, akid: str | None, secret: str | None) -> None:
    with pytest.raises(errors.Invalid):
        auth.setup(username, akid, secret)
    assert not auth.is_initialized()


def test_wrong_secret_unknown_key_and_missing_user_are_unauthorized(auth: AuthService, store: MemoryAuthStore) -> None:
    credential, secret = auth.setup("admin")
    with pytest.raises(errors.Unauthorized):
        auth.authenticate_basic(credential.access_key_id, secret + "x")
    with pytest.raises(errors.Unauthorized):
        auth.authenticate_basic("AKIAJNOSUCHKEY00000Q", secret)
    with pytest.raises(errors.Unauthorized):
        auth.authenticate_basic(credential.access_key_id, "")
    # A key whose user vanished proves nothing.
    store.create_credential(
        Credential("AKIAJORPHAN", sealed.seal(cipher_of(auth), "AKIAJORPHAN", "orphan-123"), "ghost", 0)
    )
    with pytest.raises(errors.Unauthorized):
        auth.authenticate_basic("AKIAJORPHAN", "orphan-123")


def cipher_of(auth: AuthService) -> MemoryCipher:
    cipher = auth._cipher
    assert isinstance(cipher, MemoryCipher)
    return cipher


def test_successes_are_cached_until_the_ttl(auth: AuthService, clock: FakeClock, cipher: CountingCipher) -> None:
    credential, secret = auth.setup("admin")
    for _ in range(3):
        auth.authenticate_basic(credential.access_key_id, secret)
    assert cipher.decryptions == 1
    clock.now += auth_service.CACHE_TTL_SECONDS + 1
    auth.authenticate_basic(credential.access_key_id, secret)
    assert cipher.decryptions == 2


def test_failures_are_never_cached(auth: AuthService, cipher: CountingCipher) -> None:
    credential, secret = auth.setup("admin")
    for _ in range(3):
        with pytest.raises(errors.Unauthorized):
            auth.authenticate_basic(credential.access_key_id, "wrong-secret-value")
    assert cipher.decryptions == 3
    # A cached success does not vouch for another secret of the same key.
    auth.authenticate_basic(credential.access_key_id, secret)
    with pytest.raises(errors.Unauthorized):
        auth.authenticate_basic(credential.access_key_id, "wrong-secret-value")


def test_secrets_are_encrypted_bound_to_their_key(auth: AuthService, store: MemoryAuthStore) -> None:
    one, one_secret = auth.setup("admin")
    two, two_secret = auth.create_credentials("admin")
    # Another key's ciphertext copied onto this row does not decrypt: nobody authenticates with it.
    store.delete_credential(two.access_key_id)
    store.create_credential(Credential(two.access_key_id, one.encrypted_secret, "admin", 0))
    for secret in (one_secret, two_secret):
        with pytest.raises(errors.Unauthorized):
            auth.authenticate_basic(two.access_key_id, secret)
    with pytest.raises(auth_errors.CredentialNotFound):
        auth.secret_for_signing(two.access_key_id)
    assert auth.authenticate_basic(one.access_key_id, one_secret).id == "admin"


def test_secret_for_signing(auth: AuthService, clock: FakeClock, cipher: CountingCipher) -> None:
    credential, secret = auth.setup("admin")
    user, found = auth.secret_for_signing(credential.access_key_id)
    assert (user.id, user.creation_date, found) == ("admin", 1_700_000_000, secret)
    assert auth.secret_for_signing(credential.access_key_id)[1] == secret
    assert cipher.decryptions == 1  # cached, like Basic verifications
    assert auth.authenticate_basic(credential.access_key_id, secret).id == "admin"
    assert cipher.decryptions == 1
    with pytest.raises(auth_errors.CredentialNotFound):
        auth.secret_for_signing("AKIAJNOSUCHKEY00000Q")
    auth.delete_credentials("admin", credential.access_key_id)
    with pytest.raises(auth_errors.CredentialNotFound):
        auth.secret_for_signing(credential.access_key_id)


def test_a_deleted_key_stops_working_at_once_in_this_container(auth: AuthService) -> None:
    auth.setup("admin")
    credential, secret = auth.create_credentials("admin")
    auth.authenticate_basic(credential.access_key_id, secret)  # cached
    with pytest.raises(auth_errors.CredentialNotFound):
        auth.delete_credentials("someone-else", credential.access_key_id)
    auth.delete_credentials("admin", credential.access_key_id)
    with pytest.raises(errors.Unauthorized):
        auth.authenticate_basic(credential.access_key_id, secret)


def test_unknown_keys_spend_no_decryption(auth: AuthService, cipher: CountingCipher) -> None:
    with pytest.raises(errors.Unauthorized):
        auth.authenticate_basic("AKIAJNOSUCHKEY00000Q", "whatever-secret")
    assert cipher.decryptions == 0


def test_secrets_never_reach_the_log(
    auth: AuthService, store: MemoryAuthStore, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    credential, secret = auth.setup("admin", "AKIALOGTEST", "log-test-secret-1")
    auth.authenticate_basic("AKIALOGTEST", "log-test-secret-1")
    with pytest.raises(errors.Unauthorized):
        auth.authenticate_basic("AKIALOGTEST", "wrong-secret-2")
    store.delete_credential("AKIALOGTEST")
    store.create_credential(Credential("AKIALOGTEST", credential.encrypted_secret[:-4] + "AAAA", "admin", 0))
    auth._forget("AKIALOGTEST")
    with pytest.raises(errors.Unauthorized):
        auth.authenticate_basic("AKIALOGTEST", "log-test-secret-1")
    assert "AKIALOGTEST" in caplog.text  # the damaged row is reported by key id
    assert secret not in caplog.text and "wrong-secret-2" not in caplog.text


def test_ensure_admin_is_idempotent(auth: AuthService, store: MemoryAuthStore) -> None:
    auth.ensure_admin("AKIALOCALADMIN", "local-secret-1")
    auth.ensure_admin("AKIALOCALADMIN", "local-secret-1")
    assert [c.access_key_id for c in store.list_credentials("admin")] == ["AKIALOCALADMIN"]
    assert auth.authenticate_basic("AKIALOCALADMIN", "local-secret-1").id == "admin"
    assert auth.is_initialized()


def test_ensure_admin_rotates_a_changed_secret(auth: AuthService) -> None:
    auth.ensure_admin("AKIALOCALADMIN", "local-secret-1")
    auth.authenticate_basic("AKIALOCALADMIN", "local-secret-1")  # now cached
    auth.ensure_admin("AKIALOCALADMIN", "local-secret-2")
    assert auth.authenticate_basic("AKIALOCALADMIN", "local-secret-2").id == "admin"
    with pytest.raises(errors.Unauthorized):
        auth.authenticate_basic("AKIALOCALADMIN", "local-secret-1")


def test_ensure_admin_will_not_take_another_users_key(auth: AuthService) -> None:
    auth.setup("jane", "AKIAJANEKEY", "jane-secret-123")
    with pytest.raises(errors.Conflict):
        auth.ensure_admin("AKIAJANEKEY", "admin-secret-123")
    assert auth.authenticate_basic("AKIAJANEKEY", "jane-secret-123").id == "jane"


def test_create_credentials(auth: AuthService) -> None:
    auth.setup("admin")
    first, first_secret = auth.create_credentials("admin")
    second, second_secret = auth.create_credentials("admin")
    assert first.access_key_id != second.access_key_id and first_secret != second_secret
    assert auth.authenticate_basic(second.access_key_id, second_secret).id == "admin"
    with pytest.raises(auth_errors.UserNotFound):
        auth.create_credentials("nobody")


def test_encryption_is_randomized(auth: AuthService, store: MemoryAuthStore) -> None:
    auth.setup("jane", "AKIAJANEKEY", "same-secret-123")
    auth.ensure_admin("AKIAADMINKEY", "same-secret-123")
    stored = {c.encrypted_secret for c in store.list_credentials("jane") + store.list_credentials("admin")}
    assert len(stored) == 2
