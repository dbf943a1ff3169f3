"""The Iceberg catalog inside the permission model (issue 40, item 2): every object the catalog reads, writes or
deletes for a caller is authorized as the caller's own API request for it would be, and a purge deletes only the
files the table's metadata names, under the table's own location. The attack of the report: a user denied
``secret*`` pointed a table at ``secret/`` (set-location, create, register) and purged it, deleting committed and
staged objects there and writing a metadata file under the denied prefix."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pyarrow as pa
import pytest
from chalice.test import Client

from .iceberg_support import bridge, iceberg_error, iceberg_request, rest_catalog  # noqa: F401
from .support import Api, body_of

pytestmark = pytest.mark.usefixtures("bridge")

Creds = tuple[str, str]
SALES = ["repo1", "main", "sales"]
SCHEMA = {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "type": "long", "required": True}]}
DENY_SECRET = {
    "id": "all-but-secret",
    "statement": [
        {"effect": "allow", "action": ["fs:*"], "resource": "*"},
        {"effect": "deny", "action": ["fs:*"], "resource": "arn:lakefs:fs:::repository/repo1/object/secret*"},
    ],
}
READ_ONLY = {
    "id": "read-only",
    "statement": [{"effect": "allow", "action": ["fs:Read*", "fs:List*"], "resource": "*"}],
}
POINTERS_ONLY = {
    "id": "pointers-only",
    "statement": [
        {"effect": "allow", "action": ["fs:Read*", "fs:List*"], "resource": "*"},
        {"effect": "allow", "action": ["fs:*"], "resource": "arn:lakefs:fs:::repository/repo1/object/_iceberg/*"},
    ],
}


def _ns(parts: list[str]) -> str:
    return quote("\x1f".join(parts), safe="")


def _user(api: Api, name: str, policy: dict[str, Any]) -> Creds:
    assert api.post("/auth/policies", json_body=policy).status_code == 201
    assert api.post("/auth/users", json_body={"id": name}).status_code == 201
    assert api.request("PUT", f"/auth/users/{name}/policies/{policy['id']}").status_code == 201
    key = body_of(api.post(f"/auth/users/{name}/credentials"))
    return key["access_key_id"], key["secret_access_key"]


def _objects(api: Api, prefix: str = "") -> dict[str, str]:
    """path -> checksum of every object main shows under ``prefix``."""
    listed = body_of(api.get("/repositories/repo1/refs/main/objects/ls", query={"prefix": prefix, "amount": "1000"}))
    return {o["path"]: o["checksum"] for o in listed["results"]}


def _content(api: Api, path: str) -> bytes:
    response = api.get("/repositories/repo1/refs/main/objects", query={"path": path})
    assert response.status_code == 200, response.body
    return bytes(response.body)


def _create(client: Client, creds: Creds, name: str, **extra: Any) -> Any:
    body = {"name": name, "schema": SCHEMA, **extra}
    return iceberg_request(client, "POST", f"/namespaces/{_ns(SALES)}/tables", creds, body)


def _commit(client: Client, creds: Creds, name: str, updates: list[Any]) -> Any:
    path = f"/namespaces/{_ns(SALES)}/tables/{name}"
    return iceberg_request(client, "POST", path, creds, {"requirements": [], "updates": updates})


def _load(client: Client, creds: Creds, name: str) -> dict[str, Any]:
    response = iceberg_request(client, "GET", f"/namespaces/{_ns(SALES)}/tables/{name}", creds)
    assert response.status_code == 200, response.body
    return dict(json.loads(response.body))


def _purge(client: Client, creds: Creds, name: str) -> Any:
    path = f"/namespaces/{_ns(SALES)}/tables/{name}?purgeRequested=true"
    return iceberg_request(client, "DELETE", path, creds)


@pytest.fixture
def secrets(api: Api, repo: str, client: Client, credentials: Creds) -> None:
    """secret/keep1.txt committed, secret/staged.txt staged only, and namespace sales."""
    api.upload("repo1", "main", "secret/keep1.txt", b"committed secret")
    api.commit("repo1", "main", "secret")
    api.upload("repo1", "main", "secret/staged.txt", b"staged secret")
    created = iceberg_request(client, "POST", "/namespaces", credentials, {"namespace": SALES})
    assert created.status_code == 200, created.body


def _secrets_intact(api: Api) -> None:
    assert set(_objects(api, "secret")) == {"secret/keep1.txt", "secret/staged.txt"}
    assert _content(api, "secret/keep1.txt") == b"committed secret"
    assert _content(api, "secret/staged.txt") == b"staged secret"


def test_a_user_denied_a_prefix_cannot_reach_it_through_a_table(
    api: Api, client: Client, credentials: Creds, secrets: None
) -> None:
    mallory = _user(api, "mallory", DENY_SECRET)
    assert _create(client, mallory, "t").status_code == 200
    # set-location into the denied prefix: refused, and no metadata file written there.
    moved = _commit(client, mallory, "t", [{"action": "set-location", "location": "s3://repo1/main/secret"}])
    assert "secret" in iceberg_error(moved, 403, "ForbiddenException")
    assert _load(client, mallory, "t")["metadata"]["location"].startswith("s3://repo1/main/iceberg/sales/t-")
    # create with a location there: refused.
    iceberg_error(_create(client, mallory, "u", location="s3://repo1/main/secret"), 403, "ForbiddenException")
    # register a metadata file (written where mallory may) whose location is there: refused.
    metadata = _load(client, mallory, "t")["metadata"]
    forged = {**metadata, "location": "s3://repo1/main/secret"}
    api_as_mallory = Api(client, mallory)
    api_as_mallory.upload("repo1", "main", "iceberg/evil/00000-x.metadata.json", json.dumps(forged).encode())
    register = f"/namespaces/{_ns(SALES)}/register"
    body = {"name": "v", "metadata-location": "s3://repo1/main/iceberg/evil/00000-x.metadata.json"}
    iceberg_error(iceberg_request(client, "POST", register, mallory, body), 403, "ForbiddenException")
    # register a metadata file inside the denied prefix: refused (reading it is reading the prefix).
    api.upload("repo1", "main", "secret/00000-y.metadata.json", json.dumps(metadata).encode())
    body = {"name": "w", "metadata-location": "s3://repo1/main/secret/00000-y.metadata.json"}
    iceberg_error(iceberg_request(client, "POST", register, mallory, body), 403, "ForbiddenException")
    api.delete("/repositories/repo1/branches/main/objects", query={"path": "secret/00000-y.metadata.json"})
    # A table someone allowed put there: mallory's purge is refused whole, and nothing of it is deleted.
    assert _create(client, credentials, "hidden", location="s3://repo1/main/secret").status_code == 200
    hidden_files = _objects(api, "secret/metadata/")
    assert len(hidden_files) == 1
    iceberg_error(_purge(client, mallory, "hidden"), 403, "ForbiddenException")
    assert _load(client, credentials, "hidden")["metadata"]["location"] == "s3://repo1/main/secret"
    assert _objects(api, "secret/metadata/") == hidden_files
    api.delete("/repositories/repo1/branches/main/objects", query={"path": next(iter(hidden_files))})
    # The owner's purge of that table deletes its own metadata file and nothing else under its location.
    assert set(_objects(api, "secret")) == {"secret/keep1.txt", "secret/staged.txt"}
    assert _purge(client, mallory, "t").status_code == 204
    _secrets_intact(api)
    for name in ("u", "v", "w"):
        assert iceberg_request(client, "HEAD", f"/namespaces/{_ns(SALES)}/tables/{name}", mallory).status_code == 404


def test_an_admins_purge_of_a_table_at_a_shared_prefix_leaves_the_other_objects(
    api: Api, client: Client, credentials: Creds, secrets: None
) -> None:
    assert _create(client, credentials, "hidden", location="s3://repo1/main/secret").status_code == 200
    assert _purge(client, credentials, "hidden").status_code == 204
    _secrets_intact(api)


def test_read_only_and_pointer_only_callers_write_no_metadata(
    api: Api, client: Client, credentials: Creds, secrets: None
) -> None:
    assert _create(client, credentials, "t").status_code == 200
    api.commit("repo1", "main", "table t")
    before = _objects(api)
    reader = _user(api, "reader", READ_ONLY)
    pointers = _user(api, "pointers", POINTERS_ONLY)
    set_a = [{"action": "set-properties", "updates": {"a": "1"}}]
    for creds in (reader, pointers):
        iceberg_error(_commit(client, creds, "t", set_a), 403, "ForbiddenException")
        iceberg_error(_create(client, creds, "u"), 403, "ForbiddenException")
        iceberg_error(_purge(client, creds, "t"), 403, "ForbiddenException")
    iceberg_error(
        _commit(client, pointers, "t", [{"action": "set-location", "location": "s3://repo1/main/iceberg/x"}]),
        403,
        "ForbiddenException",
    )
    metadata_location = _load(client, reader, "t")["metadata-location"]
    table_t = {"namespace": SALES, "name": "t"}
    change = {"identifier": table_t, "requirements": [], "updates": set_a}
    for method, path, body in [
        ("POST", f"/namespaces/{_ns(SALES)}/register", {"name": "r", "metadata-location": metadata_location}),
        ("POST", "/tables/rename", {"source": table_t, "destination": {"namespace": SALES, "name": "t2"}}),
        ("POST", "/transactions/commit", {"table-changes": [change]}),
        ("POST", "/namespaces", {"namespace": [*SALES, "sub"]}),
        ("POST", f"/namespaces/{_ns(SALES)}/properties", {"updates": {"a": "1"}}),
        ("DELETE", f"/namespaces/{_ns(SALES)}", None),
    ]:
        iceberg_error(iceberg_request(client, method, path, reader, body), 403, "ForbiddenException")
    assert _objects(api) == before
    assert body_of(api.get("/repositories/repo1/branches/main/diff"))["results"] == []
    assert "a" not in _load(client, reader, "t")["metadata"]["properties"]


def _upload_tree(api: Api, root: Path) -> list[str]:
    """Puts the files pyiceberg wrote locally (LocalFileIO: <root>/repo1/main/<path>) into the repository."""
    paths = []
    base = root / "repo1" / "main"
    for file in sorted(base.rglob("*")):
        if file.is_file():
            path = file.relative_to(base).as_posix()
            api.upload("repo1", "main", path, file.read_bytes())
            paths.append(path)
    return paths


def test_purge_deletes_the_files_the_metadata_names_and_nothing_beside_them(
    api: Api, client: Client, credentials: Creds, secrets: None, tmp_path: Path
) -> None:
    catalog = rest_catalog(credentials)
    rows = pa.table({"id": pa.array([1, 2], pa.int64())})
    table = catalog.create_table(("repo1", "main", "sales", "orders"), rows.schema)
    table.append(rows)
    table.append(rows)
    files = _upload_tree(api, tmp_path / "files")
    location = table.metadata.location.removeprefix("s3://repo1/main/")
    assert sum(p.endswith(".parquet") for p in files) == 2 and sum(p.endswith(".avro") for p in files) >= 4
    unrelated = [f"{location}/notes.txt", f"{location}/data/not-a-table-file.parquet", "iceberg/sales/beside.txt"]
    unrelated.append(location + "-other/x")
    for path in unrelated:
        api.upload("repo1", "main", path, b"keep me")
    assert _purge(client, credentials, "orders").status_code == 204
    left = _objects(api)
    assert [path for path in files if path in left] == []
    assert sorted(p for p in left if p.startswith("iceberg/")) == sorted(unrelated)
    _secrets_intact(api)


def test_a_purge_of_a_table_whose_metadata_is_malformed_deletes_only_what_it_can_name(
    api: Api, client: Client, credentials: Creds, secrets: None
) -> None:
    """A registered metadata file whose lists are not lists, whose manifest list is not Avro: 400 for what cannot
    be read (nothing deleted), and what names nothing is skipped; never a 500."""
    assert _create(client, credentials, "t").status_code == 200
    metadata = _load(client, credentials, "t")["metadata"]
    location = metadata["location"]
    base = location.removeprefix("s3://repo1/main/")
    register = f"/namespaces/{_ns(SALES)}/register"
    odd = {**metadata, "snapshots": 7, "metadata-log": {"a": 1}, "statistics": "x"}
    api.upload("repo1", "main", f"{base}/metadata/00009-odd.metadata.json", json.dumps(odd).encode())
    body = {"name": "odd", "metadata-location": f"{location}/metadata/00009-odd.metadata.json"}
    assert iceberg_request(client, "POST", register, credentials, body).status_code == 200
    assert _purge(client, credentials, "odd").status_code == 204
    assert f"{base}/metadata/00009-odd.metadata.json" not in _objects(api, base)
    snapshot = {"snapshot-id": 1, "timestamp-ms": 1, "manifest-list": f"{location}/metadata/snap-1.avro"}
    broken = {**metadata, "snapshots": [snapshot], "current-snapshot-id": 1}
    api.upload("repo1", "main", f"{base}/metadata/snap-1.avro", b"not avro at all")
    api.upload("repo1", "main", f"{base}/metadata/00010-b.metadata.json", json.dumps(broken).encode())
    body = {"name": "broken", "metadata-location": f"{location}/metadata/00010-b.metadata.json"}
    assert iceberg_request(client, "POST", register, credentials, body).status_code == 200
    before = _objects(api, base)
    assert "Avro" in iceberg_error(_purge(client, credentials, "broken"), 400, "BadRequestException")
    assert _objects(api, base) == before
    assert _load(client, credentials, "broken")["metadata"]["current-snapshot-id"] == 1
