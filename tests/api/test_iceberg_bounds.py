"""Hostile bodies against the Iceberg catalog (issue 40, items 3 and 5): JSON nested past what the catalog walks is a
400 in the spec's shape, never a 500, and so is a commit whose metadata a deployed load could not return."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

import pytest
from chalice import Response
from chalice.test import Client

from chalicelib.api.endpoint import BINARY_TYPES
from chalicelib.iceberg.bounds import LAMBDA_RESPONSE_BYTES, MAX_JSON_DEPTH, MAX_METADATA_BYTES, metadata_bytes
from lakelet.stack import aws_limits
from lakelet.stack.limited_api import result_bytes

from .iceberg_support import iceberg_error, iceberg_request
from .support import Api, basic

Creds = tuple[str, str]
SALES = ["repo1", "main", "sales"]
SCHEMA = {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "type": "long", "required": True}]}


def _ns(parts: list[str]) -> str:
    return quote("\x1f".join(parts), safe="")


@pytest.fixture
def sales(api: Api, repo: str, client: Client, credentials: Creds) -> None:
    created = iceberg_request(client, "POST", "/namespaces", credentials, {"namespace": SALES})
    assert created.status_code == 200, created.body


def nested_schema(levels: int) -> dict[str, Any]:
    """A schema whose one column is a struct nested ``levels`` deep (fields ids 1..levels+1)."""
    inner: Any = "long"
    for level in range(levels, 0, -1):
        inner = {"type": "struct", "fields": [{"id": level + 1, "name": f"f{level}", "type": inner, "required": False}]}
    return {"type": "struct", "fields": [{"id": 1, "name": "top", "type": inner, "required": False}]}


def _commit(client: Client, creds: Creds, name: str, updates: list[Any]) -> Any:
    path = f"/namespaces/{_ns(SALES)}/tables/{name}"
    return iceberg_request(client, "POST", path, creds, {"requirements": [], "updates": updates})


def _create(client: Client, creds: Creds, name: str, schema: Any = SCHEMA) -> Any:
    return iceberg_request(client, "POST", f"/namespaces/{_ns(SALES)}/tables", creds, {"name": name, "schema": schema})


def test_deeply_nested_schemas_are_a_400_and_real_depths_work(client: Client, credentials: Creds, sales: None) -> None:
    assert _create(client, credentials, "t").status_code == 200
    # 300 levels: the report's body, 500 (RecursionError) before.
    deep = nested_schema(300)
    refused = _commit(client, credentials, "t", [{"action": "add-schema", "schema": deep}])
    assert str(MAX_JSON_DEPTH) in iceberg_error(refused, 400, "BadRequestException")
    iceberg_error(_create(client, credentials, "u", deep), 400, "BadRequestException")
    # 60 levels of nested structs, far beyond real schemas, still work: create, evolve, load.
    assert _create(client, credentials, "v", nested_schema(60)).status_code == 200
    evolved = _commit(
        client,
        credentials,
        "t",
        [{"action": "add-schema", "schema": nested_schema(60)}, {"action": "set-current-schema", "schema-id": -1}],
    )
    assert evolved.status_code == 200, evolved.body
    assert json.loads(evolved.body)["metadata"]["last-column-id"] == 61
    # 64 levels, the documented bound, even inside a transaction (the deepest body that carries a schema).
    change = {
        "identifier": {"namespace": SALES, "name": "v"},
        "requirements": [],
        "updates": [{"action": "add-schema", "schema": nested_schema(64)}],
    }
    deepest = iceberg_request(client, "POST", "/transactions/commit", credentials, {"table-changes": [change]})
    assert deepest.status_code == 204, deepest.body
    change["updates"] = [{"action": "add-schema", "schema": nested_schema(66)}]
    too_deep = iceberg_request(client, "POST", "/transactions/commit", credentials, {"table-changes": [change]})
    iceberg_error(too_deep, 400, "BadRequestException")


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/namespaces", b"[" * 100_000 + b"]" * 100_000),
        ("/namespaces", b'{"namespace": ' + b"[" * 5_000 + b"]" * 5_000 + b"}"),
        (f"/namespaces/{_ns(SALES)}/tables/t", b'{"updates": [' + b'{"a":' * 300 + b"1" + b"}" * 300 + b"]}"),
        ("/transactions/commit", b'{"table-changes": ' + b"[" * 250 + b"]" * 250 + b"}"),
    ],
)
def test_any_body_nested_too_deeply_is_a_400(
    client: Client, credentials: Creds, sales: None, path: str, body: bytes
) -> None:
    assert _create(client, credentials, "t").status_code == 200
    raw = client.http.request(
        "POST",
        "/iceberg/api/v1" + path,
        headers={"authorization": basic(*credentials), "content-type": "application/json"},
        body=body,
    )
    iceberg_error(raw, 400, "BadRequestException")


def test_a_metadata_file_nested_too_deeply_is_not_registered(
    api: Api, client: Client, credentials: Creds, sales: None
) -> None:
    assert _create(client, credentials, "t").status_code == 200
    loaded = json.loads(iceberg_request(client, "GET", f"/namespaces/{_ns(SALES)}/tables/t", credentials).body)
    metadata = {**loaded["metadata"], "schemas": [{**nested_schema(300), "schema-id": 0}]}
    api.upload("repo1", "main", "iceberg/deep/00000-x.metadata.json", json.dumps(metadata).encode())
    body = {"name": "deep", "metadata-location": "s3://repo1/main/iceberg/deep/00000-x.metadata.json"}
    register = iceberg_request(client, "POST", f"/namespaces/{_ns(SALES)}/register", credentials, body)
    iceberg_error(register, 400, "BadRequestException")


def _lambda_result_bytes(response: Any) -> int:
    """The size of the Lambda result the deployed API would return for this answer: chalice's response dict with
    the app's binary types (the body base64-encoded), as lakelet up --aws-limits measures it."""
    rebuilt = Response(body=response.body, status_code=response.status_code, headers=dict(response.headers))
    return result_bytes(rebuilt.to_dict(BINARY_TYPES))


def _load(client: Client, creds: Creds, name: str, ref: str = "main") -> Any:
    return iceberg_request(client, "GET", f"/namespaces/{_ns(['repo1', ref, 'sales'])}/tables/{name}", creds)


def test_the_limit_is_lambdas_response_limit() -> None:
    assert LAMBDA_RESPONSE_BYTES == aws_limits.LAMBDA_RESPONSE_BYTES
    assert BINARY_TYPES == ["*/*"]  # every answer travels base64-encoded deployed: the limit counts on it


def test_two_4_mb_property_commits_are_refused_before_the_table_becomes_unloadable(
    client: Client, credentials: Creds, sales: None
) -> None:
    assert _create(client, credentials, "t").status_code == 200
    four_mb = "x" * (4 * 1000 * 1000)
    first = _commit(client, credentials, "t", [{"action": "set-properties", "updates": {"a": four_mb}}])
    assert first.status_code == 200
    second = _commit(client, credentials, "t", [{"action": "set-properties", "updates": {"b": four_mb}}])
    message = iceberg_error(second, 400, "BadRequestException")
    assert f"{LAMBDA_RESPONSE_BYTES:,}" in message and f"{MAX_METADATA_BYTES:,}" in message
    loaded = _load(client, credentials, "t")
    assert loaded.status_code == 200 and _lambda_result_bytes(loaded) <= LAMBDA_RESPONSE_BYTES
    assert set(json.loads(loaded.body)["metadata"]["properties"]) == {"a"}


def test_metadata_up_to_the_limit_loads_within_lambdas_response_at_any_ref(
    api: Api, client: Client, credentials: Creds, sales: None
) -> None:
    assert _create(client, credentials, "t").status_code == 200
    size = metadata_bytes(json.loads(_load(client, credentials, "t").body)["metadata"])
    # Non-ASCII text is written \\uXXXX: six bytes of JSON a character, as deployed answers carry it.
    fill = "é" * ((MAX_METADATA_BYTES - size - 2_000) // 6)
    assert _commit(client, credentials, "t", [{"action": "set-properties", "updates": {"a": fill}}]).status_code == 200
    commit_id = api.commit("repo1", "main", "a full table")["id"]
    for ref in ("main", commit_id):
        loaded = _load(client, credentials, "t", ref)
        assert loaded.status_code == 200
        assert LAMBDA_RESPONSE_BYTES - 20_000 < _lambda_result_bytes(loaded) <= LAMBDA_RESPONSE_BYTES
    over = _commit(client, credentials, "t", [{"action": "set-properties", "updates": {"b": "y" * 3_000}}])
    iceberg_error(over, 400, "BadRequestException")


def test_a_metadata_file_too_large_to_load_is_not_registered(
    api: Api, client: Client, credentials: Creds, sales: None
) -> None:
    assert _create(client, credentials, "t").status_code == 200
    metadata = json.loads(_load(client, credentials, "t").body)["metadata"]
    metadata["properties"] = {"a": "x" * MAX_METADATA_BYTES}
    api.upload("repo1", "main", "iceberg/big/00000-x.metadata.json", json.dumps(metadata).encode())
    body = {"name": "big", "metadata-location": "s3://repo1/main/iceberg/big/00000-x.metadata.json"}
    register = iceberg_request(client, "POST", f"/namespaces/{_ns(SALES)}/register", credentials, body)
    assert f"{MAX_METADATA_BYTES:,}" in iceberg_error(register, 400, "BadRequestException")


def test_namespace_properties_that_a_load_could_not_answer_are_refused(
    client: Client, credentials: Creds, sales: None
) -> None:
    path = f"/namespaces/{_ns(SALES)}"
    four_mb = "x" * (4 * 1000 * 1000)
    assert (
        iceberg_request(client, "POST", path + "/properties", credentials, {"updates": {"a": four_mb}}).status_code
        == 200
    )
    refused = iceberg_request(client, "POST", path + "/properties", credentials, {"updates": {"b": four_mb}})
    assert f"{LAMBDA_RESPONSE_BYTES:,}" in iceberg_error(refused, 400, "BadRequestException")
    loaded = iceberg_request(client, "GET", path, credentials)
    assert loaded.status_code == 200 and _lambda_result_bytes(loaded) <= LAMBDA_RESPONSE_BYTES
    assert set(json.loads(loaded.body)["properties"]) == {"a"}
    created = iceberg_request(
        client, "POST", "/namespaces", credentials, {"namespace": [*SALES, "big"], "properties": {"a": four_mb * 2}}
    )
    iceberg_error(created, 400, "BadRequestException")


HOSTILE_UPDATES: list[Any] = [
    {"action": "add-spec", "spec": {"fields": "x"}},
    {"action": "add-spec", "spec": {"fields": [1]}},
    {"action": "remove-snapshots", "snapshot-ids": [{}]},
    {"action": "remove-properties", "removals": [{}]},
    {"action": "remove-partition-specs", "spec-ids": [[1]]},
    {"action": "remove-schemas", "schema-ids": [{}]},
]


def test_updates_and_requirements_of_the_wrong_shape_are_a_400(
    api: Api, client: Client, credentials: Creds, sales: None
) -> None:
    """Found by sending every update action every field with values of every JSON type: these answered 500."""
    assert _create(client, credentials, "t").status_code == 200
    for update in HOSTILE_UPDATES:
        iceberg_error(_commit(client, credentials, "t", [update]), 400, "BadRequestException")
    path = f"/namespaces/{_ns(SALES)}/tables/t"
    for ref in ([], {}, 1):
        body = {"requirements": [{"type": "assert-ref-snapshot-id", "ref": ref, "snapshot-id": None}], "updates": []}
        iceberg_error(iceberg_request(client, "POST", path, credentials, body), 400, "BadRequestException")
    for location in (1, ["x"], {"a": 1}, True):
        body = {"name": "c", "schema": SCHEMA, "location": location}
        iceberg_error(
            iceberg_request(client, "POST", f"/namespaces/{_ns(SALES)}/tables", credentials, body),
            400,
            "BadRequestException",
        )
    # A registered metadata file of another shape than the spec's: commits to it are a 400 too.
    metadata = json.loads(_load(client, credentials, "t").body)["metadata"]
    odd = {**metadata, "schemas": {"a": 1}, "partition-specs": [{"no": "id"}]}
    api.upload("repo1", "main", "iceberg/odd/00000-x.metadata.json", json.dumps(odd).encode())
    body = {"name": "odd", "metadata-location": "s3://repo1/main/iceberg/odd/00000-x.metadata.json"}
    assert iceberg_request(client, "POST", f"/namespaces/{_ns(SALES)}/register", credentials, body).status_code == 200
    for update in (
        {"action": "add-schema", "schema": SCHEMA},
        {"action": "add-spec", "spec": {"fields": []}},
        {"action": "set-default-spec", "spec-id": 0},
    ):
        iceberg_error(_commit(client, credentials, "odd", [update]), 400, "BadRequestException")
