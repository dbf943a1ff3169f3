"""The /auth API in lakeFS's shapes: login and Bearer tokens, users, access keys, groups, policies."""

from __future__ import annotations

import dataclasses
from typing import Any

import lakefs_sdk
import pytest
from chalice.test import Client

from chalicelib import wiring

from .support import Api, assert_error, body_of, conforms

POLICY = {
    "id": "sales-readers",
    "statement": [
        {"effect": "allow", "action": ["fs:Read*", "fs:List*"], "resource": "arn:lakefs:fs:::repository/sales/*"},
        {"effect": "deny", "action": ["fs:ReadObject"], "resource": "arn:lakefs:fs:::repository/sales/object/hr/*"},
    ],
}


def bearer(client: Client, token: str) -> Api:
    api = Api(client, None)
    original = api.request

    def request(method: str, path: str, **kw: Any):  # type: ignore[no-untyped-def]
        headers = {"authorization": f"Bearer {token}", **kw.pop("headers", {})}
        return original(method, path, headers=headers, **kw)

    api.request = request  # type: ignore[method-assign]
    return api


def login(anonymous: Api, key: str, secret: str) -> lakefs_sdk.AuthenticationToken:
    response = anonymous.post("/auth/login", json_body={"access_key_id": key, "secret_access_key": secret})
    assert response.status_code == 200, response.body
    return conforms(lakefs_sdk.AuthenticationToken, body_of(response))


def test_login_token_works_as_a_bearer_token(
    client: Client, anonymous: Api, credentials: tuple[str, str], services: wiring.Services
) -> None:
    token = login(anonymous, *credentials)
    assert token.token_expiration > 0
    as_admin = bearer(client, token.token)
    me = conforms(lakefs_sdk.CurrentUser, body_of(as_admin.get("/user")))
    assert me.user.id == "admin"
    assert as_admin.get("/repositories").status_code == 200
    for bad in (token.token + "x", token.token.replace(".", "", 1), "", "Bearer"):
        assert_error(bearer(client, bad).get("/user"), 401)
    assert_error(anonymous.post("/auth/login", json_body={"access_key_id": credentials[0]}), 400)
    assert_error(anonymous.post("/auth/login", json_body={"access_key_id": "AKIANOPE", "secret_access_key": "x"}), 401)


def test_tokens_expire(client: Client, anonymous: Api, credentials: tuple[str, str], services: wiring.Services) -> None:
    services.settings = dataclasses.replace(services.settings, login_token_seconds=-1)
    token = login(anonymous, *credentials)
    assert_error(bearer(client, token.token).get("/user"), 401)


def test_users_and_their_keys(api: Api, anonymous: Api) -> None:
    created = api.post("/auth/users", json_body={"id": "jane"})
    assert created.status_code == 201
    jane = conforms(lakefs_sdk.User, body_of(created))
    assert jane.id == "jane"
    assert_error(api.post("/auth/users", json_body={"id": "jane"}), 409)
    assert_error(api.post("/auth/users", json_body={"id": "has space"}), 400)
    assert_error(api.post("/auth/users", json_body={}), 400)
    listed = conforms(lakefs_sdk.UserList, body_of(api.get("/auth/users")))
    assert [u.id for u in listed.results] == ["admin", "jane"]
    paged = conforms(lakefs_sdk.UserList, body_of(api.get("/auth/users", query={"amount": 1})))
    assert [u.id for u in paged.results] == ["admin"] and paged.pagination.has_more
    assert paged.pagination.next_offset == "admin"
    assert conforms(lakefs_sdk.User, body_of(api.get("/auth/users/jane"))).id == "jane"
    assert_error(api.get("/auth/users/nobody"), 404)

    key = api.post("/auth/users/jane/credentials")
    assert key.status_code == 201
    pair = conforms(lakefs_sdk.CredentialsWithSecret, body_of(key))
    keys = conforms(lakefs_sdk.CredentialsList, body_of(api.get("/auth/users/jane/credentials")))
    assert [k.access_key_id for k in keys.results] == [pair.access_key_id]
    assert "secret_access_key" not in body_of(api.get("/auth/users/jane/credentials"))["results"][0]
    one = conforms(lakefs_sdk.Credentials, body_of(api.get(f"/auth/users/jane/credentials/{pair.access_key_id}")))
    assert one.access_key_id == pair.access_key_id
    assert_error(api.get(f"/auth/users/admin/credentials/{pair.access_key_id}"), 404)  # not admin's key
    assert_error(api.post("/auth/users/nobody/credentials"), 404)
    # jane is in no group: she authenticates (GET /user) but may do nothing else.
    as_jane = Api(api.client, (pair.access_key_id, pair.secret_access_key))
    assert body_of(as_jane.get("/user"))["user"]["id"] == "jane"
    assert_error(as_jane.get("/repositories"), 403)

    assert api.delete(f"/auth/users/jane/credentials/{pair.access_key_id}").status_code == 204
    assert_error(as_jane.get("/user"), 401)
    assert_error(api.delete(f"/auth/users/jane/credentials/{pair.access_key_id}"), 404)
    assert api.delete("/auth/users/jane").status_code == 204
    assert_error(api.delete("/auth/users/jane"), 404)


def test_groups_and_members(api: Api) -> None:
    api.post("/auth/users", json_body={"id": "jane"})
    groups = conforms(lakefs_sdk.GroupList, body_of(api.get("/auth/groups")))
    assert [g.id for g in groups.results] == ["Admins", "Developers", "SuperUsers", "Viewers"]
    created = api.post("/auth/groups", json_body={"id": "analysts", "description": "read sales"})
    assert created.status_code == 201
    assert conforms(lakefs_sdk.Group, body_of(created)).description == "read sales"
    assert_error(api.post("/auth/groups", json_body={"id": "analysts"}), 409)
    assert conforms(lakefs_sdk.Group, body_of(api.get("/auth/groups/analysts"))).id == "analysts"
    assert api.request("PUT", "/auth/groups/analysts/members/jane").status_code == 201
    assert_error(api.request("PUT", "/auth/groups/analysts/members/nobody"), 404)
    assert_error(api.request("PUT", "/auth/groups/nogroup/members/jane"), 404)
    members = conforms(lakefs_sdk.UserList, body_of(api.get("/auth/groups/analysts/members")))
    assert [u.id for u in members.results] == ["jane"]
    mine = conforms(lakefs_sdk.GroupList, body_of(api.get("/auth/users/jane/groups")))
    assert [g.id for g in mine.results] == ["analysts"]
    assert api.delete("/auth/groups/analysts/members/jane").status_code == 204
    assert_error(api.delete("/auth/groups/analysts/members/jane"), 404)
    assert api.delete("/auth/groups/analysts").status_code == 204
    assert_error(api.get("/auth/groups/analysts"), 404)


def test_policies_and_attachments(api: Api) -> None:
    created = api.post("/auth/policies", json_body=POLICY)
    assert created.status_code == 201
    policy = conforms(lakefs_sdk.Policy, body_of(created))
    assert [s.effect for s in policy.statement] == ["allow", "deny"]
    assert_error(api.post("/auth/policies", json_body=POLICY), 409)
    fetched = conforms(lakefs_sdk.Policy, body_of(api.get("/auth/policies/sales-readers")))
    assert fetched.to_dict() == policy.to_dict()
    names = [p.id for p in conforms(lakefs_sdk.PolicyList, body_of(api.get("/auth/policies"))).results]
    assert "sales-readers" in names and "FSFullAccess" in names

    updated = {**POLICY, "statement": POLICY["statement"][:1]}
    response = api.request("PUT", "/auth/policies/sales-readers", json_body=updated)
    assert len(conforms(lakefs_sdk.Policy, body_of(response)).statement) == 1
    assert_error(api.request("PUT", "/auth/policies/other", json_body=updated), 400)  # ids differ
    assert_error(api.request("PUT", "/auth/policies/missing", json_body={**updated, "id": "missing"}), 404)

    api.post("/auth/users", json_body={"id": "jane"})
    assert api.request("PUT", "/auth/users/jane/policies/sales-readers").status_code == 201
    assert api.request("PUT", "/auth/groups/Viewers/policies/sales-readers").status_code == 201
    assert_error(api.request("PUT", "/auth/users/jane/policies/missing"), 404)
    attached = conforms(lakefs_sdk.PolicyList, body_of(api.get("/auth/users/jane/policies")))
    assert [p.id for p in attached.results] == ["sales-readers"]
    api.request("PUT", "/auth/groups/Viewers/members/jane")
    effective = body_of(api.get("/auth/users/jane/policies", query={"effective": "true"}))
    assert [p["id"] for p in effective["results"]] == ["AuthManageOwnCredentials", "FSReadAll", "sales-readers"]
    group_policies = conforms(lakefs_sdk.PolicyList, body_of(api.get("/auth/groups/Viewers/policies")))
    assert [p.id for p in group_policies.results] == ["AuthManageOwnCredentials", "FSReadAll", "sales-readers"]
    assert api.delete("/auth/users/jane/policies/sales-readers").status_code == 204
    assert_error(api.delete("/auth/users/jane/policies/sales-readers"), 404)
    assert api.delete("/auth/policies/sales-readers").status_code == 204
    group_policies = conforms(lakefs_sdk.PolicyList, body_of(api.get("/auth/groups/Viewers/policies")))
    assert [p.id for p in group_policies.results] == ["AuthManageOwnCredentials", "FSReadAll"]


@pytest.mark.parametrize(
    "body",
    [
        {"id": "p"},
        {"id": "p", "statement": []},
        {"id": "p", "statement": [{"effect": "maybe", "action": ["fs:*"], "resource": "*"}]},
        {"id": "p", "statement": [{"effect": "allow", "action": [], "resource": "*"}]},
        {"id": "p", "statement": [{"effect": "allow", "action": ["s3:GetObject"], "resource": "*"}]},
        {"id": "p", "statement": [{"effect": "allow", "action": ["fs:*"], "resource": "bucket/*"}]},
        {"id": "p", "statement": [{"effect": "allow", "action": "fs:*", "resource": "*"}]},
        {"id": "p", "statement": ["allow"]},
        {"statement": [{"effect": "allow", "action": ["fs:*"], "resource": "*"}]},
        # lakeFS decodes creation_date as an int64 before ignoring it: anything else is its 400.
        *(
            {**POLICY, "id": "p", "creation_date": bad}
            for bad in ("1700000000", 1.5, 1.0, 1e3, True, [1], {"s": 1}, 2**63, -(2**63) - 1)
        ),
    ],
)
def test_bad_policies_are_400(api: Api, body: dict[str, Any]) -> None:
    assert_error(api.post("/auth/policies", json_body=body), 400)
    assert_error(api.get("/auth/policies/p"), 404)


@pytest.mark.parametrize("stamp", [None, 0, -5, 1_700_000_000, 2**63 - 1])
def test_an_integer_creation_date_is_accepted_and_ignored(api: Api, stamp: int | None) -> None:
    # As lakeFS: the server stamps its own date, on create and on update alike.
    created = conforms(
        lakefs_sdk.Policy, body_of(api.post("/auth/policies", json_body={**POLICY, "creation_date": stamp}))
    )
    assert (
        created.creation_date is not None and created.creation_date > 1_700_000_000 and created.creation_date != stamp
    )
    updated = api.request("PUT", "/auth/policies/sales-readers", json_body={**POLICY, "creation_date": stamp})
    assert updated.status_code == 200
    assert conforms(lakefs_sdk.Policy, body_of(updated)).creation_date != stamp
    bad = api.request("PUT", "/auth/policies/sales-readers", json_body={**POLICY, "creation_date": "yesterday"})
    assert "creation_date" in assert_error(bad, 400)


def test_setup_makes_the_first_user_an_admin(anonymous: Api, client: Client, services: wiring.Services) -> None:
    response = anonymous.post("/setup_lakefs", json_body={"username": "founder"})
    pair = conforms(lakefs_sdk.CredentialsWithSecret, body_of(response))
    founder = Api(client, (pair.access_key_id, pair.secret_access_key))
    groups = conforms(lakefs_sdk.GroupList, body_of(founder.get("/auth/users/founder/groups")))
    assert [g.id for g in groups.results] == ["Admins"]
    assert founder.post("/auth/users", json_body={"id": "second"}).status_code == 201
