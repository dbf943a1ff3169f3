"""Upload with If-Match (lakeFS's if_match on uploadObject): a conditional overwrite, 412 in lakeFS's error shape
when the object the branch shows has another ETag or does not exist."""

from __future__ import annotations

import hashlib

import lakefs_sdk
import pytest

from .support import Api, assert_error, body_of, conforms

UPLOAD = "/repositories/repo1/branches/main/objects"
OBJECTS = "/repositories/repo1/refs/main/objects"


def put(api: Api, path: str, data: bytes, **headers: str):  # type: ignore[no-untyped-def]
    return api.post(UPLOAD, query={"path": path}, body=data, headers=headers)


def read(api: Api, path: str) -> bytes:
    return api.get(OBJECTS, query={"path": path}).body  # type: ignore[no-any-return]


@pytest.mark.parametrize("committed", [False, True], ids=["staged", "committed"])
def test_if_match_the_current_etag_overwrites(api: Api, repo: str, committed: bool) -> None:
    first = body_of(put(api, "a", b"1"))
    if committed:
        api.commit("repo1", "main")
    response = put(api, "a", b"2", **{"if-match": f'"{first["checksum"]}"'})
    assert response.status_code == 201, response.body
    stats = conforms(lakefs_sdk.ObjectStats, body_of(response))
    assert stats.checksum == hashlib.md5(b"2").hexdigest()
    assert read(api, "a") == b"2"
    # The ETag header a read gives is a valid If-Match, as is the bare checksum (lakefs-sdk's upload_object sends
    # its if_match argument as it is, usually an ObjectStats checksum).
    etag = api.get(OBJECTS, query={"path": "a"}).headers["ETag"]
    assert put(api, "a", b"3", **{"if-match": etag}).status_code == 201
    assert put(api, "a", b"4", **{"if-match": hashlib.md5(b"3").hexdigest()}).status_code == 201
    assert read(api, "a") == b"4"


def test_if_match_another_etag_is_412(api: Api, repo: str) -> None:
    first = body_of(put(api, "a", b"1"))
    assert put(api, "a", b"2", **{"if-match": f'"{first["checksum"]}"'}).status_code == 201
    # The ETag read before the overwrite is stale now: a second writer holding it is refused.
    assert_error(put(api, "a", b"3", **{"if-match": f'"{first["checksum"]}"'}), 412)
    assert_error(put(api, "a", b"3", **{"if-match": '"0123"'}), 412)
    assert read(api, "a") == b"2"


def test_if_match_a_missing_object_is_412(api: Api, repo: str) -> None:
    assert_error(put(api, "nothing", b"1", **{"if-match": "*"}), 412)
    assert_error(put(api, "nothing", b"1", **{"if-match": f'"{hashlib.md5(b"1").hexdigest()}"'}), 412)
    assert api.get(OBJECTS, query={"path": "nothing"}).status_code == 404
    put(api, "gone", b"1")
    api.commit("repo1", "main")
    assert api.delete(UPLOAD, query={"path": "gone"}).status_code == 204
    assert_error(put(api, "gone", b"2", **{"if-match": "*"}), 412)  # deleted on the branch


def test_if_match_star_overwrites_any_existing_object(api: Api, repo: str) -> None:
    put(api, "a", b"1")
    assert put(api, "a", b"2", **{"if-match": "*"}).status_code == 201
    assert read(api, "a") == b"2"


def test_if_match_with_if_none_match_is_400(api: Api, repo: str) -> None:
    put(api, "a", b"1")
    assert_error(put(api, "a", b"2", **{"if-match": "*", "if-none-match": "*"}), 400)
    assert read(api, "a") == b"1"


def test_if_none_match_star_still_creates_only(api: Api, repo: str) -> None:
    assert put(api, "new", b"1", **{"if-none-match": "*"}).status_code == 201
    assert_error(put(api, "new", b"2", **{"if-none-match": "*"}), 412)
    assert read(api, "new") == b"1"
