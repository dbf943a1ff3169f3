"""The Iceberg catalog is built once per container (wiring.Services.iceberg_catalog) and shared by every request;
what is a request's own, its caller's permissions, is an argument of each call and never kept in it. Callers of
different rights in turn each get their own answers (the round-4 fault was a catalog's permissions)."""

from __future__ import annotations

import dataclasses
import json
from typing import Any
from urllib.parse import quote

import pytest
from chalice.test import Client

from chalicelib import wiring
from chalicelib.iceberg import Catalog

from .iceberg_support import iceberg_error, iceberg_request
from .support import Api, body_of

Creds = tuple[str, str]
SALES = quote("\x1f".join(["repo1", "main", "sales"]), safe="")
TABLE = f"/namespaces/{SALES}/tables/t"
SCHEMA = {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "type": "long", "required": True}]}
READ_ONLY = {"id": "read-only", "statement": [{"effect": "allow", "action": ["fs:Read*", "fs:List*"], "resource": "*"}]}


def _reader(api: Api) -> Creds:
    assert api.post("/auth/policies", json_body=READ_ONLY).status_code == 201
    assert api.post("/auth/users", json_body={"id": "reader"}).status_code == 201
    assert api.request("PUT", "/auth/users/reader/policies/read-only").status_code == 201
    key = body_of(api.post("/auth/users/reader/credentials"))
    return key["access_key_id"], key["secret_access_key"]


def _set(client: Client, creds: Creds, value: str) -> Any:
    body = {"requirements": [], "updates": [{"action": "set-properties", "updates": {"by": value}}]}
    return iceberg_request(client, "POST", TABLE, creds, body)


def _by(client: Client, creds: Creds) -> str | None:
    response = iceberg_request(client, "GET", TABLE, creds)
    assert response.status_code == 200, response.body
    return json.loads(response.body)["metadata"]["properties"].get("by")


def test_requests_share_one_catalog_and_each_is_checked_as_its_own_caller(
    api: Api, repo: str, client: Client, credentials: Creds, services: wiring.Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    built: list[Catalog] = []
    original_init = Catalog.__init__

    def counting_init(self: Catalog, *args: Any, **kwargs: Any) -> None:
        built.append(self)
        original_init(self, *args, **kwargs)

    monkeypatch.setattr(Catalog, "__init__", counting_init)
    reader = _reader(api)
    created = iceberg_request(client, "POST", "/namespaces", credentials, {"namespace": ["repo1", "main", "sales"]})
    assert created.status_code == 200, created.body
    table = iceberg_request(client, "POST", f"/namespaces/{SALES}/tables", credentials, {"name": "t", "schema": SCHEMA})
    assert table.status_code == 200, table.body
    # Admin, reader, admin, reader: each request's rights are its caller's, whoever came before.
    assert _set(client, credentials, "admin-1").status_code == 200
    assert "fs:WriteObject" in iceberg_error(_set(client, reader, "reader-1"), 403, "ForbiddenException")
    assert _by(client, reader) == "admin-1"
    assert _set(client, credentials, "admin-2").status_code == 200
    iceberg_error(_set(client, reader, "reader-2"), 403, "ForbiddenException")
    assert _by(client, credentials) == "admin-2"
    # An unknown key after all of them: refused, nothing of an earlier caller left over to let it in.
    iceberg_error(iceberg_request(client, "GET", TABLE, ("AKIANOBODY", "nothing")), 401, "NotAuthorizedException")
    # Nine requests, one catalog: built at the first, kept by the container, holding no caller.
    assert len(built) == 1 and services.iceberg is built[0] and services.iceberg_catalog() is built[0]
    held = [vars(o) for o in (built[0], built[0].tables, built[0].namespaces, built[0].store)]
    assert not any("authorize" in attributes or "user" in attributes for attributes in held)


def test_a_copy_of_the_services_builds_its_own_catalog(services: wiring.Services) -> None:
    shared = services.iceberg_catalog()
    assert services.iceberg_catalog() is shared
    copy = dataclasses.replace(services, settings=services.settings)
    assert copy.iceberg is None and copy.iceberg_catalog() is not shared
