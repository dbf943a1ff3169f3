"""The Iceberg REST catalog's HTTP face: the token endpoint, configuration, the spec's error shape for bad input
(never a 500), authentication and the lakeFS policies on every route, branch protection, and multi-table
transactions (all or nothing on one branch). Responses are checked with pyiceberg's own response models."""

from __future__ import annotations

import dataclasses
import json
from typing import Any
from urllib.parse import quote

import pytest
from chalice.test import Client
from pyiceberg.catalog.rest import TableResponse
from pyiceberg.catalog.rest.response import TokenResponse
from pyiceberg.table import CommitTableResponse

from chalicelib.iceberg.commits import TableCommits
from chalicelib.settings import Settings

from .iceberg_support import iceberg_error, iceberg_request
from .support import Api, app, basic, body_of

PREFIX = "/iceberg/api/v1"

Creds = tuple[str, str]
SCHEMA = {
    "type": "struct",
    "schema-id": 0,
    "fields": [{"id": 1, "name": "id", "type": "long", "required": True}],
}


def ns(*parts: str) -> str:
    return quote("\x1f".join(parts), safe="")


@pytest.fixture
def sales(api: Api, repo: str, client: Client, credentials: Creds) -> None:
    created = iceberg_request(client, "POST", "/namespaces", credentials, {"namespace": ["repo1", "main", "sales"]})
    assert created.status_code == 200, created.body


def create(client: Client, credentials: Creds, name: str, **extra: Any) -> Any:
    body = {"name": name, "schema": SCHEMA, **extra}
    return iceberg_request(client, "POST", f"/namespaces/{ns('repo1', 'main', 'sales')}/tables", credentials, body)


def commit(client: Client, credentials: Creds, name: str, requirements: list[Any], updates: list[Any]) -> Any:
    body = {"requirements": requirements, "updates": updates}
    path = f"/namespaces/{ns('repo1', 'main', 'sales')}/tables/{name}"
    return iceberg_request(client, "POST", path, credentials, body)


def table(client: Client, credentials: Creds, name: str, ref: str = "main") -> dict[str, Any]:
    response = iceberg_request(client, "GET", f"/namespaces/{ns('repo1', ref, 'sales')}/tables/{name}", credentials)
    assert response.status_code == 200, response.body
    return dict(json.loads(response.body))


def test_token_endpoint_issues_a_bearer_token_for_a_key_pair(client: Client, credentials: Creds) -> None:
    form = f"grant_type=client_credentials&client_id={credentials[0]}&client_secret={quote(credentials[1], safe='')}"
    headers = {"content-type": "application/x-www-form-urlencoded"}
    response = client.http.request("POST", "/iceberg/api/v1/oauth/tokens", headers=headers, body=form.encode())
    assert response.status_code == 200, response.body
    token = TokenResponse.model_validate_json(response.body)
    assert token.token_type.lower() == "bearer" and token.expires_in and token.expires_in > 0
    config = client.http.request(
        "GET", "/iceberg/api/v1/config", headers={"authorization": f"Bearer {token.access_token}"}
    )
    assert config.status_code == 200
    body = json.loads(config.body)
    assert body["defaults"] == {} and body["overrides"] == {}
    assert "POST /v1/{prefix}/transactions/commit" in body["endpoints"]
    assert not any("views" in e for e in body["endpoints"])


def test_a_token_is_renewed_by_token_exchange_until_it_is_revoked(client: Client, credentials: Creds) -> None:
    headers = {"content-type": "application/x-www-form-urlencoded"}

    def token_for(form: str) -> Any:
        return client.http.request("POST", "/iceberg/api/v1/oauth/tokens", headers=headers, body=form.encode())

    first = json.loads(
        token_for(
            f"grant_type=client_credentials&client_id={credentials[0]}&client_secret={quote(credentials[1], safe='')}"
        ).body
    )["access_token"]
    exchange = (
        "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Atoken-exchange"
        "&subject_token_type=urn%3Aietf%3Aparams%3Aoauth%3Atoken-type%3Aaccess_token&subject_token="
    )
    renewed = token_for(exchange + quote(first, safe=""))
    assert renewed.status_code == 200, renewed.body
    second = TokenResponse.model_validate_json(renewed.body).access_token
    assert second != first
    config = client.http.request("GET", "/iceberg/api/v1/config", headers={"authorization": f"Bearer {second}"})
    assert config.status_code == 200
    assert json.loads(token_for(exchange + "forged").body)["error"] == "invalid_client"
    assert token_for(exchange).status_code == 400
    # A logout of the first token ends its chain.
    logout = client.http.request("POST", "/api/v1/auth/logout", headers={"authorization": f"Bearer {first}"})
    assert logout.status_code in (200, 204)
    assert token_for(exchange + quote(first, safe="")).status_code == 401


@pytest.mark.parametrize(
    ("form", "status", "code"),
    [
        ("grant_type=client_credentials&client_id=AKIAWRONG&client_secret=nope", 401, "invalid_client"),
        ("grant_type=password&username=a&password=b", 400, "unsupported_grant_type"),
        ("grant_type=client_credentials", 400, "invalid_request"),
        ("", 400, "unsupported_grant_type"),
    ],
)
def test_token_errors_are_oauth_shaped(client: Client, credentials: Creds, form: str, status: int, code: str) -> None:
    headers = {"content-type": "application/x-www-form-urlencoded"}
    response = client.http.request("POST", "/iceberg/api/v1/oauth/tokens", headers=headers, body=form.encode())
    assert response.status_code == status
    assert json.loads(response.body)["error"] == code


def test_every_route_but_the_token_endpoint_needs_credentials(client: Client, repo: str) -> None:
    routes = [
        (method, path.removeprefix(PREFIX))
        for path, methods in app.routes.items()
        if path.startswith(PREFIX + "/")
        for method in methods
    ]
    assert len(routes) == 19  # with loadCredentials
    for method, path in routes:
        if path == "/oauth/tokens":
            continue
        concrete = path.replace("{namespace}", ns("repo1", "main", "s")).replace("{table}", "t")
        for header in (None, "Bearer forged", basic("AKIAJNOSUCHKEY00000Q", "x"), "Digest x"):
            headers = {} if header is None else {"authorization": header}
            response = iceberg_request(client, method, concrete, None, {}, headers=headers)
            if method == "HEAD":
                assert response.status_code == 401 and response.body == b""
            else:
                iceberg_error(response, 401, "NotAuthorizedException")
    bad = iceberg_request(client, "GET", "/config", None, headers={"authorization": "Bearer forged"})
    iceberg_error(bad, 401, "NotAuthorizedException")


def test_bad_input_is_a_spec_shaped_4xx(client: Client, credentials: Creds, sales: None) -> None:
    sales_ns = ns("repo1", "main", "sales")
    cases: list[tuple[str, str, Any, int, str]] = [
        ("GET", f"/namespaces/{ns('repo1', 'main', 'nope')}", None, 404, "NoSuchNamespaceException"),
        ("GET", f"/namespaces/{ns('nope')}", None, 404, "NoSuchNamespaceException"),
        ("GET", f"/namespaces/{ns('repo1', 'nobranch', 'sales')}/tables", None, 404, "NoSuchNamespaceException"),
        ("GET", f"/namespaces/{sales_ns}/tables/nope", None, 404, "NoSuchTableException"),
        # loadTable's 404 is NoSuchTableException even when the namespace is missing (Spark's metadata tables need it).
        ("GET", f"/namespaces/{ns('repo1', 'main', 'nope')}/tables/t", None, 404, "NoSuchTableException"),
        ("GET", f"/namespaces/{ns('repo1', 'nobranch', 'sales')}/tables/t", None, 404, "NoSuchTableException"),
        ("POST", "/namespaces", {"namespace": "not-a-list"}, 400, "BadRequestException"),
        ("POST", "/namespaces", {"namespace": ["repo1", "main", "a/b"]}, 400, "BadRequestException"),
        (
            "POST",
            "/namespaces",
            {"namespace": ["repo1", "main", "x"], "properties": {"a": 1}},
            400,
            "BadRequestException",
        ),
        ("POST", "/namespaces", {"namespace": ["repo1", "main", "sales"]}, 409, "AlreadyExistsException"),
        ("POST", f"/namespaces/{sales_ns}/tables", {"name": "t"}, 400, "BadRequestException"),
        ("POST", f"/namespaces/{sales_ns}/tables", {"name": "t", "schema": {"fields": 3}}, 400, "BadRequestException"),
        (
            "POST",
            f"/namespaces/{sales_ns}/tables",
            {"name": "t", "schema": SCHEMA, "location": "s3://other/main/x"},
            400,
            "BadRequestException",
        ),
        (
            "POST",
            f"/namespaces/{sales_ns}/tables",
            {"name": "t", "schema": SCHEMA, "properties": {"format-version": "9"}},
            400,
            "BadRequestException",
        ),
        (
            "POST",
            f"/namespaces/{sales_ns}/tables/nope",
            {"requirements": [], "updates": []},
            404,
            "NoSuchTableException",
        ),
        ("POST", f"/namespaces/{sales_ns}/register", {"name": "r"}, 400, "BadRequestException"),
        (
            "POST",
            f"/namespaces/{sales_ns}/register",
            {"name": "r", "metadata-location": "s3://repo1/main/none.json"},
            400,
            "BadRequestException",
        ),
        ("POST", "/tables/rename", {"source": "x"}, 400, "BadRequestException"),
        ("POST", "/transactions/commit", {"table-changes": []}, 400, "BadRequestException"),
        ("DELETE", f"/namespaces/{ns('repo1', 'main')}", None, 400, "BadRequestException"),
        ("DELETE", f"/namespaces/{sales_ns}/tables/nope", None, 404, "NoSuchTableException"),
        ("POST", f"/namespaces/{sales_ns}/properties", {"removals": "x"}, 400, "BadRequestException"),
        ("GET", "/namespaces?pageSize=zero", None, 400, "BadRequestException"),
    ]
    for method, path, body, status, kind in cases:
        iceberg_error(iceberg_request(client, method, path, credentials, body), status, kind)
    raw = client.http.request(
        "POST",
        "/iceberg/api/v1/namespaces",
        headers={"authorization": basic(*credentials)},
        body=b"{not json",
    )
    iceberg_error(raw, 400, "BadRequestException")
    # Chalice's own answers (a method the route lacks) come in the spec's shape too.
    iceberg_error(iceberg_request(client, "PUT", "/namespaces", credentials, {}), 405, "BadRequestException")
    head = iceberg_request(client, "HEAD", f"/namespaces/{sales_ns}/tables/nope", credentials)
    assert head.status_code == 404 and head.body == b""


def test_bad_updates_and_failed_requirements(client: Client, credentials: Creds, sales: None) -> None:
    created = create(client, credentials, "t")
    assert created.status_code == 200, created.body
    result = TableResponse.model_validate_json(created.body)
    assert result.metadata_location and result.metadata.table_uuid
    uuid = str(result.metadata.table_uuid)
    for updates, why in [
        ([{"action": "no-such-action"}], "unknown update action"),
        ([{"action": "set-current-schema", "schema-id": 5}], "does not exist"),
        ([{"action": "upgrade-format-version", "format-version": 1}], "cannot downgrade"),
        ([{"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": 42}], "unknown snapshot"),
        (["not an object"], "must be a list of objects"),
    ]:
        assert why in iceberg_error(commit(client, credentials, "t", [], updates), 400, "BadRequestException")
    for requirement in [
        {"type": "assert-table-uuid", "uuid": "00000000-0000-0000-0000-000000000000"},
        {"type": "assert-current-schema-id", "current-schema-id": 3},
        {"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": 1},
        {"type": "assert-create"},
        {"type": "assert-last-assigned-field-id", "last-assigned-field-id": 9},
        {"type": "assert-default-spec-id", "default-spec-id": 4},
    ]:
        iceberg_error(commit(client, credentials, "t", [requirement], []), 409, "CommitFailedException")
    ok = commit(
        client,
        credentials,
        "t",
        [
            {"type": "assert-table-uuid", "uuid": uuid},
            {"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": None},
        ],
        [{"action": "set-properties", "updates": {"a": "1"}}],
    )
    assert ok.status_code == 200, ok.body
    committed = CommitTableResponse.model_validate_json(ok.body)
    assert committed.metadata.properties == {"a": "1"}
    assert committed.metadata_location.endswith(".metadata.json") and "/00001-" in committed.metadata_location


def test_transactions_are_all_or_nothing(
    client: Client, credentials: Creds, sales: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("a", "b"):
        assert create(client, credentials, name).status_code == 200
    uuids = {name: table(client, credentials, name)["metadata"]["table-uuid"] for name in ("a", "b")}

    def change(name: str, value: str, uuid: str | None = None) -> dict[str, Any]:
        return {
            "identifier": {"namespace": ["repo1", "main", "sales"], "name": name},
            "requirements": [{"type": "assert-table-uuid", "uuid": uuid or uuids[name]}],
            "updates": [{"action": "set-properties", "updates": {"v": value}}],
        }

    def props(name: str) -> dict[str, str]:
        return dict(table(client, credentials, name)["metadata"]["properties"])

    done = iceberg_request(
        client, "POST", "/transactions/commit", credentials, {"table-changes": [change("a", "1"), change("b", "1")]}
    )
    assert done.status_code == 204, done.body
    assert props("a") == props("b") == {"v": "1"}
    # A failed requirement on the second table: neither changes.
    failed = iceberg_request(
        client,
        "POST",
        "/transactions/commit",
        credentials,
        {"table-changes": [change("a", "2"), change("b", "2", "00000000-0000-0000-0000-000000000000")]},
    )
    iceberg_error(failed, 409, "CommitFailedException")
    assert props("a") == props("b") == {"v": "1"}
    # Another commit of b lands after the transaction read both tables, before its one atomic write: neither moves.
    original = TableCommits.move_all
    calls: list[list[str]] = []

    def racing(self: TableCommits, authorize: Any, prepared: Any) -> list[str]:
        calls.append([p.table.name for p in prepared])
        if len(calls) == 1:
            assert (
                commit(
                    client, credentials, "b", [], [{"action": "set-properties", "updates": {"w": "rival"}}]
                ).status_code
                == 200
            )
        return original(self, authorize, prepared)

    monkeypatch.setattr(TableCommits, "move_all", racing)
    raced = iceberg_request(
        client, "POST", "/transactions/commit", credentials, {"table-changes": [change("a", "3"), change("b", "3")]}
    )
    assert "changed by another commit" in iceberg_error(raced, 409, "CommitFailedException")
    assert calls == [["a", "b"]]
    assert props("a") == {"v": "1"}
    assert props("b") == {"v": "1", "w": "rival"}
    # Tables of two branches never share a transaction.
    other = change("a", "4")
    other["identifier"]["namespace"] = ["repo1", "dev", "sales"]
    mixed = iceberg_request(
        client, "POST", "/transactions/commit", credentials, {"table-changes": [change("b", "4"), other]}
    )
    assert "one branch" in iceberg_error(mixed, 400, "BadRequestException")


def test_writes_need_a_branch_and_respect_branch_protection(
    api: Api, client: Client, credentials: Creds, sales: None
) -> None:
    assert create(client, credentials, "t").status_code == 200
    api.commit("repo1", "main", "t")
    assert api.post("/repositories/repo1/tags", json_body={"id": "v1", "ref": "main"}).status_code == 201
    path = f"/namespaces/{ns('repo1', 'v1', 'sales')}/tables/t"
    assert "not a branch" in iceberg_error(
        iceberg_request(client, "POST", path, credentials, {"requirements": [], "updates": []}),
        400,
        "BadRequestException",
    )
    assert table(client, credentials, "t", "v1")["metadata-location"].startswith("s3://repo1/v1/")
    rules = [{"pattern": "main"}]
    assert api.request("PUT", "/repositories/repo1/settings/branch_protection", json_body=rules).status_code == 204
    refused = commit(client, credentials, "t", [], [{"action": "set-properties", "updates": {"a": "1"}}])
    assert "protected branch" in iceberg_error(refused, 403, "ForbiddenException")
    iceberg_error(create(client, credentials, "u"), 403, "ForbiddenException")
    assert "a" not in table(client, credentials, "t")["metadata"]["properties"]


def test_policies_apply_by_the_paths_tables_live_under(
    api: Api, client: Client, credentials: Creds, sales: None
) -> None:
    """A reader of everything who may write only under _iceberg/sales/orders*: loads any table, commits only
    that one; a user with no policy is refused everything (403, not 401)."""
    assert create(client, credentials, "orders").status_code == 200
    assert create(client, credentials, "secret").status_code == 200
    policy = {
        "id": "orders-writer",
        "statement": [
            {"effect": "allow", "action": ["fs:Read*", "fs:List*"], "resource": "*"},
            {
                "effect": "allow",
                "action": ["fs:WriteObject"],
                "resource": "arn:lakefs:fs:::repository/repo1/object/_iceberg/sales/orders*",
            },
            {
                "effect": "allow",
                "action": ["fs:WriteObject"],
                "resource": "arn:lakefs:fs:::repository/repo1/object/iceberg/sales/orders*",
            },
        ],
    }
    assert api.post("/auth/policies", json_body=policy).status_code == 201
    for user in ("olive", "nobody"):
        assert api.post("/auth/users", json_body={"id": user}).status_code == 201
    api.request("PUT", "/auth/users/olive/policies/orders-writer")
    olive = body_of(api.post("/auth/users/olive/credentials"))
    nobody = body_of(api.post("/auth/users/nobody/credentials"))
    olive_creds = (olive["access_key_id"], olive["secret_access_key"])
    nobody_creds = (nobody["access_key_id"], nobody["secret_access_key"])
    assert table(client, olive_creds, "secret")["metadata"]["properties"] == {}
    set_a = [{"action": "set-properties", "updates": {"a": "1"}}]
    assert commit(client, olive_creds, "orders", [], set_a).status_code == 200
    iceberg_error(commit(client, olive_creds, "secret", [], set_a), 403, "ForbiddenException")
    iceberg_error(create(client, olive_creds, "new"), 403, "ForbiddenException")
    for method, path in [
        ("GET", "/namespaces"),
        ("GET", f"/namespaces/{ns('repo1', 'main', 'sales')}"),
        ("GET", f"/namespaces/{ns('repo1', 'main', 'sales')}/tables"),
        ("GET", f"/namespaces/{ns('repo1', 'main', 'sales')}/tables/orders"),
    ]:
        iceberg_error(iceberg_request(client, method, path, nobody_creds), 403, "ForbiddenException")


def test_listings_page(client: Client, credentials: Creds, sales: None) -> None:
    for name in ("c", "a", "b"):
        body = {"namespace": ["repo1", "main", "sales", name]}
        assert iceberg_request(client, "POST", "/namespaces", credentials, body).status_code == 200
        assert create(client, credentials, f"t{name}").status_code == 200

    def pages(path: str, key: str) -> list[list[Any]]:
        found, token = [], None
        while True:
            query = ("&" if "?" in path else "?") + "pageSize=2" + (f"&pageToken={quote(token)}" if token else "")
            body = json.loads(iceberg_request(client, "GET", path + query, credentials).body)
            found.append(body[key])
            token = body.get("next-page-token")
            if not token:
                return found

    parent = quote("\x1f".join(["repo1", "main", "sales"]), safe="")
    assert pages(f"/namespaces?parent={parent}", "namespaces") == [
        [["repo1", "main", "sales", "a"], ["repo1", "main", "sales", "b"]],
        [["repo1", "main", "sales", "c"]],
    ]
    tables = pages(f"/namespaces/{ns('repo1', 'main', 'sales')}/tables", "identifiers")
    assert [[t["name"] for t in page] for page in tables] == [["ta", "tb"], ["tc"]]


@pytest.mark.parametrize("version", [1, 2, 3])
def test_every_format_version_round_trips_through_pyiceberg(
    client: Client, credentials: Creds, sales: None, version: int
) -> None:
    created = create(client, credentials, "t", properties={"format-version": str(version)})
    assert created.status_code == 200, created.body
    loaded = TableResponse.model_validate_json(
        iceberg_request(client, "GET", f"/namespaces/{ns('repo1', 'main', 'sales')}/tables/t", credentials).body
    )
    assert loaded.metadata.format_version == version
    assert [f.name for f in loaded.metadata.schema().fields] == ["id"]


def test_table_config_names_the_gateway_when_the_deployment_does(
    client: Client, credentials: Creds, sales: None, services: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert json.loads(create(client, credentials, "t").body)["config"] == {}
    monkeypatch.setattr(
        services, "settings", dataclasses.replace(services.settings, iceberg_s3_endpoint="https://gw.example/")
    )
    config = table(client, credentials, "t")["config"]
    assert config == {"s3.endpoint": "https://gw.example/", "s3.path-style-access": "true"}
    assert (
        Settings.from_env({"LAKELET_ICEBERG_S3_ENDPOINT": " https://gw.example/ "}).iceberg_s3_endpoint
        == "https://gw.example/"
    )


def test_loading_with_snapshots_refs_leaves_out_unreferenced_snapshots(
    client: Client, credentials: Creds, sales: None
) -> None:
    assert create(client, credentials, "t").status_code == 200

    def snapshot(snapshot_id: int, sequence: int, parent: int | None) -> dict[str, Any]:
        return {
            "action": "add-snapshot",
            "snapshot": {
                "snapshot-id": snapshot_id,
                "parent-snapshot-id": parent,
                "sequence-number": sequence,
                "timestamp-ms": 1000 + sequence,
                "manifest-list": f"s3://repo1/main/x/snap-{snapshot_id}.avro",
                "summary": {"operation": "append"},
            },
        }

    updates = [
        snapshot(1, 1, None),
        snapshot(2, 2, 1),
        snapshot(3, 3, 2),
        {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": 3},
        {"action": "set-snapshot-ref", "ref-name": "audit", "type": "tag", "snapshot-id": 1},
    ]
    assert commit(client, credentials, "t", [], updates).status_code == 200
    path = f"/namespaces/{ns('repo1', 'main', 'sales')}/tables/t"
    every = json.loads(iceberg_request(client, "GET", path, credentials).body)["metadata"]["snapshots"]
    assert [s["snapshot-id"] for s in every] == [1, 2, 3]
    named = json.loads(iceberg_request(client, "GET", path + "?snapshots=refs", credentials).body)
    assert [s["snapshot-id"] for s in named["metadata"]["snapshots"]] == [1, 3]
    iceberg_error(iceberg_request(client, "GET", path + "?snapshots=some", credentials), 400, "BadRequestException")
