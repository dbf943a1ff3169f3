"""Policy statements with conditions (auth/conditions.py, lakeFS's pkg/auth/condition.go): stored and answered in
lakeFS's shape, and evaluated with the client address the deployment sees, on the API and the S3 gateway alike."""

from __future__ import annotations

import dataclasses
from typing import Any

import lakefs_sdk
import pytest
from chalice.test import Client

from chalicelib import wiring
from chalicelib.auth.conditions import Condition, ConditionError, evaluate
from chalicelib.s3proxy import S3Gateway
from tests.s3proxy.conftest import signed

from .support import Api, assert_error, body_of, conforms

READ_ALL = {"effect": "allow", "action": ["fs:*"], "resource": "*"}


def user_with(api: Api, client: Client, *statements: dict[str, Any]) -> tuple[Api, tuple[str, str]]:
    """A fresh user whose only policy has these statements."""
    policy = {"id": "conditional", "statement": list(statements)}
    assert api.post("/auth/policies", json_body=policy).status_code == 201
    assert api.post("/auth/users", json_body={"id": "carol"}).status_code == 201
    assert api.request("PUT", "/auth/users/carol/policies/conditional").status_code == 201
    pair = body_of(api.post("/auth/users/carol/credentials"))
    keys = (pair["access_key_id"], pair["secret_access_key"])
    return Api(client, keys), keys


def test_conditions_are_stored_in_lakefs_shape(api: Api) -> None:
    statement = {**READ_ALL, "condition": {"IpAddress": {"SourceIp": ["10.0.0.0/8", "192.168.1.7"]}}}
    created = api.post("/auth/policies", json_body={"id": "p", "statement": [statement]})
    assert created.status_code == 201
    policy = conforms(lakefs_sdk.Policy, body_of(api.get("/auth/policies/p")))
    assert policy.statement[0].condition == {"IpAddress": {"SourceIp": ["10.0.0.0/8", "192.168.1.7"]}}


@pytest.mark.parametrize(
    "condition",
    [
        {"IpAddressOrNot": {"SourceIp": ["10.0.0.0/8"]}},
        {"IpAddress": {"SourceIp": ["not-an-ip"]}},
        {"IpAddress": {"SourceIp": [7]}},
        {"IpAddress": ["10.0.0.0/8"]},
        {"IpAddress": {"": ["10.0.0.0/8"]}},
        "IpAddress",
    ],
)
def test_malformed_conditions_are_400(api: Api, condition: Any) -> None:
    body = {"id": "p", "statement": [{**READ_ALL, "condition": condition}]}
    assert_error(api.post("/auth/policies", json_body=body), 400)
    assert_error(api.get("/auth/policies/p"), 404)


# The Chalice test client, like chalice local, reports the client as 127.0.0.1.
@pytest.mark.parametrize(
    ("condition", "allowed"),
    [
        ({"IpAddress": {"SourceIp": ["127.0.0.0/8"]}}, True),
        ({"IpAddress": {"SourceIp": ["10.0.0.0/8", "127.0.0.1"]}}, True),
        ({"IpAddress": {"SourceIp": ["10.0.0.0/8"]}}, False),
        ({"NotIpAddress": {"SourceIp": ["10.0.0.0/8"]}}, True),
        ({"NotIpAddress": {"SourceIp": ["127.0.0.1/32"]}}, False),
        ({"IpAddress": {"VpcId": ["10.0.0.0/8"]}}, False),  # a field the request does not carry fails
    ],
)
def test_allow_statements_count_only_where_their_conditions_hold(
    api: Api, client: Client, repo: str, condition: dict[str, Any], allowed: bool
) -> None:
    carol, _ = user_with(api, client, {**READ_ALL, "condition": condition})
    response = carol.get(f"/repositories/{repo}")
    assert response.status_code == (200 if allowed else 403), response.body


def test_a_conditional_deny_applies_only_from_its_addresses(api: Api, client: Client, repo: str) -> None:
    deny_here = {
        "effect": "deny",
        "action": ["fs:*"],
        "resource": "*",
        "condition": {"IpAddress": {"SourceIp": ["127.0.0.1"]}},
    }
    carol, _ = user_with(api, client, READ_ALL, deny_here)
    assert_error(carol.get(f"/repositories/{repo}"), 403)


def test_the_s3_gateway_evaluates_conditions_with_its_client_address(
    api: Api, client: Client, repo: str, services: wiring.Services
) -> None:
    api.upload(repo, "main", "a.txt", b"alpha")
    only_office = {**READ_ALL, "condition": {"IpAddress": {"SourceIp": ["203.0.113.0/24"]}}}
    _, (key, secret) = user_with(api, client, only_office)
    gateway = S3Gateway.from_services(services, 1024 * 1024)
    request = signed("GET", f"/{repo}/main/a.txt", key=key, secret=secret)
    inside = gateway.handle(dataclasses.replace(request, source_ip="203.0.113.9"))
    assert inside.status == 200 and inside.body == b"alpha"
    outside = gateway.handle(dataclasses.replace(request, source_ip="198.51.100.1"))
    assert outside.status == 403 and b"AccessDenied" in outside.body
    unknown = gateway.handle(request)  # no address known: the condition cannot hold
    assert unknown.status == 403


def test_evaluation_rules() -> None:
    ip = (Condition("IpAddress", "SourceIp", ("2001:db8::/32",)),)
    assert evaluate(ip, {"SourceIp": "2001:db8::1"}) and not evaluate(ip, {"SourceIp": "10.0.0.1"})
    like = (Condition("StringLike", "UserAgent", ("lakectl/*",)),)
    assert evaluate(like, {"UserAgent": "lakectl/1.0"}) and not evaluate(like, {"UserAgent": "curl"})
    both = (Condition("IpAddress", "SourceIp", ("10.0.0.0/8",)), Condition("StringNotLike", "UserAgent", ("curl*",)))
    assert not evaluate(both, {"SourceIp": "10.1.1.1", "UserAgent": "curl/8"})
    assert evaluate((), None)
    with pytest.raises(ConditionError):
        evaluate(ip, {"SourceIp": "not-an-address"})
    with pytest.raises(ConditionError):
        evaluate(ip, None)
