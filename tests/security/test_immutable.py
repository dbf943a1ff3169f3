"""Guarantee 3: the bytes of a commit never change.

Link checks the uploaded object against the claim (it exists, the size is equal, the checksum matches where the
ETag is an MD5) and copies it to an address no presigned URL writes (chalicelib/graveler/writes/linking.py). Seen
before: a second PUT to the presigned URL, still valid after link and commit, changed the bytes read at the
commit ID and at a tag; link accepted size_bytes 1 for a 17-byte object.
"""

from __future__ import annotations

import hashlib
import json
import urllib.request
import uuid

import lakefs_sdk
import pytest

from chalicelib import wiring
from tests.api.support import Api, assert_error
from tests.e2e.conftest import LocalProcess

from .write_support import (
    REPO,
    api,
    credentials,
    link,
    repo,
    services,
    staging_location,
)

__all__ = ["api", "credentials", "repo", "services"]  # fixtures

DATA = b"seventeen bytes!!"
OBJECTS = f"/repositories/{REPO}/refs/{{ref}}/objects"


def read(api: Api, ref: str, path: str) -> bytes:
    response = api.get(OBJECTS.format(ref=ref), query={"path": path})
    assert response.status_code == 200, response.body
    return bytes(response.body)


def test_rewriting_the_upload_after_link_and_commit_changes_nothing_a_commit_reads(
    api: Api, repo: str, services: wiring.Services
) -> None:
    upload = staging_location(api, "a.csv")["physical_address"]
    services.engine.ports.blocks.put(upload, DATA)
    linked = link(api, "a.csv", upload, DATA)
    assert linked.status_code == 200, linked.body
    assert json.loads(linked.body)["physical_address"] != upload
    commit_id = api.commit(REPO, "main")["id"]
    assert api.post(f"/repositories/{REPO}/tags", json_body={"id": "v1", "ref": commit_id}).status_code == 201

    services.engine.ports.blocks.put(upload, b"tampered after the commit")  # the presigned URL used again

    for ref in (commit_id, "v1", "main"):
        assert read(api, ref, "a.csv") == DATA
        stats = json.loads(api.get(OBJECTS.format(ref=ref) + "/stat", query={"path": "a.csv"}).body)
        assert (stats["size_bytes"], stats["checksum"]) == (len(DATA), hashlib.md5(DATA).hexdigest())
    # The upload itself is gone after the link (only the tampering wrote it again): nothing reads it.
    assert services.engine.ports.blocks.get(upload) == b"tampered after the commit"


def test_the_upload_is_deleted_once_linked(api: Api, repo: str, services: wiring.Services) -> None:
    upload = staging_location(api, "b.csv")["physical_address"]
    services.engine.ports.blocks.put(upload, DATA)
    assert link(api, "b.csv", upload, DATA).status_code == 200
    assert not services.engine.ports.blocks.exists(upload)
    # Linking the same upload again finds nothing to link.
    assert_error(link(api, "b.csv", upload, DATA), 400)


@pytest.mark.parametrize(
    "claim",
    [
        {"size_bytes": 1},
        {"size_bytes": len(DATA) + 1},
        {"size_bytes": 0},
        {"checksum": hashlib.md5(b"other").hexdigest()},
        {"checksum": "not-the-etag"},
    ],
    ids=["size-1", "size-plus-1", "size-0", "other-md5", "garbage-checksum"],
)
def test_a_link_that_contradicts_the_upload_is_400_and_stores_nothing(
    api: Api, repo: str, services: wiring.Services, claim: dict[str, object]
) -> None:
    upload = staging_location(api, "c.csv")["physical_address"]
    services.engine.ports.blocks.put(upload, DATA)
    before = set(services.engine.ports.blocks.blobs)
    assert_error(link(api, "c.csv", upload, DATA, **claim), 400)
    assert set(services.engine.ports.blocks.blobs) == before  # no copy left behind
    assert_error(api.get(OBJECTS.format(ref="main") + "/stat", query={"path": "c.csv"}), 404)
    assert link(api, "c.csv", upload, DATA).status_code == 200  # the true claim still links


def test_a_quoted_etag_claim_links(api: Api, repo: str, services: wiring.Services) -> None:
    upload = staging_location(api, "q.csv")["physical_address"]
    services.engine.ports.blocks.put(upload, DATA)
    response = link(api, "q.csv", upload, DATA, checksum=f'"{hashlib.md5(DATA).hexdigest()}"')
    assert response.status_code == 200, response.body


def test_linking_nothing_is_400(api: Api, repo: str) -> None:
    upload = staging_location(api, "d.csv")["physical_address"]
    assert_error(link(api, "d.csv", upload, DATA), 400)


# ---- the same on the local stack: a real presigned URL, PUT twice ------------------------------------------


def _put(url: str, data: bytes) -> str:
    request = urllib.request.Request(url, data=data, method="PUT", headers={"Content-Type": "text/csv"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return str(response.headers["ETag"]).strip('"')


@pytest.mark.e2e
def test_a_second_put_to_the_presigned_url_changes_neither_the_commit_nor_the_tag(
    security_stack: LocalProcess,
) -> None:
    config = lakefs_sdk.Configuration(
        host=security_stack.api_url, username=security_stack.access_key_id, password=security_stack.secret_access_key
    )
    with lakefs_sdk.ApiClient(config) as client:
        name = f"immutable-{uuid.uuid4().hex[:8]}"
        prefix = lakefs_sdk.ConfigApi(client).get_config().storage_config.default_namespace_prefix
        lakefs_sdk.RepositoriesApi(client).create_repository(
            lakefs_sdk.RepositoryCreation(name=name, storage_namespace=prefix.rstrip("/") + "/" + name)
        )
        staging = lakefs_sdk.StagingApi(client)
        location = staging.get_physical_address(name, "main", "a.csv", presign=True)
        etag = _put(location.presigned_url, DATA)
        wrong = lakefs_sdk.StagingMetadata(staging=location, checksum=etag, size_bytes=1)
        with pytest.raises(lakefs_sdk.ApiException) as refused:
            staging.link_physical_address(name, "main", "a.csv", wrong)
        assert refused.value.status == 400
        staging.link_physical_address(
            name, "main", "a.csv", lakefs_sdk.StagingMetadata(staging=location, checksum=etag, size_bytes=len(DATA))
        )
        commit = lakefs_sdk.CommitsApi(client).commit(name, "main", lakefs_sdk.CommitCreation(message="one"))
        lakefs_sdk.TagsApi(client).create_tag(name, lakefs_sdk.TagCreation(id="v1", ref=commit.id))

        _put(location.presigned_url, b"tampered: a second PUT")

        objects = lakefs_sdk.ObjectsApi(client)
        for ref in (commit.id, "v1", "main"):
            assert bytes(objects.get_object(name, ref, "a.csv")) == DATA
            assert objects.stat_object(name, ref, "a.csv").physical_address != location.physical_address
            presigned_url = objects.stat_object(name, ref, "a.csv", presign=True).physical_address
            with urllib.request.urlopen(presigned_url, timeout=30) as presigned:
                assert presigned.read() == DATA
