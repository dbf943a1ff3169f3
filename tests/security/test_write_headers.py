"""Guarantee 2 (write side): no stored value can become a header it was not meant to be.

Content type, user metadata and checksum are validated with S3's rules at every write path (API upload, link of a
presigned upload, gateway PUT, copy and multipart create): no CR, LF or other control character, metadata names
that are HTTP tokens. A refusal is a 400 (lakeFS JSON on the API, InvalidArgument on the gateway) and stores
nothing. Seen before: a linked content_type with CR/LF made a gateway GET send ``Set-Cookie: pwned=1``.
"""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError

from chalicelib import wiring
from chalicelib.s3proxy import Response
from tests.api.support import Api, assert_error

from .write_support import (
    REPO,
    Gateway,
    api,
    credentials,
    link,
    repo,
    s3,
    services,
    staging_location,
)

__all__ = ["api", "credentials", "repo", "s3", "services"]  # fixtures

INJECTION = "text/plain\r\nSet-Cookie: pwned=1"
BAD_FIELDS = [
    {"content_type": INJECTION},
    {"content_type": "text/plain\nx"},
    {"content_type": "text/plain\x00"},
    {"user_metadata": {"k": "v\r\nSet-Cookie: pwned=1"}},
    {"user_metadata": {"k": "v\x7f"}},
    {"user_metadata": {"bad name": "v"}},
    {"user_metadata": {"a\r\nSet-Cookie: pwned": "1"}},
    {"user_metadata": {"": "v"}},
    {"user_metadata": {"caf\u00e9": "v"}},
    {"checksum": "abc\r\nSet-Cookie: pwned=1"},
    {"checksum": 'ab"c'},
]


def assert_absent(api: Api, path: str) -> None:
    assert_error(api.get(f"/repositories/{REPO}/refs/main/objects/stat", query={"path": path}), 404)


@pytest.mark.parametrize("fields", BAD_FIELDS, ids=[str(i) for i in range(len(BAD_FIELDS))])
def test_link_refuses_header_breaking_values(
    api: Api, repo: str, services: wiring.Services, s3: Gateway, fields: dict[str, object]
) -> None:
    data = b"hello"
    address = staging_location(api, "x.txt")["physical_address"]
    services.engine.ports.blocks.put(address, data)
    assert_error(link(api, "x.txt", address, data, **fields), 400)
    assert_absent(api, "x.txt")
    assert s3.raw("GET", f"/{REPO}/main/x.txt").status == 404


def test_api_upload_refuses_control_characters(api: Api, repo: str) -> None:
    path = f"/repositories/{REPO}/branches/main/objects"
    for headers in (
        {"content-type": "text/plain\x01"},
        {"x-lakefs-meta-k": "v\x00"},
        {"x-lakefs-meta-k": "v\x0bw"},
        {"x-lakefs-meta-k": "v\rw"},
    ):
        response = api.post(path, query={"path": "u.txt"}, body=b"x", headers={"content-type": "text/plain", **headers})
        assert_error(response, 400)
    assert_absent(api, "u.txt")


def assert_invalid_argument(response: Response) -> None:
    assert response.status == 400, (response.status, response.body)
    assert b"<Code>InvalidArgument</Code>" in response.body


def test_gateway_writes_refuse_control_characters(api: Api, repo: str, s3: Gateway) -> None:
    client = s3.client()
    client.put_object(Bucket=REPO, Key="main/src.txt", Body=b"source")
    for headers in ({"content-type": "text/plain\x01"}, {"x-amz-meta-k": "v\x00w"}, {"x-amz-meta-k": "v\x1bw"}):
        assert_invalid_argument(s3.raw("PUT", f"/{REPO}/main/p.txt", body=b"x", headers=headers))
        assert_invalid_argument(s3.raw("POST", f"/{REPO}/main/p.txt", query="uploads", headers=headers))
        copy = {"x-amz-copy-source": f"/{REPO}/main/src.txt", "x-amz-metadata-directive": "REPLACE", **headers}
        assert_invalid_argument(s3.raw("PUT", f"/{REPO}/main/p.txt", headers=copy))
    assert_absent(api, "p.txt")
    with pytest.raises(ClientError):
        client.head_object(Bucket=REPO, Key="main/p.txt")


def test_good_values_still_round_trip(api: Api, repo: str, services: wiring.Services, s3: Gateway) -> None:
    data = b"hello"
    address = staging_location(api, "ok.txt")["physical_address"]
    services.engine.ports.blocks.put(address, data)
    response = link(
        api,
        "ok.txt",
        address,
        data,
        content_type="text/csv; charset=utf-8",
        user_metadata={"Owner-Name": "J\u00fcrgen M\u00fcller", "x_y.z~1": "tab\there"},
    )
    assert response.status_code == 200, response.body
    got = s3.client().head_object(Bucket=REPO, Key="main/ok.txt")
    assert got["ContentType"] == "text/csv; charset=utf-8"
