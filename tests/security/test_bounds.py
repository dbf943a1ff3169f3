"""Guarantee 4: nothing stored can wedge a branch or break reads.

Every field a write stores is bounded at the edge (chalicelib/graveler/writes/object_fields.py): size 0..5 TiB, mtime a
calendar date in 1970..9999, user metadata at most 2 KiB and valid UTF-8. Seen before: a linked size of 2^63, an
mtime of 10^20 or a lone-surrogate metadata name made every later commit of the branch 500; an mtime of 10^12
committed fine and then every GET and HEAD of the object answered 500.
"""

from __future__ import annotations

import json

import pytest
from botocore.exceptions import ClientError

from chalicelib import wiring
from tests.api.support import Api, assert_error

from .write_support import (
    BACKING,
    REPO,
    Gateway,
    api,
    credentials,
    link,
    presigned_upload,
    repo,
    s3,
    services,
    staging_location,
)

__all__ = ["api", "credentials", "repo", "s3", "services"]  # fixtures


def still_commits(api: Api, services: wiring.Services) -> None:
    """The branch is not wedged: a good write commits, and every object reads back."""
    assert presigned_upload(api, services, "good.txt", b"good").status_code == 200
    api.commit(REPO, "main")
    listing = json.loads(api.get(f"/repositories/{REPO}/refs/main/objects/ls").body)["results"]
    for item in listing:
        for method in ("GET", "HEAD"):
            response = api.request(method, f"/repositories/{REPO}/refs/main/objects", query={"path": item["path"]})
            assert response.status_code == 200, (item["path"], response.status_code)


@pytest.mark.parametrize(
    "fields",
    [
        {"size_bytes": 2**63},
        {"size_bytes": 2**64 + 5},
        {"size_bytes": 5 * 1024**4 + 1},
        {"mtime": 10**20},
        {"mtime": 10**12},
        {"mtime": -1},
        {"user_metadata": {"\ud800": "x"}},
        {"user_metadata": {"k": "\udfff"}},
        {"user_metadata": {"k": "v" * 2048}},
    ],
    ids=[
        "size-2^63",
        "size-2^64",
        "size-over-5TiB",
        "mtime-1e20",
        "mtime-1e12",
        "mtime-negative",
        "surrogate-name",
        "surrogate-value",
        "metadata-over-2KiB",
    ],
)
def test_link_refuses_out_of_bounds_fields_and_the_branch_still_commits(
    api: Api, repo: str, services: wiring.Services, fields: dict[str, object]
) -> None:
    data = b"seventeen bytes!!"
    address = staging_location(api, "bad.bin")["physical_address"]
    services.engine.ports.blocks.put(address, data)
    assert_error(link(api, "bad.bin", address, data, **fields), 400)
    assert_error(api.get(f"/repositories/{REPO}/refs/main/objects/stat", query={"path": "bad.bin"}), 404)
    still_commits(api, services)


def test_a_lone_surrogate_sent_as_a_json_escape_is_refused(api: Api, repo: str, services: wiring.Services) -> None:
    data = b"x"
    address = staging_location(api, "s.bin")["physical_address"]
    services.engine.ports.blocks.put(address, data)
    # json.dumps writes the lone surrogate as the escape \ud800 (ensure_ascii), as a client's encoder would.
    raw = json.dumps(
        {
            "staging": {"physical_address": address},
            "checksum": "9dd4e461268c8034f5c8564e155c67a6",
            "size_bytes": 1,
            "user_metadata": {"\ud800key": "v"},
        }
    )
    assert "\\ud800key" in raw
    response = api.request(
        "PUT",
        BACKING.format(repo=REPO, branch="main"),
        query={"path": "s.bin"},
        body=raw.encode(),
        headers={"content-type": "application/json"},
    )
    assert_error(response, 400)
    still_commits(api, services)


def test_the_edges_of_the_bounds_are_accepted(api: Api, repo: str, services: wiring.Services) -> None:
    metadata = {"k": "v" * (2048 - 1)}  # name + value = exactly 2 KiB
    assert (
        presigned_upload(api, services, "edge.bin", b"e", mtime=253_402_300_799, user_metadata=metadata).status_code
        == 200
    )
    assert presigned_upload(api, services, "epoch.bin", b"e", mtime=0).status_code == 200
    api.commit(REPO, "main")
    read = api.get(f"/repositories/{REPO}/refs/main/objects", query={"path": "edge.bin"})
    assert read.status_code == 200 and read.headers["Last-Modified"] == "Fri, 31 Dec 9999 23:59:59 GMT"


def test_api_upload_metadata_over_2_kib_is_400(api: Api, repo: str) -> None:
    response = api.post(
        f"/repositories/{REPO}/branches/main/objects",
        query={"path": "m.bin"},
        body=b"x",
        headers={"content-type": "application/octet-stream", "x-lakefs-meta-big": "v" * 2100},
    )
    assert_error(response, 400)


def test_gateway_metadata_over_2_kib_is_metadata_too_large(api: Api, repo: str, s3: Gateway) -> None:
    client = s3.client()
    with pytest.raises(ClientError) as refused:
        client.put_object(Bucket=REPO, Key="main/m.bin", Body=b"x", Metadata={"big": "v" * 2100})
    assert refused.value.response["Error"]["Code"] == "MetadataTooLarge"
    assert refused.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400
    with pytest.raises(ClientError) as refused:
        client.create_multipart_upload(Bucket=REPO, Key="main/m.bin", Metadata={"a": "v" * 1100, "b": "w" * 1000})
    assert refused.value.response["Error"]["Code"] == "MetadataTooLarge"
    client.put_object(Bucket=REPO, Key="main/ok.bin", Body=b"x", Metadata={"a": "v" * 1000})
    assert client.head_object(Bucket=REPO, Key="main/ok.bin")["Metadata"] == {"a": "v" * 1000}


def test_lakectls_reserved_metadata_is_kept_and_never_a_header(api: Api, repo: str, services: wiring.Services) -> None:
    """lakectl's upload links with user_metadata {"::lakefs::client-mtime": ...} (lakeFS's reserved prefix): kept,
    returned by stat, and left out of the GET's headers (no header can name it). Other names stay header tokens."""
    metadata = {"::lakefs::client-mtime": "1700000000", "owner": "me"}
    assert presigned_upload(api, services, "mtime.bin", b"m", user_metadata=metadata).status_code == 200
    stat = json.loads(api.get(f"/repositories/{REPO}/refs/main/objects/stat", query={"path": "mtime.bin"}).body)
    assert stat["metadata"] == metadata
    read = api.get(f"/repositories/{REPO}/refs/main/objects", query={"path": "mtime.bin"})
    assert read.status_code == 200 and read.headers["x-lakefs-meta-owner"] == "me"
    assert not any("::" in name for name in read.headers)
    data = b"x"
    for bad in ("::lakefs::", "::lakefs::a b", "::other::x"):
        address = staging_location(api, "bad.bin")["physical_address"]
        services.engine.ports.blocks.put(address, data)
        assert_error(link(api, "bad.bin", address, data, user_metadata={bad: "v"}), 400)
