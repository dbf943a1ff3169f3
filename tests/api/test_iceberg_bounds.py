"""Hostile bodies against the Iceberg catalog (issue 40, items 3 and 5): JSON nested past what the catalog walks is a
400 in the spec's shape, never a 500, and so is a commit whose metadata a deployed load could not return."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

import pytest
from chalice.test import Client

from chalicelib.iceberg.bounds import MAX_JSON_DEPTH

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
