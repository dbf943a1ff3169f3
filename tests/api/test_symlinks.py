"""createSymlinkFile (api/symlinks.py, graveler/reads/symlinks.py): Hive/Athena symlink manifests of a branch under
``<namespace>/symlinks/<repository>/<branch>/<directory>/symlink.txt``, answered 201 StorageURI."""

from __future__ import annotations

import lakefs_sdk
from chalice.test import Client

from chalicelib import wiring

from .support import NAMESPACE, Api, assert_error, body_of, conforms


def _address(api: Api, repo: str, path: str) -> str:
    return str(
        body_of(api.get(f"/repositories/{repo}/refs/main/objects/stat", query={"path": path}))["physical_address"]
    )


def _manifests(services: wiring.Services, root: str) -> dict[str, list[str]]:
    blobs = services.engine.ports.blocks.blobs  # type: ignore[attr-defined]
    return {
        address.removeprefix(root + "/"): services.engine.ports.blocks.get(address).decode().split("\n")
        for address in sorted(blobs)
        if address.startswith(root + "/")
    }


def test_one_manifest_per_directory_lists_its_objects(api: Api, repo: str, services: wiring.Services) -> None:
    # "t/a/x" sorts between "t/1" and "t/b": the directory t comes back after its subdirectory, and its manifest
    # still lists both of its objects.
    for path in ("top.csv", "t/1", "t/a/x", "t/a/y", "t/b", "t/c/z"):
        api.upload(repo, "main", path, path.encode())
    api.commit(repo, "main")
    api.upload(repo, "main", "t/staged", b"not committed yet")  # staged objects are listed too

    response = api.post(f"/repositories/{repo}/refs/main/symlink")
    root = conforms(lakefs_sdk.StorageURI, body_of(response)).location
    assert response.status_code == 201 and root == f"{NAMESPACE}/{repo}/symlinks"

    found = _manifests(services, root)
    assert found == {
        f"{repo}/main/symlink.txt": [_address(api, repo, "top.csv")],
        f"{repo}/main/t/symlink.txt": [_address(api, repo, p) for p in ("t/1", "t/b", "t/staged")],
        f"{repo}/main/t/a/symlink.txt": [_address(api, repo, p) for p in ("t/a/x", "t/a/y")],
        f"{repo}/main/t/c/symlink.txt": [_address(api, repo, "t/c/z")],
    }
    assert all(line.startswith("s3://") for lines in found.values() for line in lines)


def test_location_limits_the_manifests(api: Api, repo: str, services: wiring.Services) -> None:
    for path in ("tables/events/p=1/a.parquet", "tables/events/p=2/b.parquet", "other/c.parquet"):
        api.upload(repo, "main", path, b"data")
    response = api.post(f"/repositories/{repo}/refs/main/symlink", query={"location": "tables/events/"})
    assert response.status_code == 201
    found = _manifests(services, body_of(response)["location"])
    assert sorted(found) == [f"{repo}/main/tables/events/p=1/symlink.txt", f"{repo}/main/tables/events/p=2/symlink.txt"]
    assert found[f"{repo}/main/tables/events/p=2/symlink.txt"] == [_address(api, repo, "tables/events/p=2/b.parquet")]


def test_empty_branch_writes_nothing(api: Api, repo: str, services: wiring.Services) -> None:
    response = api.post(f"/repositories/{repo}/refs/main/symlink")
    assert response.status_code == 201
    assert _manifests(services, body_of(response)["location"]) == {}
    api.upload(repo, "main", "a/b", b"x")
    assert (
        _manifests(
            services, body_of(api.post(f"/repositories/{repo}/refs/main/symlink", query={"location": "zz"}))["location"]
        )
        == {}
    )


def test_bad_input(api: Api, repo: str, client: Client) -> None:
    assert_error(api.post(f"/repositories/{repo}/refs/nope/symlink"), 404)
    assert_error(api.post("/repositories/nope1/refs/main/symlink"), 404)
    assert_error(api.post(f"/repositories/{repo}/refs/bad~name/symlink"), 400)
    assert_error(Api(client, None).post(f"/repositories/{repo}/refs/main/symlink"), 401)
    assert api.post("/auth/users", json_body={"id": "viewer"}).status_code == 201
    assert api.request("PUT", "/auth/groups/Viewers/members/viewer").status_code == 201
    pair = body_of(api.post("/auth/users/viewer/credentials"))
    viewer = Api(client, (pair["access_key_id"], pair["secret_access_key"]))
    assert_error(viewer.post(f"/repositories/{repo}/refs/main/symlink"), 403)
