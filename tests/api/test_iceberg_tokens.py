"""Chains of tokens (issue 40, item 4): a token renewed by the catalog's token exchange belongs to the chain of the
login it came from, and the chain ends, every token of it, at a logout (with any of its tokens), at the deletion
of the access key that logged in, and at the deletion of the user."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

import pytest
from chalice.test import Client

from chalicelib.adapters.memory import MemoryAuthStore, MemoryCipher
from chalicelib.auth.service import AuthService

from .support import Api, body_of

Creds = tuple[str, str]
FORM = {"content-type": "application/x-www-form-urlencoded"}
EXCHANGE = (
    "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Atoken-exchange"
    "&subject_token_type=urn%3Aietf%3Aparams%3Aoauth%3Atoken-type%3Aaccess_token&subject_token="
)


def _token(client: Client, form: str) -> Any:
    return client.http.request("POST", "/iceberg/api/v1/oauth/tokens", headers=FORM, body=form.encode())


def _login(client: Client, creds: Creds) -> str:
    form = f"grant_type=client_credentials&client_id={creds[0]}&client_secret={quote(creds[1], safe='')}"
    response = _token(client, form)
    assert response.status_code == 200, response.body
    return str(json.loads(response.body)["access_token"])


def _renew(client: Client, token: str) -> Any:
    return _token(client, EXCHANGE + quote(token, safe=""))


def _chain(client: Client, creds: Creds) -> list[str]:
    """A login and two renewals, each from the one before."""
    tokens = [_login(client, creds)]
    for _ in range(2):
        renewed = _renew(client, tokens[-1])
        assert renewed.status_code == 200, renewed.body
        tokens.append(str(json.loads(renewed.body)["access_token"]))
    assert len(set(tokens)) == 3
    return tokens


def _works(client: Client, token: str) -> bool:
    response = client.http.request("GET", "/iceberg/api/v1/config", headers={"authorization": f"Bearer {token}"})
    assert response.status_code in (200, 401), response.body
    return response.status_code == 200


def _ended(client: Client, tokens: list[str]) -> None:
    assert not any(_works(client, t) for t in tokens)
    for token in tokens:
        refused = _renew(client, token)
        assert refused.status_code == 401 and json.loads(refused.body)["error"] == "invalid_client"


@pytest.fixture
def olive(api: Api) -> Creds:
    assert api.post("/auth/users", json_body={"id": "olive"}).status_code == 201
    key = body_of(api.post("/auth/users/olive/credentials"))
    return key["access_key_id"], key["secret_access_key"]


@pytest.mark.parametrize("logged_out", [0, 1, 2])
def test_a_logout_with_any_token_ends_the_whole_chain(client: Client, olive: Creds, logged_out: int) -> None:
    tokens = _chain(client, olive)
    other = _chain(client, olive)  # another login of the same key: another chain
    assert all(_works(client, t) for t in tokens + other)
    logout = client.http.request(
        "POST", "/api/v1/auth/logout", headers={"authorization": f"Bearer {tokens[logged_out]}"}
    )
    assert logout.status_code == 204
    _ended(client, tokens)
    assert all(_works(client, t) for t in other)


def test_deleting_the_key_ends_the_chain(api: Api, client: Client, olive: Creds) -> None:
    tokens = _chain(client, olive)
    spare = body_of(api.post("/auth/users/olive/credentials"))
    other = _chain(client, (spare["access_key_id"], spare["secret_access_key"]))
    assert api.delete(f"/auth/users/olive/credentials/{olive[0]}").status_code == 204
    _ended(client, tokens)
    assert all(_works(client, t) for t in other)


def test_deleting_the_user_ends_the_chain(api: Api, client: Client, olive: Creds) -> None:
    tokens = _chain(client, olive)
    assert api.delete("/auth/users/olive").status_code == 204
    _ended(client, tokens)
    # Created again under the same name, with a new key: the old chain stays dead.
    assert api.post("/auth/users", json_body={"id": "olive"}).status_code == 201
    _ended(client, tokens)


class _Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


def test_a_revoked_chain_is_remembered_until_its_last_token_expires() -> None:
    """The revocation outlives the token logged out with: a renewal issued just before the logout lives a whole
    token lifetime after it, and the store may forget a revocation once its time is past."""
    clock = _Clock()
    store = MemoryAuthStore(clock)
    auth = AuthService(store, MemoryCipher(), clock)
    credential, secret = auth.setup("admin")
    first = auth.login(credential.access_key_id, secret, 100)
    clock.now += 90
    renewed = auth.refresh(first.value, 100)
    auth.logout(first.value, chain_ttl_seconds=100)
    clock.now += 95  # past the first token's expiry, within the renewed one's
    store.revoke_token("another", int(clock.now) + 1)  # the twin forgets what has expired, as DynamoDB's TTL does
    with pytest.raises(Exception, match="error authenticating"):
        auth.authenticate_token(renewed.value)
