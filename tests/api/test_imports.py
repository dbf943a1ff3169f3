"""importStart / importStatus / importCancel in lakeFS's shapes, on the in-memory twins; sources are objects in the
same memory store under s3://source/ (the lakefs_sdk models parse every answer)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import lakefs_sdk
import pytest

from chalicelib import wiring
from chalicelib.settings import ENV_IMPORT_ALLOWED_LOCATIONS, Settings

from .support import BUCKET, Api, assert_error, body_of

ALLOWED = "s3://source/allowed/"


@pytest.fixture
def services() -> Iterator[wiring.Services]:
    built = wiring.memory_services(Settings(bucket=BUCKET, import_allowed_locations=(ALLOWED,)))
    wiring.set_services(built)
    try:
        yield built
    finally:
        wiring.set_services(None)


@pytest.fixture
def sources(services: wiring.Services) -> None:
    for key, data in {
        "data/a.csv": b"a",
        "data/2024/b.csv": b"bb",
        "data/2024/01/c.csv": b"ccc",
        "single.bin": b"single",
    }.items():
        services.engine.ports.blocks.put(ALLOWED + key, data)


def start(api: Api, repo: str, paths: list[dict[str, str]], branch: str = "main", **extra: object):
    body = {"paths": paths, "commit": {"message": "imported", "metadata": {"k": "v"}}, **extra}
    return api.post(f"/repositories/{repo}/branches/{branch}/import", json_body=body)


def status(api: Api, repo: str, import_id: str, branch: str = "main"):
    return api.get(f"/repositories/{repo}/branches/{branch}/import", query={"id": import_id})


PATHS = [
    {"type": "common_prefix", "path": ALLOWED + "data/", "destination": "imported/"},
    {"type": "object", "path": ALLOWED + "single.bin", "destination": "one/single.bin"},
]


def test_import_start_status_and_the_objects(api: Api, repo: str, sources: None) -> None:
    started = start(api, repo, PATHS)
    assert started.status_code == 202, started.body
    created = lakefs_sdk.ImportCreationResponse.from_json(started.body.decode())
    answer = status(api, repo, created.id)
    assert answer.status_code == 200
    parsed = lakefs_sdk.ImportStatus.from_json(answer.body.decode())
    assert parsed.completed and parsed.error is None and parsed.ingested_objects == 4
    assert parsed.commit is not None and parsed.commit.message == "imported"
    assert parsed.commit.metadata["k"] == "v"
    head = body_of(api.get(f"/repositories/{repo}/branches/main"))["commit_id"]
    assert head == parsed.commit.id
    listed = body_of(api.get(f"/repositories/{repo}/refs/main/objects/ls"))["results"]
    assert {o["path"]: o["physical_address"] for o in listed} == {
        "imported/2024/01/c.csv": ALLOWED + "data/2024/01/c.csv",
        "imported/2024/b.csv": ALLOWED + "data/2024/b.csv",
        "imported/a.csv": ALLOWED + "data/a.csv",
        "one/single.bin": ALLOWED + "single.bin",
    }
    read = api.get(
        f"/repositories/{repo}/refs/main/objects",
        query={"path": "imported/2024/b.csv"},
        headers={"accept": "application/octet-stream", "range": "bytes=1-1"},
    )
    assert read.status_code == 206 and read.body == b"b"
    stat = body_of(api.get(f"/repositories/{repo}/refs/main/objects/stat", query={"path": "one/single.bin"}))
    assert stat["size_bytes"] == 6 and stat["physical_address"] == ALLOWED + "single.bin"
    # The import branch is hidden; the branch moved to the very commit built there, whose one parent is the old
    # head, as lakeFS's import commit (issue 40: Lakelet's used to be a merge with two parents).
    branches = [b["id"] for b in body_of(api.get(f"/repositories/{repo}/branches"))["results"]]
    assert "_main_imported" not in branches
    imported = body_of(api.get(f"/repositories/{repo}/branches/_main_imported"))["commit_id"]
    assert parsed.commit.id == imported == body_of(api.get(f"/repositories/{repo}/branches/main"))["commit_id"]
    assert len(parsed.commit.parents) == 1
    assert parsed.commit.metadata[".lakefs.merge.strategy"] == "source-wins"


def test_config_reports_import_support(api: Api) -> None:
    config = body_of(api.get("/config"))
    assert config["storage_config"]["import_support"] is True


def test_a_source_outside_the_allowed_locations_is_403_naming_the_setting(
    api: Api, repo: str, sources: None, services: wiring.Services
) -> None:
    before = set(services.engine.ports.blocks.blobs)
    head = body_of(api.get(f"/repositories/{repo}/branches/main"))["commit_id"]
    answer = start(api, repo, [{"type": "common_prefix", "path": "s3://source/secret/", "destination": "x/"}])
    assert ENV_IMPORT_ALLOWED_LOCATIONS in assert_error(answer, 403)
    assert set(services.engine.ports.blocks.blobs) == before
    assert body_of(api.get(f"/repositories/{repo}/branches/main"))["commit_id"] == head
    assert api.get(f"/repositories/{repo}/branches/_main_imported").status_code == 404


@pytest.mark.parametrize(
    "paths",
    [
        [],
        [{"type": "folder", "path": ALLOWED + "data/", "destination": "x/"}],
        [{"type": "common_prefix", "path": "gs://bucket/x/", "destination": "x/"}],
        [{"type": "common_prefix", "destination": "x/"}],
        ["s3://source/allowed/data/"],
    ],
)
def test_bad_import_requests_are_400(api: Api, repo: str, paths: list) -> None:
    assert_error(start(api, repo, paths), 400)


@pytest.mark.parametrize(
    ("path", "destination"),
    [
        (ALLOWED + "../secret/", "x/"),
        (ALLOWED + "data/../../secret/", "x/"),
        (ALLOWED + "./data/", "x/"),
        (ALLOWED + "data//", "x/"),
        ("s3://source//allowed/data/", "x/"),
        (ALLOWED + "%2e%2e/secret/", "x/"),
        (ALLOWED + "data%2F..%2Fsecret/", "x/"),
        (ALLOWED + "data/\x00/", "x/"),
        (ALLOWED + "data/\n/", "x/"),
        (ALLOWED + "data/\x7f/", "x/"),
        ("s3://source%2Fallowed/data/", "x/"),
        ("s3://source\\allowed/data/", "x/"),
        (ALLOWED + "data/", "../x/"),
        (ALLOWED + "data/", "x/../y/"),
        (ALLOWED + "data/", "./x/"),
        (ALLOWED + "data/", "x//y/"),
        (ALLOWED + "data/", "/x/"),
        (ALLOWED + "data/", "x/%2e%2e/"),
        (ALLOWED + "data/", "x/\t/"),
    ],
)
def test_a_location_that_is_not_a_plain_key_is_400(
    api: Api, repo: str, sources: None, services: wiring.Services, path: str, destination: str
) -> None:
    """The allowed-locations check compares text: a path whose text lies under the allowed prefix but that a
    reader could resolve elsewhere (dot segments, doubled slashes, escapes, control characters) is refused
    before anything is recorded."""
    before = set(services.engine.ports.blocks.blobs)
    message = assert_error(start(api, repo, [{"type": "common_prefix", "path": path, "destination": destination}]), 400)
    assert "paths:" in message
    assert set(services.engine.ports.blocks.blobs) == before
    assert api.get(f"/repositories/{repo}/branches/_main_imported").status_code == 404


def test_an_object_location_with_dot_segments_is_400(api: Api, repo: str, sources: None) -> None:
    answer = start(api, repo, [{"type": "object", "path": ALLOWED + "../secret.bin", "destination": "s.bin"}])
    assert_error(answer, 400)
    answer = start(api, repo, [{"type": "object", "path": ALLOWED + "single.bin", "destination": "a/../s.bin"}])
    assert_error(answer, 400)


def test_an_allowed_bucket_is_matched_whole(repo: str, sources: None) -> None:
    """An allowed ``s3://source`` (no slash) covers that bucket, not every bucket whose name starts with it."""
    from chalicelib.graveler.imports import ImportLocation, check_allowed
    from chalicelib.graveler.imports.errors import ImportNotAllowed

    check_allowed([ImportLocation("common_prefix", "s3://source/any/", "x/")], ["s3://source"], "SETTING")
    with pytest.raises(ImportNotAllowed):
        check_allowed([ImportLocation("common_prefix", "s3://source-private/any/", "x/")], ["s3://source"], "SETTING")


def test_plain_keys_as_the_lakefs_client_sends_them_still_import(
    api: Api, repo: str, services: wiring.Services
) -> None:
    """What ImportManager.prefix/.object send: s3://bucket/prefix/ with a trailing slash, a destination with one
    (or the branch's root), keys with '=' and '%' not followed by hex, dots inside names."""
    for key, data in {"t/y=2024/part.0.csv": b"a", "t/100% done.txt": b"b", "t/.hidden": b"c"}.items():
        services.engine.ports.blocks.put(ALLOWED + key, data)
    started = start(api, repo, [{"type": "common_prefix", "path": ALLOWED + "t/", "destination": ""}])
    assert started.status_code == 202, started.body
    listed = body_of(api.get(f"/repositories/{repo}/refs/main/objects/ls"))["results"]
    assert {o["path"] for o in listed} >= {"y=2024/part.0.csv", "100% done.txt", ".hidden"}


def test_missing_repository_branch_and_import(api: Api, repo: str, sources: None) -> None:
    assert_error(start(api, "nope", PATHS), 404)
    assert_error(start(api, repo, PATHS, branch="nope"), 404)
    assert_error(status(api, repo, "0" * 32), 404)
    assert_error(status(api, repo, "not-an-id"), 404)
    assert_error(api.get(f"/repositories/{repo}/branches/main/import"), 400)


def test_cancel_after_completion_is_409_and_unknown_is_404(api: Api, repo: str, sources: None) -> None:
    import_id = body_of(start(api, repo, PATHS))["id"]
    path = f"/repositories/{repo}/branches/main/import"
    assert_error(api.delete(path, query={"id": import_id}), 409)
    assert_error(api.delete(path, query={"id": "f" * 32}), 404)


def test_a_failed_import_reports_its_error(api: Api, repo: str) -> None:
    import_id = body_of(start(api, repo, [{"type": "object", "path": ALLOWED + "missing.bin", "destination": "m"}]))[
        "id"
    ]
    parsed = lakefs_sdk.ImportStatus.from_json(status(api, repo, import_id).body.decode())
    assert not parsed.completed and parsed.error is not None and "missing.bin" in parsed.error.message


def test_reimport_drops_what_the_source_no_longer_holds(
    api: Api, repo: str, sources: None, services: wiring.Services
) -> None:
    start(api, repo, PATHS[:1])
    services.engine.ports.blocks.delete(ALLOWED + "data/a.csv")
    import_id = body_of(start(api, repo, PATHS[:1]))["id"]
    assert json.loads(status(api, repo, import_id).body)["completed"]
    listed = body_of(api.get(f"/repositories/{repo}/refs/main/objects/ls"))["results"]
    assert [o["path"] for o in listed] == ["imported/2024/01/c.csv", "imported/2024/b.csv"]
