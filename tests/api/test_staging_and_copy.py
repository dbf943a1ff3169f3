"""Presigned uploads (GET|PUT .../staging/backing with signed addresses), shallow copies, conditional writes."""

from __future__ import annotations

import hashlib
import time
from typing import Any

import lakefs_sdk
import pytest

from chalicelib import wiring
from chalicelib.auth.addresses import MAX_AGE_SECONDS

from .support import NAMESPACE, Api, assert_error, body_of, conforms

BACKING = "/repositories/{repo}/branches/{branch}/staging/backing"


def location(api: Api, path: str, repo: str = "repo1", branch: str = "main", presign: bool = True) -> dict[str, Any]:
    response = api.get(BACKING.format(repo=repo, branch=branch), query={"path": path, "presign": str(presign)})
    assert response.status_code == 200, response.body
    conforms(lakefs_sdk.StagingLocation, body_of(response))
    return body_of(response)


def link(api: Api, path: str, staging: dict[str, Any], size: int, repo: str = "repo1", branch: str = "main", **kw: Any):  # type: ignore[no-untyped-def]
    # The checksum of what was uploaded there (link checks it against the upload), or any when nothing was.
    blocks = wiring.get_services().engine.ports.blocks
    address = str(staging.get("physical_address", ""))
    checksum = hashlib.md5(blocks.get(address)).hexdigest() if blocks.exists(address) else "abc123"
    body = {"staging": staging, "checksum": checksum, "size_bytes": size, **kw.pop("body", {})}
    return api.request("PUT", BACKING.format(repo=repo, branch=branch), query={"path": path}, json_body=body, **kw)


def upload_to(services: wiring.Services, staging: dict[str, Any], data: bytes) -> None:
    """What the client does with the presigned URL: put the bytes at the physical address."""
    services.engine.ports.blocks.put(staging["physical_address"], data)


def test_presigned_upload_round_trip(api: Api, repo: str, services: wiring.Services) -> None:
    before = int(time.time())
    staging = location(api, "data/x.bin")
    assert staging["physical_address"].startswith(f"{NAMESPACE}/repo1/data/")
    assert staging["presigned_url"].startswith("https://")
    assert before + 900 <= staging["presigned_url_expiry"] <= int(time.time()) + 900
    upload_to(services, staging, b"payload")
    response = link(api, "data/x.bin", staging, 7, body={"content_type": "text/plain", "user_metadata": {"k": "v"}})
    assert response.status_code == 200, response.body
    stats = conforms(lakefs_sdk.ObjectStats, body_of(response))
    # Linked from a copy no presigned URL writes (graveler/writes/linking.py); the upload itself is gone.
    assert stats.physical_address.startswith(f"{NAMESPACE}/repo1/data/")
    assert stats.physical_address != staging["physical_address"]
    assert not services.engine.ports.blocks.exists(staging["physical_address"])
    assert (stats.size_bytes, stats.checksum) == (7, hashlib.md5(b"payload").hexdigest())
    assert stats.content_type == "text/plain" and stats.metadata == {"k": "v"}
    read = api.get("/repositories/repo1/refs/main/objects", query={"path": "data/x.bin"})
    assert read.body == b"payload" and read.headers["Content-Type"] == "text/plain"
    api.commit("repo1", "main")
    assert api.get("/repositories/repo1/refs/main/objects", query={"path": "data/x.bin"}).body == b"payload"


def write_once_location(api: Api, path: str) -> dict[str, Any]:
    query = {"path": path, "presign": "true", "write_once": "true"}
    response = api.get(BACKING.format(repo="repo1", branch="main"), query=query)
    assert response.status_code == 200, response.body
    return body_of(response)


def test_a_write_once_upload_is_linked_where_it_is(api: Api, repo: str, services: wiring.Services) -> None:
    staging = write_once_location(api, "big.bin")
    assert (
        staging["physical_address"].startswith(f"{NAMESPACE}/repo1/data/") and ".once." in staging["physical_address"]
    )
    assert "if-none-match" in staging["presigned_url"]  # the URL is signed for the condition
    upload_to(services, staging, b"payload")
    blobs = len(services.engine.ports.blocks.blobs)  # type: ignore[attr-defined]
    response = link(api, "big.bin", staging, 7)
    assert response.status_code == 200, response.body
    stats = conforms(lakefs_sdk.ObjectStats, body_of(response))
    # No copy and no delete: the entry points at the upload, which no URL can rewrite.
    assert stats.physical_address == staging["physical_address"]
    assert len(services.engine.ports.blocks.blobs) == blobs  # type: ignore[attr-defined]
    assert api.get("/repositories/repo1/refs/main/objects", query={"path": "big.bin"}).body == b"payload"
    # The claim is checked as for a copied upload, and a missing upload is refused.
    mismatch = write_once_location(api, "c.bin")
    upload_to(services, mismatch, b"abc")
    body = {"staging": mismatch, "checksum": hashlib.md5(b"abd").hexdigest(), "size_bytes": 3}
    assert_error(
        api.request("PUT", BACKING.format(repo="repo1", branch="main"), query={"path": "c.bin"}, json_body=body), 400
    )
    assert "uploaded" in assert_error(link(api, "d.bin", write_once_location(api, "d.bin"), 1), 400)
    assert [o["path"] for o in body_of(api.get("/repositories/repo1/refs/main/objects/ls"))["results"]] == ["big.bin"]


def test_write_once_needs_presign_and_cannot_be_claimed_for_another_address(
    api: Api, repo: str, services: wiring.Services
) -> None:
    query = {"path": "a", "presign": "false", "write_once": "true"}
    assert "presign" in assert_error(api.get(BACKING.format(repo="repo1", branch="main"), query=query), 400)
    assert_error(
        api.get(
            BACKING.format(repo="repo1", branch="main"), query={"path": "a", "presign": "true", "write_once": "sure"}
        ),
        400,
    )
    # An ordinary address marked write-once afterwards (to skip the copy) no longer verifies, nor the reverse.
    plain = location(api, "a")
    address, issued, mac = plain["physical_address"].rsplit(".", 2)
    upload_to(services, plain, b"x")
    forged = {"physical_address": f"{address}.{issued}.once.{mac}"}
    services.engine.ports.blocks.put(forged["physical_address"], b"x")
    assert "issued" in assert_error(link(api, "a", forged, 1), 400)
    once = write_once_location(api, "b")
    upload_to(services, once, b"y")
    stripped = {"physical_address": once["physical_address"].replace(".once.", ".")}
    services.engine.ports.blocks.put(stripped["physical_address"], b"y")
    assert "issued" in assert_error(link(api, "b", stripped, 1), 400)
    assert link(api, "a", plain, 1).status_code == 200 and link(api, "b", once, 1).status_code == 200


def test_without_presign_only_the_address(api: Api, repo: str) -> None:
    staging = location(api, "a", presign=False)
    assert staging["presigned_url"] is None and "presigned_url_expiry" not in staging


def test_expiry_follows_the_settings(api: Api, repo: str, services: wiring.Services) -> None:
    services.settings = wiring.Settings(bucket="test-bucket", presign_expiry_seconds=60)
    staging = location(api, "a")
    assert staging["presigned_url_expiry"] <= int(time.time()) + 60
    assert "expires=60" in staging["presigned_url"]


def test_forged_foreign_and_stale_addresses_are_400(api: Api, repo: str, services: wiring.Services) -> None:
    api.create_repo("repo2")
    api.post("/repositories/repo1/branches", json_body={"name": "dev", "source": "main"})
    staging = location(api, "a.txt")
    upload_to(services, staging, b"x")
    unsigned = services.engine.objects.new_physical_address("repo1")
    services.engine.ports.blocks.put(unsigned, b"x")
    cases = {
        "made up": {"physical_address": unsigned},
        # One character changed (to another one: a last "0" stays "0" otherwise, one run in sixteen).
        "tampered": {
            "physical_address": staging["physical_address"][:-1]
            + ("1" if staging["physical_address"].endswith("0") else "0")
        },
        "other object": {"physical_address": f"{NAMESPACE}/repo1/data/other"},
    }
    for name, forged in cases.items():
        assert "issued" in assert_error(link(api, "a.txt", forged, 1), 400), name
    assert_error(link(api, "b.txt", staging, 1), 400)  # another path
    assert_error(link(api, "a.txt", staging, 1, branch="dev"), 400)  # another branch
    assert_error(link(api, "a.txt", staging, 1, repo="repo2"), 400)  # another repository
    signer = services.auth.address_signer()
    real_clock = signer._clock
    signer._clock = lambda: real_clock() - MAX_AGE_SECONDS - 60  # issued 24 h and a minute ago
    stale = location(api, "old.txt")
    signer._clock = real_clock
    upload_to(services, stale, b"x")
    assert "stale" in assert_error(link(api, "old.txt", stale, 1), 400)
    # Nothing was linked by any of them.
    assert body_of(api.get("/repositories/repo1/refs/main/objects/ls"))["results"] == []
    # The genuine one still links.
    assert link(api, "a.txt", staging, 1).status_code == 200


def test_linking_needs_the_upload_and_a_well_formed_body(api: Api, repo: str, services: wiring.Services) -> None:
    staging = location(api, "a")
    assert "uploaded" in assert_error(link(api, "a", staging, 1), 400)
    upload_to(services, staging, b"x")
    assert_error(link(api, "a", staging, -1), 400)
    assert_error(
        api.request("PUT", BACKING.format(repo="repo1", branch="main"), query={"path": "a"}, json_body={}), 400
    )
    assert_error(link(api, "a", staging, 1, headers={"if-match": '"abc"'}), 400)
    assert_error(api.get(BACKING.format(repo="repo1", branch="main")), 400)  # no path
    assert_error(api.get(BACKING.format(repo="repo1", branch="nope"), query={"path": "a"}), 404)
    assert_error(api.get(BACKING.format(repo="nope", branch="main"), query={"path": "a"}), 404)


def test_if_none_match_on_link_and_upload_is_412(api: Api, repo: str, services: wiring.Services) -> None:
    api.upload("repo1", "main", "taken", b"first")
    staging = location(api, "taken")
    upload_to(services, staging, b"second")
    assert_error(link(api, "taken", staging, 6, headers={"if-none-match": "*"}), 412)
    response = api.post(
        "/repositories/repo1/branches/main/objects",
        query={"path": "taken"},
        body=b"third",
        headers={"content-type": "text/plain", "if-none-match": "*"},
    )
    assert_error(response, 412)
    assert api.get("/repositories/repo1/refs/main/objects", query={"path": "taken"}).body == b"first"
    assert link(api, "free", staging, 6, headers={"if-none-match": "*"}).status_code == 400  # signed for "taken"
    assert link(api, "taken", staging, 6).status_code == 200  # unconditional: replaces


def test_copy_is_shallow(api: Api, repo: str) -> None:
    source = api.upload("repo1", "main", "src.txt", b"data", **{"x-lakefs-meta-k": "v"})
    api.commit("repo1", "main")
    api.post("/repositories/repo1/branches", json_body={"name": "dev", "source": "main"})
    response = api.post(
        "/repositories/repo1/branches/dev/objects/copy",
        query={"dest_path": "dst.txt"},
        json_body={"src_path": "src.txt", "src_ref": "main"},
    )
    assert response.status_code == 201, response.body
    copied = conforms(lakefs_sdk.ObjectStats, body_of(response))
    assert copied.path == "dst.txt" and copied.physical_address == source["physical_address"]
    assert (copied.checksum, copied.size_bytes, copied.metadata) == (source["checksum"], 4, {"k": "v"})
    assert api.get("/repositories/repo1/refs/dev/objects", query={"path": "dst.txt"}).body == b"data"
    # src_ref defaults to the destination branch.
    same_branch = api.post(
        "/repositories/repo1/branches/main/objects/copy",
        query={"dest_path": "again.txt"},
        json_body={"src_path": "src.txt"},
    )
    assert same_branch.status_code == 201


@pytest.mark.parametrize(
    ("query", "body", "headers", "status"),
    [
        ({"dest_path": "d"}, {"src_path": "missing"}, {}, 404),
        ({}, {"src_path": "src.txt"}, {}, 400),
        ({"dest_path": "d"}, {}, {}, 400),
        ({"dest_path": "d"}, {"src_path": "src.txt", "src_ref": "nope"}, {}, 404),
        ({"dest_path": "d"}, {"src_path": "src.txt", "shallow": "yes"}, {}, 400),
        ({"dest_path": "src.txt"}, {"src_path": "src.txt"}, {"if-none-match": "*"}, 412),
    ],
)
def test_copy_errors(
    api: Api, repo: str, query: dict[str, str], body: dict[str, Any], headers: dict[str, str], status: int
) -> None:
    api.upload("repo1", "main", "src.txt", b"data")
    response = api.post("/repositories/repo1/branches/main/objects/copy", query=query, json_body=body, headers=headers)
    assert_error(response, status)


def test_an_address_per_file_reads_the_branch_once_and_a_deleted_branch_is_refused(
    api: Api, repo: str, services: wiring.Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A client uploading many files asks for an address per file: the branch is read for the first only. A
    branch deleted here is refused at once; one deleted elsewhere (within the short memory) at the link."""
    assert api.post("/repositories/repo1/branches", json_body={"name": "dev", "source": "main"}).status_code == 201
    refs = services.engine.ports.refs
    reads: list[str] = []
    get_branch = refs.get_branch

    def counted(repo_id: str, branch_id: str) -> Any:
        reads.append(branch_id)
        return get_branch(repo_id, branch_id)

    monkeypatch.setattr(refs, "get_branch", counted)
    for n in range(3):
        location(api, f"many/{n}", branch="dev")
    assert reads == ["dev"]

    assert api.delete("/repositories/repo1/branches/dev").status_code == 204
    assert_error(api.get(BACKING.format(repo="repo1", branch="dev"), query={"path": "a"}), 404)

    # Deleted behind this container's back: the address is still handed out, the link reads the branch.
    assert api.post("/repositories/repo1/branches", json_body={"name": "dev", "source": "main"}).status_code == 201
    staging = location(api, "late", branch="dev")
    refs.delete_branch("repo1", "dev")
    upload_to(services, staging, b"late")
    assert_error(link(api, "late", staging, 4, branch="dev"), 404)
