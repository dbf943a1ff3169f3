"""Imports never read a repository's namespace or the deployment's own files, whatever the allowed locations say.

The report: with LAKELET_IMPORT_ALLOWED_LOCATIONS covering the data bucket, a user with rights on repository A
imported B's namespace into A and read B's committed and staged objects; ``_lakelet/`` and ``_lakefs/`` were
importable too. Here the setting covers the bucket's ``repos/`` (where the repositories live) and ``old/``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from chalice.test import Client

from chalicelib import wiring
from chalicelib.settings import ENV_BUCKET, ENV_IMPORT_ALLOWED_LOCATIONS, Settings
from tests.api.support import BUCKET, Api, app, body_of

COVERING = (f"s3://{BUCKET}/repos/", f"s3://{BUCKET}/old/", f"s3://{BUCKET}/_lakelet/", f"s3://{BUCKET}/")


@pytest.fixture
def api() -> Iterator[Api]:
    built = wiring.memory_services(Settings(bucket=BUCKET, import_allowed_locations=COVERING))
    wiring.set_services(built)
    try:
        credential, secret = built.auth.setup("admin")
        with Client(app) as client:
            yield Api(client, (credential.access_key_id, secret))
    finally:
        wiring.set_services(None)


def start(api: Api, path: str, kind: str = "common_prefix", destination: str = "stolen/") -> Any:
    body = {"paths": [{"type": kind, "path": path, "destination": destination}], "commit": {"message": "m"}}
    return api.post("/repositories/repo-a/branches/main/import", json_body=body)


def secrets(api: Api) -> dict[str, str]:
    """B's committed and staged secrets, and their physical addresses."""
    api.create_repo("repo-a")
    api.create_repo("repo-b")
    api.upload("repo-b", "main", "secret/committed.txt", b"B committed secret")
    api.commit("repo-b", "main", "secrets")
    api.upload("repo-b", "main", "secret/staged.txt", b"B staged secret")
    listed = body_of(api.get("/repositories/repo-b/refs/main/objects/ls"))["results"]
    return {o["path"]: o["physical_address"] for o in listed}


def test_another_repositorys_namespace_is_refused_in_every_spelling(api: Api) -> None:
    addresses = secrets(api)
    ns = f"s3://{BUCKET}/repos/repo-b"
    for path, kind in (
        (ns + "/", "common_prefix"),
        (ns + "/data/", "common_prefix"),
        (ns + "/_lakefs/", "common_prefix"),
        (ns, "common_prefix"),  # no trailing slash: still every key of the namespace
        (f"s3://{BUCKET}/repos/repo-", "common_prefix"),
        (f"s3://{BUCKET}/repos/", "common_prefix"),  # contains both namespaces
        (f"s3://{BUCKET}/", "common_prefix"),
        (addresses["secret/committed.txt"], "object"),
        (addresses["secret/staged.txt"], "object"),
        (f"s3://{BUCKET}/_lakelet/", "common_prefix"),
        (f"s3://{BUCKET}/_lakelet/samples-created.json", "object"),
    ):
        destination = "stolen/" if kind == "common_prefix" else "stolen/x"
        response = start(api, path, kind, destination)
        assert response.status_code == 403, (path, response.status_code, response.body)
        assert "no setting allows it" in json.loads(response.body)["message"], path
    for path in (ns.replace("repos/", "repos//") + "/", ns + "%2F", ns + "/./data/"):
        assert start(api, path).status_code == 400, path
    listed = body_of(api.get("/repositories/repo-a/refs/main/objects/ls"))["results"]
    assert listed == []


def test_a_deleted_repositorys_namespace_stays_refused(api: Api) -> None:
    api.create_repo("repo-a")
    body = {"name": "gone", "storage_namespace": f"s3://{BUCKET}/repos/gone"}
    assert api.post("/repositories", json_body=body).status_code == 201
    api.upload("gone", "main", "secret.txt", b"left behind")
    api.commit("gone", "main", "m")
    assert api.delete("/repositories/gone").status_code == 204
    response = start(api, f"s3://{BUCKET}/repos/gone/data/")
    assert response.status_code == 403, response.body


def wait(api: Api, import_id: str) -> dict[str, Any]:
    for _ in range(100):
        answer = body_of(api.get("/repositories/repo-a/branches/main/import", query={"id": import_id}))
        if answer["completed"] or answer.get("error"):
            return answer
        time.sleep(0.05)
    raise AssertionError("import did not end")


def test_a_prefix_holding_a_deleted_namespace_fails_on_its_marker(api: Api) -> None:
    """No record names the deleted repository, so the start cannot tell; its marker under _lakefs/ is listed first
    (it sorts before data/) and fails the import: nothing lands."""
    api.create_repo("repo-a")
    body = {"name": "old-c", "storage_namespace": f"s3://{BUCKET}/old/c"}
    assert api.post("/repositories", json_body=body).status_code == 201
    api.upload("old-c", "main", "secret.txt", b"left behind")
    api.commit("old-c", "main", "m")
    assert api.delete("/repositories/old-c").status_code == 204
    response = start(api, f"s3://{BUCKET}/old/")
    assert response.status_code == 202, response.body
    answer = wait(api, json.loads(response.body)["id"])
    assert not answer["completed"] and "contains a storage namespace" in answer["error"]["message"]
    assert body_of(api.get("/repositories/repo-a/refs/main/objects/ls"))["results"] == []


def test_data_beside_the_namespaces_still_imports(api: Api) -> None:
    secrets(api)
    services = wiring.get_services()
    services.engine.ports.blocks.put(f"s3://{BUCKET}/repos/incoming/a.csv", b"a")
    response = start(api, f"s3://{BUCKET}/repos/incoming/", destination="in/")
    assert response.status_code == 202, response.body
    assert wait(api, json.loads(response.body)["id"])["completed"]
    listed = body_of(api.get("/repositories/repo-a/refs/main/objects/ls"))["results"]
    assert [o["path"] for o in listed] == ["in/a.csv"]


@pytest.mark.parametrize(
    "value",
    [
        "s3://lakelet-data/",
        "lakelet-data:",
        "s3://elsewhere/_lakelet/",
        "s3://elsewhere/x/_lakefs/",
        "lakelet-data:_lakelet/",
    ],
)
def test_the_setting_refuses_the_deployments_own_at_start(value: str) -> None:
    with pytest.raises(ValueError, match=ENV_IMPORT_ALLOWED_LOCATIONS):
        Settings.from_env({ENV_BUCKET: "lakelet-data", ENV_IMPORT_ALLOWED_LOCATIONS: value})


def test_the_setting_keeps_prefixes_it_cannot_tell_about() -> None:
    got = Settings.from_env({ENV_BUCKET: "lakelet-data", ENV_IMPORT_ALLOWED_LOCATIONS: "s3://lakelet-data/raw/,raw:"})
    assert got.import_allowed_locations == ("s3://lakelet-data/raw/", "s3://raw/")
