"""AuthService: setup, key pairs, the stored hash and the verification cache."""

from __future__ import annotations

import re

import pytest

from chalicelib.adapters.memory import MemoryAuthStore
from chalicelib.auth import service as auth_service
from chalicelib.auth.records import User
from chalicelib.auth.service import AuthService, hash_secret, verify_secret
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


@pytest.fixture
def auth(store: MemoryAuthStore, clock: FakeClock) -> AuthService:
    return AuthService(store, clock)


@pytest.fixture
def verifications(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Counts real KDF verifications (cache misses)."""
    calls: list[str] = []
    real = auth_service.verify_secret

    def counting(stored: str, secret: str) -> bool:
        calls.append(stored)
        return real(stored, secret)

    monkeypatch.setattr(auth_service, "verify_secret", counting)
    return calls


def test_setup_creates_the_admin_with_a_lakefs_shaped_key_pair(auth: AuthService, store: MemoryAuthStore) -> None:
    assert not auth.is_initialized()
    credential, secret = auth.setup("admin")
    assert auth.is_initialized()
    assert re.fullmatch(r"AKIAJ[A-Z0-9]{14}Q", credential.access_key_id)
    assert re.fullmatch(r"[A-Za-z0-9+/]{40}", secret)
    assert credential.user_id == "admin" and credential.creation_date == 1_700_000_000
    stored = store.get_credential(credential.access_key_id)
    assert secret not in stored.secret_hash
    assert stored.secret_hash.startswith("pbkdf2_sha256$")
    assert auth.authenticate_basic(credential.access_key_id, secret) == User("admin", 1_700_000_000)


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
    orphan = hash_secret("orphan-secret-123")
    from chalicelib.auth.records import Credential

    store.create_credential(Credential("AKIAJORPHAN", orphan, "ghost", 0))
    with pytest.raises(errors.Unauthorized):
        auth.authenticate_basic("AKIAJORPHAN", "orphan-secret-123")


def test_successes_are_cached_until_the_ttl(auth: AuthService, clock: FakeClock, verifications: list[str]) -> None:
    credential, secret = auth.setup("admin")
    for _ in range(3):
        auth.authenticate_basic(credential.access_key_id, secret)
    assert len(verifications) == 1
    clock.now += auth_service.CACHE_TTL_SECONDS + 1
    auth.authenticate_basic(credential.access_key_id, secret)
    assert len(verifications) == 2


def test_failures_are_never_cached(auth: AuthService, verifications: list[str]) -> None:
    credential, secret = auth.setup("admin")
    for _ in range(3):
        with pytest.raises(errors.Unauthorized):
            auth.authenticate_basic(credential.access_key_id, "wrong-secret-value")
    assert len(verifications) == 3
    # A cached success does not vouch for another secret of the same key.
    auth.authenticate_basic(credential.access_key_id, secret)
    with pytest.raises(errors.Unauthorized):
        auth.authenticate_basic(credential.access_key_id, "wrong-secret-value")


def test_unknown_keys_cost_a_verification_too(auth: AuthService, verifications: list[str]) -> None:
    with pytest.raises(errors.Unauthorized):
        auth.authenticate_basic("AKIAJNOSUCHKEY00000Q", "whatever-secret")
    assert len(verifications) == 1


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
    with pytest.raises(errors.UserNotFound):
        auth.create_credentials("nobody")


def test_hashes_are_salted_and_malformed_hashes_never_verify() -> None:
    assert hash_secret("same-secret") != hash_secret("same-secret")
    stored = hash_secret("same-secret")
    assert verify_secret(stored, "same-secret")
    assert not verify_secret(stored, "other-secret")
    for bad in ("", "plain", "md5$1$00$00", "pbkdf2_sha256$x$00$00", "pbkdf2_sha256$10$zz$00"):
        assert not verify_secret(bad, "same-secret")
