"""Presigned multipart uploads (api/presigned_multipart.py) on the in-memory store: the parts are stored the way
a client's PUTs to the presigned URLs would store them (tests/e2e/test_presigned_multipart.py sends them to S3)."""

from __future__ import annotations

from typing import Any

import lakefs_sdk
import pytest

from chalicelib import wiring

from .support import Api, assert_error, body_of, conforms

MIB = 1024 * 1024
PMPU = "/repositories/repo1/branches/main/staging/pmpu"


def start(api: Api, path: str = "big.bin", parts: int = 2) -> dict[str, Any]:
    response = api.post(PMPU, query={"path": path, "parts": parts})
    assert response.status_code == 201, response.body
    return conforms(lakefs_sdk.PresignMultipartUpload, body_of(response)).to_dict()  # type: ignore[no-any-return]


def put_parts(services: wiring.Services, started: dict[str, Any], chunks: list[bytes]) -> list[dict[str, Any]]:
    blocks = services.engine.ports.blocks
    return [
        {
            "part_number": n,
            "etag": f'"{blocks.upload_part(started["physical_address"], started["upload_id"], n, c).etag}"',
        }
        for n, c in enumerate(chunks, 1)
    ]


def test_upload_in_parts_and_read_back(api: Api, repo: str, services: wiring.Services) -> None:
    assert body_of(api.get("/config"))["storage_config"]["pre_sign_multipart_upload"] is True
    started = start(api)
    assert len(started["presigned_urls"]) == 2 and "partNumber=2" in started["presigned_urls"][1]
    chunks = [b"a" * (5 * MIB), b"tail"]
    parts = put_parts(services, started, chunks)
    body = {
        "physical_address": started["physical_address"],
        "parts": parts,
        "content_type": "application/x-big",
        "user_metadata": {"k": "v"},
    }
    response = api.request("PUT", f"{PMPU}/{started['upload_id']}", query={"path": "big.bin"}, json_body=body)
    assert response.status_code == 200, response.body
    stats = conforms(lakefs_sdk.ObjectStats, body_of(response))
    assert (
        stats.size_bytes == 5 * MIB + 4 and stats.checksum.endswith("-2") and stats.content_type == "application/x-big"
    )
    data = api.get("/repositories/repo1/refs/main/objects", query={"path": "big.bin"}, headers={"range": "bytes=-4"})
    assert data.body == b"tail"
    assert body_of(api.get("/repositories/repo1/refs/main/objects/stat", query={"path": "big.bin"}))["metadata"] == {
        "k": "v"
    }


def test_one_more_part_url(api: Api, repo: str) -> None:
    started = start(api, parts=0)
    assert "presigned_urls" not in started
    url = f"{PMPU}/{started['upload_id']}/parts/3"
    body = {"physical_address": started["physical_address"]}
    answer = api.request("PUT", url, query={"path": "big.bin"}, json_body=body)
    assert "partNumber=3" in conforms(lakefs_sdk.UploadTo, body_of(answer)).presigned_url
    assert_error(
        api.request("PUT", f"{PMPU}/{started['upload_id']}/parts/0", query={"path": "big.bin"}, json_body=body), 400
    )


def test_the_address_binds_path_and_branch(api: Api, repo: str, services: wiring.Services) -> None:
    started = start(api)
    parts = put_parts(services, started, [b"x" * (5 * MIB), b"y"])
    body = {"physical_address": started["physical_address"], "parts": parts}
    url = f"{PMPU}/{started['upload_id']}"
    assert_error(api.request("PUT", url, query={"path": "elsewhere.bin"}, json_body=body), 400)
    forged = {**body, "physical_address": started["physical_address"] + "x"}
    assert_error(api.request("PUT", url, query={"path": "big.bin"}, json_body=forged), 400)
    assert_error(api.get("/repositories/repo1/refs/main/objects/stat", query={"path": "elsewhere.bin"}), 404)


@pytest.mark.parametrize(
    "parts",
    [
        [],
        [{"part_number": 1}],
        [{"part_number": 1, "etag": "nope"}, {"part_number": 2, "etag": "nope"}],
        "all",
    ],
)
def test_bad_part_lists_stage_nothing(api: Api, repo: str, services: wiring.Services, parts: Any) -> None:
    started = start(api)
    put_parts(services, started, [b"x" * (5 * MIB), b"y"])
    body = {"physical_address": started["physical_address"], "parts": parts}
    assert_error(api.request("PUT", f"{PMPU}/{started['upload_id']}", query={"path": "big.bin"}, json_body=body), 400)
    assert_error(api.get("/repositories/repo1/refs/main/objects/stat", query={"path": "big.bin"}), 404)


def test_a_small_first_part_is_refused(api: Api, repo: str, services: wiring.Services) -> None:
    started = start(api)
    parts = put_parts(services, started, [b"small", b"tail"])
    body = {"physical_address": started["physical_address"], "parts": parts}
    assert_error(api.request("PUT", f"{PMPU}/{started['upload_id']}", query={"path": "big.bin"}, json_body=body), 400)


def test_abort_then_complete_is_404(api: Api, repo: str, services: wiring.Services) -> None:
    started = start(api)
    parts = put_parts(services, started, [b"only part"])
    body = {"physical_address": started["physical_address"]}
    url = f"{PMPU}/{started['upload_id']}"
    assert api.request("DELETE", url, query={"path": "big.bin"}, json_body=body).status_code == 204
    done = api.request("PUT", url, query={"path": "big.bin"}, json_body={**body, "parts": parts})
    assert_error(done, 404)


def test_parts_count_and_branch_are_checked(api: Api, repo: str) -> None:
    assert_error(api.post(PMPU, query={"path": "a", "parts": 10_001}), 400)
    assert_error(api.post(PMPU, query={"path": "a", "parts": -1}), 400)
    assert_error(api.post(PMPU), 400)
    assert_error(api.post("/repositories/repo1/branches/nope/staging/pmpu", query={"path": "a"}), 404)
    api.create_repo("frozen", read_only=True)
    assert_error(api.post("/repositories/frozen/branches/main/staging/pmpu", query={"path": "a"}), 403)


def test_parts_copied_from_objects(api: Api, repo: str, services: wiring.Services) -> None:
    """uploadPartCopy: a part copied inside the store from a committed object, whole or a byte range of it."""
    big = b"0123456789" * (MIB // 2)  # 5 MiB
    api.upload(repo, "main", "src.bin", big)
    api.commit(repo, "main")
    started = start(api, "copied.bin", parts=0)
    physical = started["physical_address"]

    def copy(number: int, **source: Any) -> Any:
        body = {
            "physical_address": physical,
            "copy_source": {"repository": repo, "ref": "main", "path": "src.bin", **source},
        }
        return api.request(
            "PUT", f"{PMPU}/{started['upload_id']}/parts/{number}/copy", query={"path": "copied.bin"}, json_body=body
        )

    first = copy(1)
    assert first.status_code == 204 and first.headers["ETag"].startswith('"')
    second = copy(2, range="bytes=0-9")
    assert second.status_code == 204
    assert_error(copy(3, range="bytes=9-0"), 400)
    assert_error(copy(3, range=f"bytes=0-{len(big)}"), 400)
    assert_error(copy(3, path="nope.bin"), 404)
    parts = [{"part_number": 1, "etag": first.headers["ETag"]}, {"part_number": 2, "etag": second.headers["ETag"]}]
    done = api.request(
        "PUT",
        f"{PMPU}/{started['upload_id']}",
        query={"path": "copied.bin"},
        json_body={"physical_address": physical, "parts": parts},
    )
    assert done.status_code == 200, done.body
    data = api.get(
        "/repositories/repo1/refs/main/objects", query={"path": "copied.bin"}, headers={"range": "bytes=-20"}
    )
    assert data.body == big[-10:] + b"0123456789"
