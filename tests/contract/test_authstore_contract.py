"""AuthStore contract: the in-memory twin and DynamoAuthStore (on moto) behave the same."""

from __future__ import annotations

import pytest

from chalicelib.auth.ports import AuthStore
from chalicelib.auth.records import Credential, User
from chalicelib.graveler import errors


def make_credential(access_key_id: str, user_id: str, n: int = 0) -> Credential:
    return Credential(
        access_key_id=access_key_id,
        secret_hash=f"pbkdf2_sha256$1000$salt{n}$hash-of-{access_key_id}",
        user_id=user_id,
        creation_date=1_700_000_000 + n,
    )


# users


def test_user_round_trip(auth_store: AuthStore) -> None:
    user = User(id="admin", creation_date=1_700_000_000)
    auth_store.create_user(user)
    assert auth_store.get_user("admin") == user


def test_create_existing_user_keeps_the_first(auth_store: AuthStore) -> None:
    auth_store.create_user(User(id="alice", creation_date=1))
    with pytest.raises(errors.UserExists):
        auth_store.create_user(User(id="alice", creation_date=2))
    assert auth_store.get_user("alice") == User(id="alice", creation_date=1)


def test_get_missing_user(auth_store: AuthStore) -> None:
    with pytest.raises(errors.UserNotFound):
        auth_store.get_user("nobody")


def test_list_users_sorted_and_paged(auth_store: AuthStore) -> None:
    ids = ["mallory", "alice", "bob", "Zed", "carol@example.com", "a#b", "élodie"]
    for n, user_id in enumerate(ids):
        auth_store.create_user(User(id=user_id, creation_date=n))
    # An access key must not show up as a user.
    auth_store.create_credential(make_credential("AKIAUSERLIST", "alice"))
    expected = sorted(ids)
    listed = auth_store.list_users()
    assert [u.id for u in listed] == expected
    assert all(u.creation_date == ids.index(u.id) for u in listed)
    assert [u.id for u in auth_store.list_users(limit=2)] == expected[:2]
    assert [u.id for u in auth_store.list_users(after="alice", limit=2)] == ["bob", "carol@example.com"]
    assert auth_store.list_users(after="élodie") == []
    seen: list[str] = []
    after = ""
    while page := auth_store.list_users(after=after, limit=3):
        seen.extend(u.id for u in page)
        after = page[-1].id
    assert seen == expected


def test_no_users(auth_store: AuthStore) -> None:
    assert auth_store.list_users() == []


# access keys


def test_credential_round_trip(auth_store: AuthStore) -> None:
    credential = make_credential("AKIAIOSFODNN7EXAMPLE", "admin", 3)
    auth_store.create_credential(credential)
    assert auth_store.get_credential("AKIAIOSFODNN7EXAMPLE") == credential


def test_create_existing_credential_keeps_the_first(auth_store: AuthStore) -> None:
    first = make_credential("AKIADUP", "alice", 1)
    auth_store.create_credential(first)
    with pytest.raises(errors.AlreadyExists):
        auth_store.create_credential(make_credential("AKIADUP", "alice", 2))
    with pytest.raises(errors.AlreadyExists):
        auth_store.create_credential(make_credential("AKIADUP", "bob", 3))
    assert auth_store.get_credential("AKIADUP") == first
    assert auth_store.list_credentials("alice") == [first]
    assert auth_store.list_credentials("bob") == []


def test_get_missing_credential(auth_store: AuthStore) -> None:
    with pytest.raises(errors.CredentialNotFound):
        auth_store.get_credential("AKIANOPE")


def test_list_credentials_of_one_user_sorted(auth_store: AuthStore) -> None:
    alice = [make_credential(akid, "alice", n) for n, akid in enumerate(["AKIAC", "AKIAA", "AKIAB"])]
    bob = [make_credential("AKIAZ", "bob"), make_credential("AKIAD", "bob")]
    # "a" and "a#b" must not see each other's keys whatever the storage layout.
    prefixed = [make_credential("AKIAP", "a"), make_credential("AKIAQ", "a#b")]
    for credential in alice + bob + prefixed:
        auth_store.create_credential(credential)
    assert auth_store.list_credentials("alice") == sorted(alice, key=lambda c: c.access_key_id)
    assert auth_store.list_credentials("bob") == sorted(bob, key=lambda c: c.access_key_id)
    assert auth_store.list_credentials("a") == [prefixed[0]]
    assert auth_store.list_credentials("a#b") == [prefixed[1]]
    assert auth_store.list_credentials("nobody") == []


def test_delete_credential(auth_store: AuthStore) -> None:
    keep, drop = make_credential("AKIAKEEP", "alice"), make_credential("AKIADROP", "alice")
    auth_store.create_credential(keep)
    auth_store.create_credential(drop)
    auth_store.delete_credential("AKIADROP")
    with pytest.raises(errors.CredentialNotFound):
        auth_store.get_credential("AKIADROP")
    assert auth_store.list_credentials("alice") == [keep]
    with pytest.raises(errors.CredentialNotFound):
        auth_store.delete_credential("AKIADROP")
    # The key id is free again, for anyone.
    again = make_credential("AKIADROP", "bob", 9)
    auth_store.create_credential(again)
    assert auth_store.get_credential("AKIADROP") == again
    assert auth_store.list_credentials("bob") == [again]
    assert auth_store.list_credentials("alice") == [keep]


def test_delete_missing_credential(auth_store: AuthStore) -> None:
    with pytest.raises(errors.CredentialNotFound):
        auth_store.delete_credential("AKIANOPE")
