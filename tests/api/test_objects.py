"""Objects: upload (raw and multipart), read (GET/HEAD, ranges, presign), stat, list and delete."""

from __future__ import annotations

import hashlib
from email.utils import parsedate_to_datetime

import lakefs_sdk
import pytest

from chalicelib import wiring

from .support import Api, assert_error, body_of, conforms, seg

OBJECTS = "/repositories/repo1/refs/{ref}/objects"
UPLOAD = "/repositories/repo1/branches/{branch}/objects"
ALL_BYTES = bytes(range(256)) * 4 + b"\r\n\n\r\x00--boundary\r\n"


def get(api: Api, path: str, ref: str = "main", **kw: object):  # type: ignore[no-untyped-def]
    query = {"path": path, **kw.pop("query", {})}  # type: ignore[dict-item]
    return api.get(OBJECTS.format(ref=seg(ref)), query=query, **kw)  # type: ignore[arg-type]


def test_raw_upload_takes_any_content_type_and_round_trips(api: Api, repo: str) -> None:
    response = api.post(
        UPLOAD.format(branch="main"),
        query={"path": "data/table.csv"},
        body=b"a,b\n1,2\n",
        headers={"content-type": "text/csv", "x-lakefs-meta-owner": "data-team", "X-Lakefs-Meta-Source": "test"},
    )
    assert response.status_code == 201, response.body
    stats = conforms(lakefs_sdk.ObjectStats, body_of(response))
    assert (stats.path, stats.path_type, stats.size_bytes) == ("data/table.csv", "object", 8)
    assert stats.checksum == hashlib.md5(b"a,b\n1,2\n").hexdigest()
    assert stats.content_type == "text/csv"
    assert stats.metadata == {"owner": "data-team", "source": "test"}
    assert stats.physical_address.startswith("s3://test-bucket/repos/repo1/data/")

    # The official client asks with Accept: application/json and gets the raw bytes with the object's type.
    read = get(api, "data/table.csv", headers={"accept": "application/json"})
    assert read.status_code == 200 and read.body == b"a,b\n1,2\n"
    assert read.headers["Content-Type"] == "text/csv"
    assert read.headers["Content-Length"] == "8"
    assert read.headers["ETag"] == f'"{stats.checksum}"'
    assert parsedate_to_datetime(read.headers["Last-Modified"]).timestamp() == stats.mtime
    assert read.headers["x-lakefs-meta-owner"] == "data-team"


@pytest.mark.parametrize(
    "content_type", ["application/octet-stream", "application/json", "image/png", "text/plain; charset=utf-8", ""]
)
def test_binary_content_round_trips_whatever_its_type(api: Api, repo: str, content_type: str) -> None:
    headers = {"content-type": content_type} if content_type else {}
    response = api.post(UPLOAD.format(branch="main"), query={"path": "blob"}, body=ALL_BYTES, headers=headers)
    assert response.status_code == 201
    assert body_of(response)["content_type"] == (content_type or "application/octet-stream")
    read = get(api, "blob")
    assert read.body == ALL_BYTES
    assert read.headers["Content-Type"] == (content_type or "application/octet-stream")


def test_multipart_upload(api: Api, repo: str) -> None:
    boundary = "----lakelet-test-boundary"
    body = (
        (
            f"--{boundary}\r\n"
            'Content-Disposition: form-data; name="other"\r\n\r\nignored\r\n'
            f"--{boundary}\r\n"
            'Content-Disposition: form-data; name="content"; filename="x.bin"\r\n'
            "Content-Type: image/png\r\n\r\n"
        ).encode()
        + ALL_BYTES
        + f"\r\n--{boundary}--\r\n".encode()
    )
    response = api.post(
        UPLOAD.format(branch="main"),
        query={"path": "x.bin"},
        body=body,
        headers={"content-type": f"multipart/form-data; boundary={boundary}"},
    )
    assert response.status_code == 201, response.body
    stats = conforms(lakefs_sdk.ObjectStats, body_of(response))
    assert stats.size_bytes == len(ALL_BYTES) and stats.content_type == "image/png"
    assert get(api, "x.bin").body == ALL_BYTES


@pytest.mark.parametrize(
    "body",
    [
        b"no boundaries at all",
        b'--B\r\nContent-Disposition: form-data; name="other"\r\n\r\nx\r\n--B--\r\n',
        b"--B\r\nbroken",
    ],
)
def test_malformed_multipart_is_400(api: Api, repo: str, body: bytes) -> None:
    for content_type in ("multipart/form-data; boundary=B", "multipart/form-data"):
        response = api.post(
            UPLOAD.format(branch="main"), query={"path": "x"}, body=body, headers={"content-type": content_type}
        )
        assert_error(response, 400)


def test_if_none_match_star(api: Api, repo: str) -> None:
    def put(path: str, data: bytes, condition: str = "*"):  # type: ignore[no-untyped-def]
        headers = {"if-none-match": condition}
        return api.post(UPLOAD.format(branch="main"), query={"path": path}, body=data, headers=headers)

    assert put("a", b"1").status_code == 201
    assert_error(put("a", b"2"), 412)  # staged
    api.commit("repo1", "main")
    assert_error(put("a", b"2"), 412)  # committed
    assert get(api, "a").body == b"1"
    assert_error(put("b", b"2", '"etag"'), 400)


def test_upload_errors(api: Api, repo: str) -> None:
    assert_error(api.post(UPLOAD.format(branch="main"), body=b"x"), 400)  # no path
    assert_error(api.post(UPLOAD.format(branch="main"), query={"path": ""}, body=b"x"), 400)
    assert_error(api.post(UPLOAD.format(branch="nope"), query={"path": "a"}, body=b"x"), 404)
    assert_error(api.post(UPLOAD.format(branch=seg("bad name")), query={"path": "a"}, body=b"x"), 400)
    assert_error(api.post("/repositories/nope/branches/main/objects", query={"path": "a"}, body=b"x"), 404)
    api.create_repo("frozen", read_only=True)
    assert_error(api.post("/repositories/frozen/branches/main/objects", query={"path": "a"}, body=b"x"), 403)


def test_empty_upload(api: Api, repo: str) -> None:
    stats = api.upload("repo1", "main", "empty", b"")
    assert stats["size_bytes"] == 0
    read = get(api, "empty")
    assert read.status_code == 200 and read.body == b"" and read.headers["Content-Length"] == "0"
    unsatisfiable = get(api, "empty", headers={"range": "bytes=0-"})
    assert_error(unsatisfiable, 416)
    assert unsatisfiable.headers["Content-Range"] == "bytes */0"


@pytest.mark.parametrize(
    ("header", "expected", "content_range"),
    [
        ("bytes=0-4", b"01234", "bytes 0-4/10"),
        ("bytes=3-", b"3456789", "bytes 3-9/10"),
        ("bytes=-3", b"789", "bytes 7-9/10"),
        ("bytes=-30", b"0123456789", "bytes 0-9/10"),
        ("bytes=8-100", b"89", "bytes 8-9/10"),
        ("bytes=9-9", b"9", "bytes 9-9/10"),
    ],
)
def test_ranges(api: Api, repo: str, header: str, expected: bytes, content_range: str) -> None:
    api.upload("repo1", "main", "digits", b"0123456789")
    read = get(api, "digits", headers={"range": header})
    assert read.status_code == 206 and read.body == expected
    assert read.headers["Content-Range"] == content_range
    assert read.headers["Content-Length"] == str(len(expected))


@pytest.mark.parametrize(
    ("header", "status"),
    [
        ("bytes=10-", 416),
        ("bytes=10-20", 416),
        ("bytes=-0", 416),
        ("bytes=5-2", 400),
        ("bytes=0-1,4-5", 400),
        ("lines=1-2", 400),
        ("bytes=-", 400),
    ],
)
def test_bad_ranges(api: Api, repo: str, header: str, status: int) -> None:
    api.upload("repo1", "main", "digits", b"0123456789")
    response = get(api, "digits", headers={"range": header})
    assert_error(response, status)
    if status == 416:
        assert response.headers["Content-Range"] == "bytes */10"


def test_presigned_read_redirects(api: Api, repo: str) -> None:
    stats = api.upload("repo1", "main", "a.txt", b"hello")
    response = get(api, "a.txt", query={"presign": "True"})
    assert response.status_code == 302
    assert response.headers["Location"].startswith("https://")
    assert stats["physical_address"].removeprefix("s3://") in response.headers["Location"]
    assert get(api, "a.txt", query={"presign": "false"}).body == b"hello"
    assert_error(get(api, "a.txt", query={"presign": "maybe"}), 400)


def test_head(api: Api, repo: str) -> None:
    api.upload("repo1", "main", "a.txt", b"hello", **{"x-lakefs-meta-k": "v"})
    response = api.head(OBJECTS.format(ref="main"), query={"path": "a.txt"})
    assert response.status_code == 200 and response.body == b""
    assert response.headers["Content-Length"] == "5" and response.headers["x-lakefs-meta-k"] == "v"
    ranged = api.head(OBJECTS.format(ref="main"), query={"path": "a.txt"}, headers={"range": "bytes=1-2"})
    assert ranged.status_code == 206 and ranged.headers["Content-Range"] == "bytes 1-2/5"
    missing = api.head(OBJECTS.format(ref="main"), query={"path": "nope"})
    assert missing.status_code == 404 and missing.body == b""


def test_if_none_match_on_read_is_304(api: Api, repo: str) -> None:
    stats = api.upload("repo1", "main", "a.txt", b"hello")
    response = get(api, "a.txt", headers={"if-none-match": f'"{stats["checksum"]}"'})
    assert response.status_code == 304 and response.body == b""
    assert get(api, "a.txt", headers={"if-none-match": '"other"'}).status_code == 200


def test_reads_through_refs(api: Api, repo: str) -> None:
    api.upload("repo1", "main", "a.txt", b"v1")
    api.commit("repo1", "main")
    api.upload("repo1", "main", "a.txt", b"v2")
    assert get(api, "a.txt").body == b"v2"  # a branch includes staging
    assert get(api, "a.txt", ref="main@").body == b"v1"  # main@ is the committed state
    api.commit("repo1", "main")
    assert get(api, "a.txt", ref="main~1").body == b"v1"
    assert_error(get(api, "a.txt", ref="main~x"), 400)
    assert_error(get(api, "a.txt", ref="main@@"), 400)
    assert_error(get(api, "a.txt", ref="nope"), 404)
    assert_error(get(api, "missing.txt"), 404)
    assert_error(api.get(OBJECTS.format(ref="main")), 400)  # no path


def test_garbage_collected_data_is_410(api: Api, repo: str, services: wiring.Services) -> None:
    stats = api.upload("repo1", "main", "a.txt", b"hello")
    services.engine.ports.blocks.delete(stats["physical_address"])
    assert_error(get(api, "a.txt"), 410)


def test_stat(api: Api, repo: str) -> None:
    uploaded = api.upload("repo1", "main", "a.txt", b"hello", **{"x-lakefs-meta-k": "v"})
    response = api.get(OBJECTS.format(ref="main") + "/stat", query={"path": "a.txt"})
    stats = conforms(lakefs_sdk.ObjectStats, body_of(response))
    assert stats.to_dict() == uploaded
    bare = body_of(api.get(OBJECTS.format(ref="main") + "/stat", query={"path": "a.txt", "user_metadata": "False"}))
    assert "metadata" not in bare
    response = api.get(OBJECTS.format(ref="main") + "/stat", query={"path": "a.txt", "presign": "TRUE"})
    presigned = conforms(lakefs_sdk.ObjectStats, body_of(response))
    assert presigned.physical_address.startswith("https://") and presigned.physical_address_expiry
    assert_error(api.get(OBJECTS.format(ref="main") + "/stat", query={"path": "nope"}), 404)
    assert_error(api.get(OBJECTS.format(ref="main") + "/stat"), 400)
    response = api.get(OBJECTS.format(ref="main") + "/stat", query={"path": "a.txt", "user_metadata": "sometimes"})
    assert_error(response, 400)


def test_list(api: Api, repo: str) -> None:
    for path in ("a/1.txt", "a/2.txt", "b/c/3.txt", "top.txt"):
        api.upload("repo1", "main", path, path.encode(), **{"x-lakefs-meta-k": "v"})
    flat = conforms(lakefs_sdk.ObjectStatsList, body_of(api.get(OBJECTS.format(ref="main") + "/ls")))
    assert [o.path for o in flat.results] == ["a/1.txt", "a/2.txt", "b/c/3.txt", "top.txt"]
    assert all(o.path_type == "object" and o.metadata == {"k": "v"} for o in flat.results)

    grouped = conforms(
        lakefs_sdk.ObjectStatsList, body_of(api.get(OBJECTS.format(ref="main") + "/ls", query={"delimiter": "/"}))
    )
    assert [(o.path, o.path_type) for o in grouped.results] == [
        ("a/", "common_prefix"),
        ("b/", "common_prefix"),
        ("top.txt", "object"),
    ]
    under_a = body_of(api.get(OBJECTS.format(ref="main") + "/ls", query={"prefix": "a/", "delimiter": "/"}))
    assert [o["path"] for o in under_a["results"]] == ["a/1.txt", "a/2.txt"]

    page = body_of(api.get(OBJECTS.format(ref="main") + "/ls", query={"amount": 2, "user_metadata": "false"}))
    assert [o["path"] for o in page["results"]] == ["a/1.txt", "a/2.txt"] and "metadata" not in page["results"][0]
    assert page["pagination"] == {"has_more": True, "next_offset": "a/2.txt", "results": 2, "max_per_page": 1000}
    rest = body_of(api.get(OBJECTS.format(ref="main") + "/ls", query={"after": "a/2.txt"}))
    assert [o["path"] for o in rest["results"]] == ["b/c/3.txt", "top.txt"]

    commit = api.commit("repo1", "main")
    assert len(body_of(api.get(OBJECTS.format(ref=commit["id"]) + "/ls"))["results"]) == 4
    assert body_of(api.get(OBJECTS.format(ref=seg("main~1")) + "/ls"))["results"] == []
    assert_error(api.get(OBJECTS.format(ref="main") + "/ls", query={"amount": "many"}), 400)


def test_list_with_presign_gives_each_object_a_presigned_address(api: Api, repo: str) -> None:
    for path in ("a/1.txt", "a/2.txt", "top.txt"):
        api.upload("repo1", "main", path, path.encode())
    plain = {o["path"]: o for o in body_of(api.get(OBJECTS.format(ref="main") + "/ls"))["results"]}
    query = {"presign": "true", "delimiter": "/", "user_metadata": "false"}
    listed = conforms(lakefs_sdk.ObjectStatsList, body_of(api.get(OBJECTS.format(ref="main") + "/ls", query=query)))
    assert [(o.path, o.path_type) for o in listed.results] == [("a/", "common_prefix"), ("top.txt", "object")]
    top = listed.results[1]
    assert top.physical_address == "https://memory.invalid/" + plain["top.txt"]["physical_address"][len("s3://") :] + (
        "?expires=900"
    )
    assert top.physical_address_expiry and top.checksum == plain["top.txt"]["checksum"] and top.metadata is None
    assert_error(api.get(OBJECTS.format(ref="main") + "/ls", query={"presign": "perhaps"}), 400)


def test_delete(api: Api, repo: str) -> None:
    api.upload("repo1", "main", "a.txt", b"hello")
    api.commit("repo1", "main")
    response = api.delete(UPLOAD.format(branch="main"), query={"path": "a.txt"})
    assert response.status_code == 204
    assert_error(get(api, "a.txt"), 404)
    assert get(api, "a.txt", ref="main@").body == b"hello"
    assert api.delete(UPLOAD.format(branch="main"), query={"path": "never-existed"}).status_code == 204
    assert_error(api.delete(UPLOAD.format(branch="main")), 400)
    assert_error(api.delete(UPLOAD.format(branch="nope"), query={"path": "a.txt"}), 404)


def test_delete_many(api: Api, repo: str) -> None:
    for path in ("a", "b", "c"):
        api.upload("repo1", "main", path, b"x")
    response = api.post(UPLOAD.format(branch="main") + "/delete", json_body={"paths": ["a", "b", "missing"]})
    assert response.status_code == 200
    result = conforms(lakefs_sdk.ObjectErrorList, body_of(response))
    assert result.errors == []
    listed = body_of(api.get(OBJECTS.format(ref="main") + "/ls"))
    assert [o["path"] for o in listed["results"]] == ["c"]

    response = api.post(UPLOAD.format(branch="main") + "/delete", json_body={"paths": ["c", ""]})
    with_bad_path = conforms(lakefs_sdk.ObjectErrorList, body_of(response))
    assert [(e.path, e.status_code) for e in with_bad_path.errors] == [("", 400)]

    assert_error(api.post(UPLOAD.format(branch="main") + "/delete", json_body={"paths": ["x"] * 1001}), 400)
    for body in ({}, {"paths": "a"}, {"paths": [1]}, []):
        assert_error(api.post(UPLOAD.format(branch="main") + "/delete", json_body=body), 400)
    assert_error(api.post(UPLOAD.format(branch="nope") + "/delete", json_body={"paths": ["c"]}), 404)
