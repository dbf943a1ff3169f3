"""Guarantee 8: login tokens die with their key and their user.

Through the local API server: a token keeps working only while the access key that logged in and the user
(that very creation of it) exist; a user deleted and created again under the same name, even in Admins, never
inherits the old tokens. Across containers (two AuthServices on one store) a deletion refuses the token within
the cache lifetime, CACHE_TTL_SECONDS.
"""

from __future__ import annotations

import json

import pytest

from chalicelib.adapters.memory import MemoryAuthStore, MemoryCipher
from chalicelib.auth.service import CACHE_TTL_SECONDS, AuthService
from chalicelib.graveler import errors

from .servers import Stack, stack

__all__ = ["stack"]


def _json(stack: Stack, method: str, target: str, body: object = None) -> tuple[int, object]:
    raw = b"" if body is None else json.dumps(body).encode()
    response = stack.api_request(method, target, raw, {"Content-Type": "application/json"})
    return response.status, response.json() if response.body else None


def _new_user(stack: Stack, name: str, group: str) -> tuple[str, str]:
    assert _json(stack, "POST", "/auth/users", {"id": name})[0] == 201
    assert _json(stack, "PUT", f"/auth/groups/{group}/members/{name}")[0] == 201
    status, created = _json(stack, "POST", f"/auth/users/{name}/credentials")
    assert status == 201
    assert isinstance(created, dict)
    return created["access_key_id"], created["secret_access_key"]


def _login(stack: Stack, key: str, secret: str) -> str:
    response = stack.api_request(
        "POST",
        "/auth/login",
        json.dumps({"access_key_id": key, "secret_access_key": secret}).encode(),
        {"Content-Type": "application/json"},
        auth=False,
    )
    assert response.status == 200, response.body
    return str(response.json()["token"])


def _with_token(stack: Stack, token: str, target: str) -> int:
    return stack.api_request("GET", target, headers={"Authorization": f"Bearer {token}"}, auth=False).status


def test_deleting_the_access_key_refuses_its_token(stack: Stack) -> None:
    key, secret = _new_user(stack, "keyholder", "Viewers")
    assert _json(stack, "POST", "/auth/users/keyholder/credentials")[0] == 201  # a second key stays
    token = _login(stack, key, secret)
    assert _with_token(stack, token, "/repositories") == 200
    assert _json(stack, "DELETE", f"/auth/users/keyholder/credentials/{key}")[0] == 204
    assert _with_token(stack, token, "/repositories") == 401  # the user still exists, with another key


def test_a_deleted_viewer_recreated_as_admin_does_not_inherit_old_tokens(stack: Stack) -> None:
    key, secret = _new_user(stack, "mallory", "Viewers")
    token = _login(stack, key, secret)
    assert _with_token(stack, token, "/repositories") == 200
    assert _with_token(stack, token, "/auth/users") == 403
    assert _json(stack, "DELETE", "/auth/users/mallory")[0] == 204
    assert _with_token(stack, token, "/repositories") == 401
    _new_user(stack, "mallory", "Admins")
    assert _with_token(stack, token, "/auth/users") == 401
    assert _with_token(stack, token, "/repositories") == 401


class Clock:
    def __init__(self) -> None:
        self.now = 1_700_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize("delete", ["key", "user"])
def test_a_deletion_in_another_container_refuses_the_token_within_the_cache_lifetime(delete: str) -> None:
    store, cipher, clock = MemoryAuthStore(), MemoryCipher(), Clock()
    here, there = AuthService(store, cipher, clock), AuthService(store, cipher, clock)
    here.setup("admin")
    here.directory.create_user("bob")
    credential, secret = here.create_credentials("bob")
    token = here.login(credential.access_key_id, secret, 3600).value
    assert here.authenticate_token(token).id == "bob"
    if delete == "key":
        there.delete_credentials("bob", credential.access_key_id)
    else:
        there.directory.delete_user("bob")
        there.directory.create_user("bob")  # same name, another user
    with pytest.raises(errors.Unauthorized):
        there.authenticate_token(token)  # the container that deleted knows at once
    clock.now += CACHE_TTL_SECONDS + 1
    with pytest.raises(errors.Unauthorized):
        here.authenticate_token(token)  # the other one within the cache lifetime


def test_logout_revokes_the_token_in_every_container_at_once() -> None:
    """Logout is a write to the auth store, and every token check reads it uncached: the container that did
    not serve the logout refuses the token on its very next request, with its caches warm."""
    store, cipher, clock = MemoryAuthStore(), MemoryCipher(), Clock()
    here, there = AuthService(store, cipher, clock), AuthService(store, cipher, clock)
    here.setup("admin")
    here.directory.create_user("bob")
    credential, secret = here.create_credentials("bob")
    token = here.login(credential.access_key_id, secret, 3600).value
    other = here.login(credential.access_key_id, secret, 3600).value
    assert here.authenticate_token(token).id == "bob"  # here's caches now hold bob and his key
    assert there.logout(token) is True
    with pytest.raises(errors.Unauthorized):
        here.authenticate_token(token)
    with pytest.raises(errors.Unauthorized):
        there.authenticate_token(token)
    assert here.authenticate_token(other).id == "bob"  # another session of the same user goes on
    assert there.logout("not.a.token") is False  # nothing to revoke, and no error


def test_a_token_after_logout_is_refused_over_http(stack: Stack) -> None:
    key, secret = _new_user(stack, "leaver", "Viewers")
    token = _login(stack, key, secret)
    assert _with_token(stack, token, "/repositories") == 200
    logout = stack.api_request("POST", "/auth/logout", headers={"Authorization": f"Bearer {token}"}, auth=False)
    assert logout.status == 204
    assert _with_token(stack, token, "/repositories") == 401
    cookie = {"Cookie": f"internal_auth_session={token}"}
    assert stack.api_request("GET", "/repositories", headers=cookie, auth=False).status == 401
