"""Lakelet's batch upload (POST .../branches/{branch}/objects/batch, chalicelib/api/batch_body.py): many objects staged
by one request, each as a single upload would stage it; anything wrong refuses the whole batch before a byte is
written."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

import lakefs_sdk
import pytest
from chalice.test import Client

from chalicelib import wiring
from chalicelib.api.batch_body import MAX_BATCH_BYTES, MAX_MANIFEST_BYTES
from chalicelib.graveler.writes.batch_upload import MAX_BATCH_OBJECTS

from .support import Api, assert_error, body_of, conforms

BATCH = "/repositories/repo1/branches/{branch}/objects/batch"


def batch_body(*objects: tuple[str, bytes], **fields: Any) -> bytes:
    """A batch body: the manifest line (``fields`` merged into each object's entry), then the bytes."""
    manifest = {"objects": [{"path": path, "size_bytes": len(data), **fields} for path, data in objects]}
    return json.dumps(manifest).encode() + b"\n" + b"".join(data for _, data in objects)


def send(api: Api, body: bytes, branch: str = "main", **headers: str):  # type: ignore[no-untyped-def]
    return api.post(
        BATCH.format(branch=branch), body=body, headers={"content-type": "application/octet-stream", **headers}
    )


def read(api: Api, path: str, ref: str = "main") -> bytes:
    response = api.get(f"/repositories/repo1/refs/{ref}/objects", query={"path": path})
    assert response.status_code == 200, (path, response.status_code)
    return bytes(response.body)


def staged_paths(api: Api) -> list[str]:
    return [row["path"] for row in body_of(api.get("/repositories/repo1/branches/main/diff"))["results"]]


def test_a_batch_stages_every_object_as_single_uploads_would(api: Api, repo: str) -> None:
    files = [
        ("data/a.csv", b"a,b\n1,2\n"),
        ("data/empty", b""),
        ("bin", bytes(range(256)) * 3 + b"\n\r\n"),
        ("unicode/ü €.txt", "grüße".encode()),
    ]
    response = send(api, batch_body(*files, content_type="text/csv", user_metadata={"owner": "team"}))
    assert response.status_code == 201, response.body
    results = body_of(response)["results"]
    assert [r["path"] for r in results] == [path for path, _ in files]
    for (path, data), row in zip(files, results, strict=True):
        stats = conforms(lakefs_sdk.ObjectStats, row)
        assert (stats.size_bytes, stats.checksum) == (len(data), hashlib.md5(data).hexdigest())
        assert stats.content_type == "text/csv" and stats.metadata == {"owner": "team"}
        assert stats.physical_address.startswith("s3://test-bucket/repos/repo1/data/")
        assert read(api, path) == data
        stat = body_of(api.get("/repositories/repo1/refs/main/objects/stat", query={"path": path}))
        assert (stat["checksum"], stat["metadata"]) == (stats.checksum, {"owner": "team"})
    assert len({r["physical_address"] for r in results}) == len(files)  # each object its own address
    assert staged_paths(api) == sorted(path for path, _ in files)
    commit = api.commit("repo1", "main", "batch")
    assert read(api, "bin", commit["id"]) == files[2][1]


def test_fields_default_and_a_later_batch_replaces_staged_objects(api: Api, repo: str) -> None:
    assert send(api, batch_body(("a", b"one"), ("b", b"two"))).status_code == 201
    again = send(api, batch_body(("a", b"ONE!")))
    assert again.status_code == 201
    row = body_of(again)["results"][0]
    assert (row["content_type"], row["metadata"]) == ("application/octet-stream", {})
    assert (read(api, "a"), read(api, "b")) == (b"ONE!", b"two")


def test_a_checksum_given_is_checked(api: Api, repo: str) -> None:
    good = batch_body(("a", b"abc"), checksum=hashlib.md5(b"abc").hexdigest())
    assert send(api, good).status_code == 201
    bad = batch_body(("b", b"abc"), checksum=hashlib.md5(b"abd").hexdigest())
    assert "not" in assert_error(send(api, bad), 400)
    assert_error(send(api, batch_body(("b", b"abc"), checksum="XYZ")), 400)
    assert staged_paths(api) == ["a"]


BAD_BODIES: dict[str, bytes] = {
    "empty body": b"",
    "not JSON": b"objects\nxyz",
    "manifest not an object": b"[1, 2]\n",
    "objects missing": b"{}\n",
    "objects not a list": b'{"objects": {"path": "a"}}\n',
    "an object not an object": b'{"objects": ["a"]}\n',
    "no objects": b'{"objects": []}\n',
    "path missing": b'{"objects": [{"size_bytes": 1}]}\nx',
    "size missing": b'{"objects": [{"path": "a"}]}\nx',
    "size negative": b'{"objects": [{"path": "a", "size_bytes": -1}]}\n',
    "size a string": b'{"objects": [{"path": "a", "size_bytes": "1"}]}\nx',
    "size a boolean": b'{"objects": [{"path": "a", "size_bytes": true}]}\nx',
    "size a float": b'{"objects": [{"path": "a", "size_bytes": 1.0}]}\nx',
    "size huge": b'{"objects": [{"path": "a", "size_bytes": 99999999999999999999999}]}\nx',
    "fewer bytes than sizes": b'{"objects": [{"path": "a", "size_bytes": 3}]}\nab',
    "more bytes than sizes": b'{"objects": [{"path": "a", "size_bytes": 1}]}\nab',
    "duplicate path": b'{"objects": [{"path": "a", "size_bytes": 1}, {"path": "a", "size_bytes": 1}]}\nxy',
    "empty path": b'{"objects": [{"path": "", "size_bytes": 1}]}\nx',
    "NUL in path": b'{"objects": [{"path": "a\\u0000b", "size_bytes": 1}]}\nx',
    "path of 10,000 characters": json.dumps({"objects": [{"path": "p" * 10_000, "size_bytes": 1}]}).encode() + b"\nx",
    "CR LF in metadata value": (
        b'{"objects": [{"path": "a", "size_bytes": 1, "user_metadata": {"k": "v\\r\\nX: y"}}]}\nx'
    ),
    "binary garbage": bytes(range(256)) * 20,
    "lone surrogate": b'{"objects": [{"path": "a\\ud800", "size_bytes": 1}]}\nx',
    "CR LF in content type": b'{"objects": [{"path": "a", "size_bytes": 1, "content_type": "a\\r\\nX: y"}]}\nx',
    "bad metadata name": b'{"objects": [{"path": "a", "size_bytes": 1, "user_metadata": {"a b": "v"}}]}\nx',
    "metadata not strings": b'{"objects": [{"path": "a", "size_bytes": 1, "user_metadata": {"a": 1}}]}\nx',
    "metadata over 2 KiB": json.dumps(
        {"objects": [{"path": "a", "size_bytes": 1, "user_metadata": {"k": "v" * 2100}}]}
    ).encode()
    + b"\nx",
    "deep nesting": b"[" * 100_000 + b"]" * 100_000 + b"\n",
    "NaN size": b'{"objects": [{"path": "a", "size_bytes": NaN}]}\nx',
    "manifest line too long": b'{"objects": [' + b" " * (MAX_MANIFEST_BYTES + 1) + b"]}\n",
    "too many objects": json.dumps(
        {"objects": [{"path": f"p{i}", "size_bytes": 0} for i in range(MAX_BATCH_OBJECTS + 1)]}
    ).encode()
    + b"\n",
    "too much data": batch_body(("big", b"x" * (MAX_BATCH_BYTES + 1))),
}


@pytest.mark.parametrize("name", sorted(BAD_BODIES))
def test_a_bad_batch_is_400_and_stages_nothing(api: Api, repo: str, services: wiring.Services, name: str) -> None:
    blobs_before = len(services.engine.ports.blocks.blobs)  # type: ignore[attr-defined]
    assert_error(send(api, BAD_BODIES[name]), 400)
    assert staged_paths(api) == []
    assert len(services.engine.ports.blocks.blobs) == blobs_before  # type: ignore[attr-defined]


def test_conditional_batches_are_refused(api: Api, repo: str) -> None:
    assert "one by one" in assert_error(send(api, batch_body(("a", b"1")), **{"if-none-match": "*"}), 400)
    assert_error(send(api, batch_body(("a", b"1")), **{"if-match": '"abc"'}), 400)
    assert staged_paths(api) == []


def test_missing_repository_branch_and_read_only_repository(api: Api, repo: str) -> None:
    body = batch_body(("a", b"1"))
    assert_error(api.post("/repositories/nope/branches/main/objects/batch", body=body), 404)
    assert_error(send(api, body, branch="nope"), 404)
    assert_error(send(api, body, branch="bad..name"), 400)
    api.create_repo("frozen", read_only=True)
    assert_error(api.post("/repositories/frozen/branches/main/objects/batch", body=body), 403)


@pytest.fixture
def writer_on(api: Api, client: Client) -> Callable[[str], Api]:
    """A client for a user who may write objects only under the given prefix of repo1 (and read everything)."""

    def make(prefix: str) -> Api:
        policy = {
            "id": "write-prefix",
            "statement": [
                {
                    "effect": "allow",
                    "action": ["fs:WriteObject"],
                    "resource": f"arn:lakefs:fs:::repository/repo1/object/{prefix}*",
                },
                {"effect": "allow", "action": ["fs:Read*", "fs:List*"], "resource": "*"},
            ],
        }
        assert api.post("/auth/policies", json_body=policy).status_code == 201
        assert api.post("/auth/users", json_body={"id": "writer"}).status_code == 201
        assert api.request("PUT", "/auth/users/writer/policies/write-prefix").status_code == 201
        pair = body_of(api.post("/auth/users/writer/credentials"))
        return Api(client, (pair["access_key_id"], pair["secret_access_key"]))

    return make


def test_every_path_needs_write_permission(api: Api, repo: str, writer_on: Callable[[str], Api]) -> None:
    writer = writer_on("mine/")
    assert send(writer, batch_body(("mine/a", b"1"), ("mine/b", b"2"))).status_code == 201
    # One path outside the prefix refuses the whole batch: nothing of it is staged.
    assert_error(send(writer, batch_body(("mine/c", b"3"), ("theirs/d", b"4"))), 403)
    assert staged_paths(api) == ["mine/a", "mine/b"]
    # Unauthenticated: 401 before the body is looked at.
    assert_error(Api(writer.client, None).post(BATCH.format(branch="main"), body=batch_body(("mine/e", b"5"))), 401)


def test_config_names_the_feature(api: Api) -> None:
    assert "upload_batch" in body_of(api.get("/config"))["version_config"]["lakelet_features"]
