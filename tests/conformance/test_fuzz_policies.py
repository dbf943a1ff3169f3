"""POST /auth/policies and PUT /auth/policies/{id} with Policy bodies of every odd shape: no answer may be a 5xx.

The conformance fuzzer once drew a 500 here that it did not draw again: a statement whose ``effect`` was a list or
an object (JSON the spec's Statement refuses) reached a dict lookup with an unhashable key. This walks the shapes a
generator from the spec rarely reaches: any JSON value (nested lists and objects, numbers, null, unicode, lone
surrogates, huge and empty arrays) in place of each field of a statement and of its condition, at each depth of
the condition (operator, field, values). Every refusal is a 400 in lakeFS's error shape, and a policy accepted is
read back as stored.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from chalice.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chalicelib import wiring

from .support import PREFIX, app, basic, seeded_services

HEADERS = {"content-type": "application/json"}
ALLOW = {"effect": "allow", "resource": "*", "action": ["fs:ReadObject"]}
ODD_STRINGS = st.sampled_from(
    ["", " ", "allow", "deny", "Allow", "*", "fs:*", "a\ud800b", "é✓\u200b", "\x00\x1b", "x" * 5000, "1.2.3.4/99"]
)
JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False)
    | st.text(max_size=8)
    | ODD_STRINGS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6) | ODD_STRINGS, inner, max_size=4),
    max_leaves=12,
)
BIG = st.sampled_from([[], ["fs:ReadObject"] * 20_000, [["1.2.3.4"]], [{}], [None]])


@pytest.fixture(scope="module")
def client() -> Iterator[Client]:
    wiring.set_services(seeded_services())
    with Client(app) as test_client:
        # The policy every PUT replaces: the checks of the body then come after the lookup, as they would.
        assert _send(test_client, "POST", "/auth/policies", {"id": "fuzzed", "statement": [ALLOW]}).status_code == 201
        yield test_client
    wiring.set_services(None)


def _send(client: Client, method: str, path: str, body: Any) -> Any:
    raw = json.dumps(body).encode()  # lone surrogates go as \ud800 escapes, as a client would send them
    return client.http.request(method, PREFIX + path, headers={**HEADERS, "authorization": basic()}, body=raw)


def _refused_or_stored(client: Client, body: Any) -> None:
    for method, path in (("POST", "/auth/policies"), ("PUT", "/auth/policies/fuzzed")):
        response = _send(client, method, path, body)
        where = f"{method} {json.dumps(body)[:400]} -> {response.status_code}: {response.body[:300]!r}"
        assert response.status_code < 500, where
        if response.status_code >= 400:
            assert set(json.loads(response.body)) == {"message"}, where
        elif method == "POST":
            stored = json.loads(response.body)
            read = client.http.request(
                "GET", f"{PREFIX}/auth/policies/{stored['id']}", headers={"authorization": basic()}
            )
            assert json.loads(read.body)["statement"] == stored["statement"], where
            client.http.request("DELETE", f"{PREFIX}/auth/policies/{stored['id']}", headers={"authorization": basic()})


@pytest.mark.parametrize(
    "statement",
    [
        {**ALLOW, "effect": ["allow"]},  # the 500 once seen: an unhashable effect
        {**ALLOW, "effect": {"allow": True}},
        {**ALLOW, "effect": None},
        {**ALLOW, "condition": {"IpAddress": {"SourceIp": [["10.0.0.0/8"]]}}},
        {**ALLOW, "condition": {"IpAddress": {"SourceIp": {"nested": ["10.0.0.0/8"]}}}},
        {**ALLOW, "condition": {"IpAddress": ["SourceIp"]}},
        {**ALLOW, "condition": [{"IpAddress": {"SourceIp": ["10.0.0.0/8"]}}]},
        {**ALLOW, "condition": {"IpAddress": {"": ["10.0.0.0/8"]}}},
        {**ALLOW, "condition": {"IpAddress": {"SourceIp": ["a\ud800b"]}}},
        {**ALLOW, "condition": {"StringLike": {"SourceIp": ["x" * 1000] * 1000}}},
        {**ALLOW, "action": ["fs:ReadObject"] * 50_000},
        {**ALLOW, "resource": ["*"]},
        {**ALLOW, "action": "fs:ReadObject"},
    ],
)
def test_odd_statements_are_400(client: Client, statement: dict[str, Any]) -> None:
    body = {"id": "fuzzed", "statement": [statement]}
    for method, path in (("POST", "/auth/policies"), ("PUT", "/auth/policies/fuzzed")):
        response = _send(client, method, path, body)
        assert response.status_code == 400 and set(json.loads(response.body)) == {"message"}, (method, response.body)


FIELDS = ("effect", "resource", "action", "condition")


@settings(max_examples=150, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
@given(
    field=st.sampled_from(FIELDS + ("condition.op", "condition.field", "condition.values", "statement", "id")),
    value=JSON | BIG,
    drop=st.sampled_from((None,) + FIELDS),
)
def test_any_json_anywhere_in_a_policy_is_never_a_5xx(client: Client, field: str, value: Any, drop: str | None) -> None:
    statement: dict[str, Any] = {**ALLOW, "condition": {"IpAddress": {"SourceIp": ["10.0.0.0/8"]}}}
    body: dict[str, Any] = {"id": "fuzzed", "statement": [statement]}
    if field == "statement":
        body["statement"] = value
    elif field == "id":
        body["id"] = value
    elif field == "condition.op":
        statement["condition"] = {"IpAddress": value}
    elif field == "condition.field":
        statement["condition"] = {"IpAddress": {"SourceIp": ["10.0.0.0/8"], "Other": value}}
    elif field == "condition.values":
        statement["condition"] = {"NotIpAddress": {"SourceIp": value}, "StringLike": {"SourceIp": value}}
    else:
        statement[field] = value
    if drop is not None:
        statement.pop(drop, None)
    _refused_or_stored(client, body)
