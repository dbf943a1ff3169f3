"""getMetaRange, getRange and getMetadataObject (api/metadata_files.py): the locations and bytes of Lakelet's own
Parquet range and metarange files; getUnderlyingProperties and uploadObjectPreflight (api/objects.py)."""

from __future__ import annotations

import io

import lakefs_sdk
import pyarrow.parquet as pq
import pytest
from chalice.test import Client

from chalicelib import wiring

from .support import NAMESPACE, Api, assert_error, body_of, conforms


@pytest.fixture
def committed(api: Api, repo: str) -> str:
    api.upload(repo, "main", "a.txt", b"alpha")
    api.upload(repo, "main", "dir/b.txt", b"beta")
    return str(api.commit(repo, "main")["meta_range_id"])


def test_metarange_and_range_files_are_located_and_readable(api: Api, repo: str, committed: str) -> None:
    response = api.get(f"/repositories/{repo}/metadata/meta_range/{committed}")
    location = conforms(lakefs_sdk.StorageURI, body_of(response)).location
    assert location == f"{NAMESPACE}/{repo}/_lakefs/{committed}" and response.headers["Location"] == location

    raw = api.get(f"/repositories/{repo}/metadata/object/meta_range/{committed}", headers={"accept": "*/*"})
    assert raw.status_code == 200 and raw.headers["Content-Type"] == "application/octet-stream"
    metarange = pq.read_table(io.BytesIO(raw.body))
    assert metarange.column_names == ["range_id", "min_key", "max_key", "count", "estimated_size"]
    [range_id] = metarange.column("range_id").to_pylist()
    assert metarange.column("count").to_pylist() == [2]

    ranged = body_of(api.get(f"/repositories/{repo}/metadata/range/{range_id}"))
    assert ranged["location"] == f"{NAMESPACE}/{repo}/_lakefs/{range_id}"
    rows = pq.read_table(io.BytesIO(api.get(f"/repositories/{repo}/metadata/object/range/{range_id}").body))
    assert rows.column("key").to_pylist() == ["a.txt", "dir/b.txt"]
    assert rows.column("size").to_pylist() == [5, 4]


def test_presigned_metadata_object_redirects(api: Api, repo: str, committed: str) -> None:
    response = api.get(f"/repositories/{repo}/metadata/object/meta_range/{committed}", query={"presign": "true"})
    assert response.status_code == 302
    assert f"{repo}/_lakefs/{committed}" in response.headers["Location"]


def test_bad_and_missing_ids(api: Api, repo: str, committed: str) -> None:
    missing = "0" * 64
    assert_error(api.get(f"/repositories/{repo}/metadata/meta_range/{missing}"), 404)
    assert_error(api.get(f"/repositories/{repo}/metadata/range/{missing}"), 404)
    assert_error(api.get(f"/repositories/{repo}/metadata/range/not-a-hash"), 400)
    assert_error(api.get(f"/repositories/{repo}/metadata/object/commit/{committed}"), 400)
    assert_error(api.get(f"/repositories/nope1/metadata/meta_range/{committed}"), 404)
    # Another repository's file is not found through this one, even with the right id.
    api.create_repo("other")
    assert_error(api.get(f"/repositories/other/metadata/meta_range/{committed}"), 404)


def test_underlying_properties_report_the_storage_class(
    api: Api, repo: str, services: wiring.Services, committed: str
) -> None:
    url = f"/repositories/{repo}/refs/main/objects/underlyingProperties"
    props = conforms(lakefs_sdk.UnderlyingObjectProperties, body_of(api.get(url, query={"path": "a.txt"})))
    assert props.storage_class == "STANDARD"
    address = body_of(api.get(f"/repositories/{repo}/refs/main/objects/stat", query={"path": "dir/b.txt"}))
    services.engine.ports.blocks.storage_classes[address["physical_address"]] = "GLACIER"  # type: ignore[attr-defined]
    assert body_of(api.get(url, query={"path": "dir/b.txt"}))["storage_class"] == "GLACIER"
    assert_error(api.get(url, query={"path": "none.txt"}), 404)
    assert_error(api.get(url), 400)


def test_upload_preflight_checks_write_permission(api: Api, repo: str, client: Client) -> None:
    url = f"/repositories/{repo}/branches/main/objects/stage_allowed"
    assert api.get(url, query={"path": "x/y.csv"}).status_code == 204
    assert_error(api.get(url), 400)
    assert api.post("/auth/users", json_body={"id": "viewer"}).status_code == 201
    assert api.request("PUT", "/auth/groups/Viewers/members/viewer").status_code == 201
    pair = body_of(api.post("/auth/users/viewer/credentials"))
    viewer = Api(client, (pair["access_key_id"], pair["secret_access_key"]))
    assert_error(viewer.get(url, query={"path": "x/y.csv"}), 403)
