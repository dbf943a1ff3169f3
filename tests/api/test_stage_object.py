"""stageObject (PUT .../branches/{b}/objects, graveler/usecases/staged_objects.py): an object already in the store
staged by its address, only from the deployment's allowed import locations, checked against what is stored there."""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Iterator
from typing import Any

import lakefs_sdk
import pytest
from chalice.test import Client

from chalicelib import wiring

from .support import Api, assert_error, body_of, conforms

LANDING = "s3://external/landing/"
DATA = b"external bytes"
URL = "/repositories/repo1/branches/main/objects"


@pytest.fixture
def allowed(services: wiring.Services) -> Iterator[wiring.Services]:
    settings = dataclasses.replace(services.settings, import_allowed_locations=(LANDING,))
    changed = dataclasses.replace(services, settings=settings)
    wiring.set_services(changed)
    changed.engine.ports.blocks.put(LANDING + "day1/a.csv", DATA)
    yield changed
    wiring.set_services(services)


def creation(**change: Any) -> dict[str, Any]:
    return {
        "physical_address": LANDING + "day1/a.csv",
        "checksum": hashlib.md5(DATA).hexdigest(),
        "size_bytes": len(DATA),
        "content_type": "text/csv",
        "metadata": {"source": "landing"},
        **change,
    }


def test_an_allowed_object_is_staged_in_place(api: Api, repo: str, allowed: wiring.Services) -> None:
    response = api.request("PUT", URL, query={"path": "in/a.csv"}, json_body=creation(mtime=1_700_000_000))
    assert response.status_code == 201, response.body
    stats = conforms(lakefs_sdk.ObjectStats, body_of(response))
    assert (stats.physical_address, stats.size_bytes, stats.mtime) == (LANDING + "day1/a.csv", len(DATA), 1_700_000_000)
    assert api.get("/repositories/repo1/refs/main/objects", query={"path": "in/a.csv"}).body == DATA
    assert body_of(api.get("/repositories/repo1/refs/main/objects/stat", query={"path": "in/a.csv"}))["metadata"] == {
        "source": "landing"
    }


@pytest.mark.parametrize(
    ("change", "status"),
    [
        ({"physical_address": "s3://external/private/a.csv"}, 403),  # outside the allowed locations
        ({"physical_address": LANDING + "day1/missing.csv"}, 400),
        ({"size_bytes": 3}, 400),
        ({"checksum": "0" * 32}, 400),
        ({"size_bytes": -1}, 400),
        ({"physical_address": "/etc/passwd"}, 400),
    ],
)
def test_refusals_stage_nothing(
    api: Api, repo: str, allowed: wiring.Services, change: dict[str, Any], status: int
) -> None:
    assert_error(api.request("PUT", URL, query={"path": "in/a.csv"}, json_body=creation(**change)), status)
    assert_error(api.get("/repositories/repo1/refs/main/objects/stat", query={"path": "in/a.csv"}), 404)


def test_nothing_is_allowed_by_default(api: Api, repo: str, services: wiring.Services) -> None:
    services.engine.ports.blocks.put(LANDING + "day1/a.csv", DATA)
    message = assert_error(api.request("PUT", URL, query={"path": "in/a.csv"}, json_body=creation()), 403)
    assert "LAKELET_IMPORT_ALLOWED_LOCATIONS" in message


def test_read_only_needs_force(api: Api, allowed: wiring.Services) -> None:
    api.create_repo("frozen", read_only=True)
    url = "/repositories/frozen/branches/main/objects"
    assert_error(api.request("PUT", url, query={"path": "a.csv"}, json_body=creation()), 403)
    forced = api.request("PUT", url, query={"path": "a.csv"}, json_body=creation(force=True))
    assert forced.status_code == 201


def test_writing_the_path_is_not_enough(api: Api, client: Client, repo: str, allowed: wiring.Services) -> None:
    """Staging by address is an import of one object: it also needs fs:ImportFromStorage on the address."""
    writer = {"effect": "allow", "action": ["fs:WriteObject", "fs:ReadObject"], "resource": "*"}
    assert api.post("/auth/policies", json_body={"id": "writer", "statement": [writer]}).status_code == 201
    assert api.post("/auth/users", json_body={"id": "dev"}).status_code == 201
    assert api.request("PUT", "/auth/users/dev/policies/writer").status_code == 201
    pair = body_of(api.post("/auth/users/dev/credentials"))
    developer = Api(client, (pair["access_key_id"], pair["secret_access_key"]))
    assert (
        developer.post(URL, query={"path": "x"}, body=b"x", headers={"content-type": "text/plain"}).status_code == 201
    )
    assert_error(developer.request("PUT", URL, query={"path": "in/a.csv"}, json_body=creation()), 403)


def own_object(api: Api, repo: str, path: str = "tables/a.csv", data: bytes = DATA) -> dict[str, Any]:
    """An object uploaded and committed on main: its ObjectStats."""
    api.upload(repo, "main", path, data)
    api.commit(repo, "main", f"add {path}")
    return body_of(api.get(f"/repositories/{repo}/refs/main/objects/stat", query={"path": path}))


def test_an_address_in_the_repositorys_own_data_is_staged_in_place(api: Api, repo: str) -> None:
    """lakectl's fs stage of one of the repository's own objects (a zero-copy copy), with no allowed location
    configured: lakeFS accepts it, and so does Lakelet, pointing at the same bytes."""
    stats = own_object(api, repo)
    body = creation(physical_address=stats["physical_address"], checksum=stats["checksum"], content_type="text/csv")
    response = api.request("PUT", URL, query={"path": "copies/a.csv"}, json_body=body)
    assert response.status_code == 201, response.body
    assert body_of(response)["physical_address"] == stats["physical_address"]
    assert api.get("/repositories/repo1/refs/main/objects", query={"path": "copies/a.csv"}).body == DATA
    copied = body_of(api.get("/repositories/repo1/refs/main/objects/stat", query={"path": "copies/a.csv"}))
    assert copied["physical_address"] == stats["physical_address"]


def test_other_repositories_and_lakelets_own_files_stay_refused(api: Api, repo: str, services: wiring.Services) -> None:
    api.create_repo("other")
    theirs = own_object(api, "other")
    body = creation(physical_address=theirs["physical_address"], checksum=theirs["checksum"])
    assert_error(api.request("PUT", URL, query={"path": "stolen.csv"}, json_body=body), 403)
    # Even where the allowed locations cover the other repository's namespace.
    other_namespace = theirs["physical_address"].split("/data/")[0] + "/"
    settings = dataclasses.replace(services.settings, import_allowed_locations=(other_namespace,))
    wiring.set_services(dataclasses.replace(services, settings=settings))
    try:
        message = assert_error(api.request("PUT", URL, query={"path": "stolen.csv"}, json_body=body), 403)
        assert "storage namespace of a repository" in message
    finally:
        wiring.set_services(services)
    # The repository's own _lakefs/ (ranges, markers) is not object data.
    ours = own_object(api, repo)
    marker = ours["physical_address"].split("/data/")[0] + "/_lakefs/dummy"
    size = len(services.engine.ports.blocks.get(marker))
    refused = creation(physical_address=marker, size_bytes=size, checksum="0" * 32)
    assert_error(api.request("PUT", URL, query={"path": "marker"}, json_body=refused), 403)
    assert_error(api.get("/repositories/repo1/refs/main/objects/stat", query={"path": "stolen.csv"}), 404)


def test_an_upload_address_whose_url_may_still_rewrite_it_is_refused(api: Api, repo: str) -> None:
    """Staged by itself, a presigned upload's address would skip the link's copy, and the URL could then change the
    bytes a commit reads: refused while a URL may be live; a write-once address (its URL only creates) is fine."""
    backing = "/repositories/repo1/branches/main/staging/backing"
    for write_once, status in ((False, 400), (True, 201)):
        query = {"path": "up.csv", "presign": "true", "write_once": "true" if write_once else "false"}
        address = body_of(api.get(backing, query=query))["physical_address"]
        wiring.get_services().engine.ports.blocks.put(address, DATA)
        response = api.request("PUT", URL, query={"path": "up.csv"}, json_body=creation(physical_address=address))
        assert response.status_code == status, response.body
