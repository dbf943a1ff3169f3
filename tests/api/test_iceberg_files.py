"""Tables whose files are in the store (chalicelib/iceberg/files.py, credentials.py), in process: with a credential
vendor, a new table's location is a physical root no branch name is part of, loads and creates carry vended
credentials scoped to it (read-only for a reader), and each table commit links the files its new snapshot adds
(read from the manifest list and manifests pyiceberg's writers produce) as objects of the branch, so a table merged
from a branch keeps every file after that branch is deleted."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from chalice.test import Client
from pyiceberg.io import InputFile, OutputFile, OutputStream
from pyiceberg.manifest import (
    DataFile,
    DataFileContent,
    FileFormat,
    ManifestEntry,
    ManifestEntryStatus,
    write_manifest,
    write_manifest_list,
)
from pyiceberg.partitioning import UNPARTITIONED_PARTITION_SPEC
from pyiceberg.schema import Schema
from pyiceberg.typedef import Record
from pyiceberg.types import LongType, NestedField

from chalicelib import wiring
from chalicelib.iceberg.metadata import Json
from chalicelib.iceberg.ports import Vended

from .iceberg_support import iceberg_error, iceberg_request
from .support import Api, body_of

Creds = tuple[str, str]
SCHEMA = {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "type": "long", "required": False}]}
PY_SCHEMA = Schema(NestedField(1, "id", LongType(), required=False))


class FakeVendor:
    def __init__(self) -> None:
        self.policies: list[Json] = []

    def vend(self, policy: Json, session_name: str) -> Vended:
        self.policies.append(policy)
        return Vended(f"ASIA{len(self.policies):04d}", "secret", "token", 1_900_000_000_000)

    def client_config(self) -> dict[str, str]:
        return {"client.region": "us-east-1", "s3.region": "us-east-1"}


class _Sink(io.BytesIO):
    def __init__(self, put: Any) -> None:
        super().__init__()
        self._put = put

    def close(self) -> None:
        if not self.closed:
            self._put(self.getvalue())
        super().close()


class StoreOutput(OutputFile):
    """An OutputFile that lands in the services' block store at its s3:// address."""

    def __init__(self, location: str, blocks: Any) -> None:
        super().__init__(location)
        self.blocks = blocks

    def __len__(self) -> int:
        return len(self.blocks.get(self.location))

    def exists(self) -> bool:
        return bool(self.blocks.exists(self.location))

    def to_input_file(self) -> InputFile:
        raise NotImplementedError

    def create(self, overwrite: bool = False) -> OutputStream:
        return _Sink(lambda data: self.blocks.put(self.location, data))  # type: ignore[return-value]


@pytest.fixture
def vendor(services: wiring.Services, monkeypatch: pytest.MonkeyPatch) -> FakeVendor:
    fake = FakeVendor()
    monkeypatch.setattr(services, "vendor", fake)
    return fake


def ns(*parts: str) -> str:
    from urllib.parse import quote

    return quote("\x1f".join(parts), safe="")


def _table_path(ref: str, name: str) -> str:
    return f"/namespaces/{ns('repo1', ref, 'sales')}/tables/{name}"


def _snapshot(blocks: Any, root: str, snapshot_id: int, parent: int | None, files: list[tuple[str, int]]) -> str:
    """Writes data files (bytes of the given sizes), a manifest and a manifest list under ``root``; the list's
    address."""
    for name, size in files:
        blocks.put(f"{root}/data/{name}", b"x" * size)
    manifest_address = f"{root}/metadata/m-{snapshot_id}.avro"
    with write_manifest(
        2, UNPARTITIONED_PARTITION_SPEC, PY_SCHEMA, StoreOutput(manifest_address, blocks), snapshot_id, "deflate"
    ) as w:  # type: ignore[arg-type]
        for name, size in files:
            data_file = DataFile.from_args(
                content=DataFileContent.DATA,
                file_path=f"{root}/data/{name}",
                file_format=FileFormat.PARQUET,
                partition=Record(),
                record_count=1,
                file_size_in_bytes=size,
            )
            w.add_entry(
                ManifestEntry.from_args(status=ManifestEntryStatus.ADDED, snapshot_id=snapshot_id, data_file=data_file)
            )
    manifest = w.to_manifest_file()
    list_address = f"{root}/metadata/snap-{snapshot_id}.avro"
    with write_manifest_list(2, StoreOutput(list_address, blocks), snapshot_id, parent, snapshot_id, "deflate") as lw:  # type: ignore[arg-type]
        lw.add_manifests([manifest])
    return list_address


def _append(client: Client, creds: Creds, ref: str, name: str, blocks: Any, files: list[tuple[str, int]]) -> Any:
    loaded = json.loads(iceberg_request(client, "GET", _table_path(ref, name), creds).body)
    metadata = loaded["metadata"]
    parent = metadata.get("current-snapshot-id")
    parent = None if parent in (None, -1) else parent
    snapshot_id = 1000 + len(metadata.get("snapshots") or [])
    manifest_list = _snapshot(blocks, metadata["location"], snapshot_id, parent, files)
    snapshot = {
        "snapshot-id": snapshot_id,
        "sequence-number": metadata["last-sequence-number"] + 1,
        "timestamp-ms": 1_700_000_000_000 + snapshot_id,
        "manifest-list": manifest_list,
        "summary": {"operation": "append"},
        "schema-id": 0,
        **({"parent-snapshot-id": parent} if parent is not None else {}),
    }
    updates = [
        {"action": "add-snapshot", "snapshot": snapshot},
        {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": snapshot_id},
    ]
    return iceberg_request(client, "POST", _table_path(ref, name), creds, {"requirements": [], "updates": updates})


@pytest.fixture
def sales(api: Api, repo: str, client: Client, credentials: Creds) -> None:
    created = iceberg_request(client, "POST", "/namespaces", credentials, {"namespace": ["repo1", "main", "sales"]})
    assert created.status_code == 200, created.body


def test_a_new_table_lives_in_the_store_and_comes_with_credentials(
    client: Client, credentials: Creds, sales: None, vendor: FakeVendor, services: wiring.Services
) -> None:
    created = iceberg_request(
        client,
        "POST",
        f"/namespaces/{ns('repo1', 'main', 'sales')}/tables",
        credentials,
        {"name": "t", "schema": SCHEMA},
    )
    assert created.status_code == 200, created.body
    body = json.loads(created.body)
    namespace = services.engine.repositories.get_repository("repo1").storage_namespace
    root = body["metadata"]["location"]
    assert root.startswith(namespace + "/data/") and "/main/" not in root
    assert body["metadata-location"].startswith(root + "/metadata/00000-")
    assert body["config"]["s3.access-key-id"] == "ASIA0001" and body["config"]["s3.session-token"] == "token"
    assert body["config"]["s3.session-token-expires-at-ms"] == "1900000000000"
    assert body["config"]["client.refresh-credentials-endpoint"].endswith("/tables/t/credentials")
    assert body["storage-credentials"][0]["prefix"] == root
    statement = vendor.policies[0]["Statement"][0]
    bucket_key = root.removeprefix("s3://")
    assert statement["Resource"] == f"arn:aws:s3:::{bucket_key}/*" and "s3:PutObject" in statement["Action"]
    # The metadata file is in the store, and an object of the branch under the table's path.
    assert services.engine.repositories.namespace_files(namespace).get(body["metadata-location"])
    listed = services.engine.objects.list_objects("repo1", "main", prefix="iceberg/sales/", amount=100).results
    assert [o.entry.physical_address for o in listed if o.entry] == [body["metadata-location"]]
    refreshed = iceberg_request(client, "GET", _table_path("main", "t") + "/credentials", credentials)
    assert json.loads(refreshed.body)["storage-credentials"][0]["config"]["s3.access-key-id"] == "ASIA0002"


def test_commits_link_the_files_a_snapshot_adds_and_a_merged_table_outlives_its_branch(
    api: Api, client: Client, credentials: Creds, sales: None, vendor: FakeVendor, services: wiring.Services
) -> None:
    blocks = services.engine.ports.blocks
    path = f"/namespaces/{ns('repo1', 'main', 'sales')}/tables"
    assert iceberg_request(client, "POST", path, credentials, {"name": "t", "schema": SCHEMA}).status_code == 200
    assert _append(client, credentials, "main", "t", blocks, [("a.parquet", 9_000_000)]).status_code == 200
    assert api.post("/repositories/repo1/branches/main/commits", json_body={"message": "first"}).status_code == 201
    assert api.post("/repositories/repo1/branches", json_body={"name": "dev", "source": "main"}).status_code == 201
    assert _append(client, credentials, "dev", "t", blocks, [("b.parquet", 10), ("c.parquet", 20)]).status_code == 200
    root = json.loads(iceberg_request(client, "GET", _table_path("dev", "t"), credentials).body)["metadata"]["location"]
    location = "iceberg/sales/t-"
    listed = [
        o for o in services.engine.objects.list_objects("repo1", "dev", prefix=location, amount=100).results if o.entry
    ]
    on_dev = {str(o.key).split("/", 3)[-1]: o.entry.physical_address for o in listed if o.entry}
    on_dev_paths = {str(o.key).split("/", 3)[-1]: str(o.key) for o in listed}
    assert on_dev["data/b.parquet"] == f"{root}/data/b.parquet" and on_dev["data/a.parquet"] == f"{root}/data/a.parquet"
    assert {"metadata/snap-1000.avro", "metadata/snap-1001.avro", "metadata/m-1001.avro"} <= set(on_dev)
    assert services.engine.objects.stat_object("repo1", "dev", on_dev_paths["data/a.parquet"]).size == 9_000_000
    # Merge dev into main, delete dev: main's table names the same physical files, all objects of main.
    assert api.post("/repositories/repo1/branches/dev/commits", json_body={"message": "dev"}).status_code == 201
    assert api.post("/repositories/repo1/refs/dev/merge/main", json_body={}).status_code == 200
    assert api.request("DELETE", "/repositories/repo1/branches/dev").status_code == 204
    loaded = json.loads(iceberg_request(client, "GET", _table_path("main", "t"), credentials).body)
    assert loaded["metadata"]["current-snapshot-id"] == 1001
    assert loaded["metadata"]["location"] == root
    on_main = {
        str(o.key).split("/", 3)[-1]
        for o in services.engine.objects.list_objects("repo1", "main", prefix=location, amount=100).results
        if o.entry
    }
    assert {"data/a.parquet", "data/b.parquet", "data/c.parquet"} <= on_main


def test_a_reader_gets_read_only_credentials_and_a_bad_snapshot_is_refused(
    api: Api, client: Client, credentials: Creds, sales: None, vendor: FakeVendor, services: wiring.Services
) -> None:
    path = f"/namespaces/{ns('repo1', 'main', 'sales')}/tables"
    assert iceberg_request(client, "POST", path, credentials, {"name": "t", "schema": SCHEMA}).status_code == 200
    policy = {"id": "reader", "statement": [{"effect": "allow", "action": ["fs:Read*", "fs:List*"], "resource": "*"}]}
    assert api.post("/auth/policies", json_body=policy).status_code == 201
    assert api.post("/auth/users", json_body={"id": "rita"}).status_code == 201
    api.request("PUT", "/auth/users/rita/policies/reader")
    rita = body_of(api.post("/auth/users/rita/credentials"))
    loaded = iceberg_request(
        client, "GET", _table_path("main", "t"), (rita["access_key_id"], rita["secret_access_key"])
    )
    assert loaded.status_code == 200
    actions = vendor.policies[-1]["Statement"][0]["Action"]
    assert "s3:GetObject" in actions and not any(a in actions for a in ("s3:PutObject", "s3:DeleteObject"))
    # A snapshot naming a manifest list that is not there: 400, nothing moved.
    bad = {
        "snapshot-id": 5,
        "sequence-number": 1,
        "timestamp-ms": 1,
        "manifest-list": json.loads(loaded.body)["metadata"]["location"] + "/metadata/missing.avro",
        "summary": {"operation": "append"},
    }
    answer = iceberg_request(
        client,
        "POST",
        _table_path("main", "t"),
        credentials,
        {"requirements": [], "updates": [{"action": "add-snapshot", "snapshot": bad}]},
    )
    iceberg_error(answer, 400, "BadRequestException")


def test_a_purge_deletes_the_linked_files_on_the_branch(
    client: Client, credentials: Creds, sales: None, vendor: FakeVendor, services: wiring.Services
) -> None:
    blocks = services.engine.ports.blocks
    path = f"/namespaces/{ns('repo1', 'main', 'sales')}/tables"
    assert iceberg_request(client, "POST", path, credentials, {"name": "t", "schema": SCHEMA}).status_code == 200
    assert _append(client, credentials, "main", "t", blocks, [("a.parquet", 10)]).status_code == 200
    listed = services.engine.objects.list_objects("repo1", "main", prefix="iceberg/sales/t-", amount=100).results
    assert len([o for o in listed if o.entry]) == 5  # two metadata files, the list, the manifest, the data file
    dropped = iceberg_request(client, "DELETE", _table_path("main", "t") + "?purgeRequested=true", credentials)
    assert dropped.status_code == 204, dropped.body
    listed = services.engine.objects.list_objects("repo1", "main", prefix="iceberg/sales/t-", amount=100).results
    assert [o for o in listed if o.entry] == []


def test_a_table_of_an_earlier_version_keeps_the_gateway(
    client: Client, credentials: Creds, sales: None, services: wiring.Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Created before the catalog could vend (no root in its pointer), a table keeps its location at the ref and
    the gateway's config, and takes commits, once credentials are vended for new tables."""
    path = f"/namespaces/{ns('repo1', 'main', 'sales')}/tables"
    assert iceberg_request(client, "POST", path, credentials, {"name": "old", "schema": SCHEMA}).status_code == 200
    fake = FakeVendor()
    monkeypatch.setattr(services, "vendor", fake)
    loaded = json.loads(iceberg_request(client, "GET", _table_path("main", "old"), credentials).body)
    assert loaded["metadata"]["location"].startswith("s3://repo1/main/iceberg/sales/old-")
    assert "s3.access-key-id" not in loaded["config"] and "storage-credentials" not in loaded
    updates = [{"action": "set-properties", "updates": {"a": "1"}}]
    body = {"requirements": [], "updates": updates}
    assert iceberg_request(client, "POST", _table_path("main", "old"), credentials, body).status_code == 200
    assert fake.policies == []
