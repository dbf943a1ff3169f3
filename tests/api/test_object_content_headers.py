"""Object bytes read through the API never become an active document on Lakelet's origin (issue 20, point 1).

Every answer that carries an object's bytes or headers (200, 206, HEAD) sends a sandboxing CSP, ``nosniff`` and
``Content-Disposition: attachment`` unless ``disposition=inline`` asked for it and the type is inert.
"""

from __future__ import annotations

import pytest

from chalicelib import http_headers

from .support import Api, assert_error

OBJECTS = "/repositories/repo1/refs/main/objects"
UPLOAD = "/repositories/repo1/branches/main/objects"
PAGE = b"<html><body><script>fetch('/api/v1/auth/users', {method: 'POST'})</script></body></html>"


def upload(api: Api, path: str, data: bytes, content_type: str) -> None:
    response = api.post(UPLOAD, query={"path": path}, body=data, headers={"content-type": content_type})
    assert response.status_code == 201, response.body


def assert_inert(headers: dict[str, str], disposition: str) -> None:
    assert headers["Content-Security-Policy"] == "sandbox; default-src 'none'"
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert headers["Content-Disposition"] == disposition


@pytest.mark.parametrize("method", ["GET", "HEAD"])
def test_an_html_object_is_an_attachment_in_a_sandbox(api: Api, repo: str, method: str) -> None:
    upload(api, "docs/report.html", PAGE, "text/html")
    read = api.request(method, OBJECTS, query={"path": "docs/report.html"})
    assert read.status_code == 200
    assert read.headers["Content-Type"] == "text/html"  # the type is kept: clients rely on it
    assert_inert(read.headers, 'attachment; filename="report.html"')
    assert read.body == (PAGE if method == "GET" else b"")


def test_a_range_read_is_as_inert_as_a_whole_one(api: Api, repo: str) -> None:
    upload(api, "docs/report.html", PAGE, "text/html")
    read = api.get(OBJECTS, query={"path": "docs/report.html"}, headers={"range": "bytes=0-5"})
    assert read.status_code == 206 and read.body == PAGE[:6]
    assert_inert(read.headers, 'attachment; filename="report.html"')


@pytest.mark.parametrize(
    "content_type",
    [
        "text/html",
        "image/svg+xml",
        "application/xml",
        "application/pdf",
        "text/xml; charset=utf-8",
        "application/xhtml+xml",
    ],
)
def test_inline_is_refused_for_active_types(api: Api, repo: str, content_type: str) -> None:
    upload(api, "f", PAGE, content_type)
    read = api.get(OBJECTS, query={"path": "f", "disposition": "inline"})
    assert read.status_code == 200
    assert_inert(read.headers, 'attachment; filename="f"')


@pytest.mark.parametrize("content_type", ["text/plain", "image/png", "application/json", "Text/Plain; charset=utf-8"])
def test_inline_is_granted_for_inert_types_only_when_asked(api: Api, repo: str, content_type: str) -> None:
    upload(api, "data/x", b"{}", content_type)
    asked = api.get(OBJECTS, query={"path": "data/x", "disposition": "inline"})
    assert_inert(asked.headers, "inline")
    not_asked = api.get(OBJECTS, query={"path": "data/x"})
    assert_inert(not_asked.headers, 'attachment; filename="x"')


def test_a_bad_disposition_is_a_400_before_anything_is_read(api: Api, repo: str) -> None:
    response = api.get(OBJECTS, query={"path": "missing", "disposition": "render"})
    assert "disposition" in assert_error(response, 400)


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("a/b/report.html", 'attachment; filename="report.html"'),
        ('q"uo\\te.txt', "attachment; filename=\"q_uo_te.txt\"; filename*=UTF-8''q%22uo%5Cte.txt"),
        ("données/été.csv", "attachment; filename=\"_t_.csv\"; filename*=UTF-8''%C3%A9t%C3%A9.csv"),
        (
            "x\r\nSet-Cookie: a=b",
            "attachment; filename=\"x__Set-Cookie: a=b\"; filename*=UTF-8''x%0D%0ASet-Cookie%3A%20a%3Db",
        ),
        ("dir/", 'attachment; filename="dir"'),
    ],
)
def test_the_attachment_names_the_object_and_cannot_break_the_header(path: str, expected: str) -> None:
    value = http_headers.attachment(path)
    assert value == expected
    assert http_headers.is_safe_value(value)


def test_presigned_reads_still_redirect(api: Api, repo: str) -> None:
    upload(api, "docs/report.html", PAGE, "text/html")
    read = api.get(OBJECTS, query={"path": "docs/report.html", "presign": "true"})
    assert read.status_code == 302 and read.headers["Location"]
