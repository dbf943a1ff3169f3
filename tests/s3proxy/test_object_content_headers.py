"""GetObject and HeadObject never hand a browser an active document (issue 20, point 1): a sandboxing CSP,
``nosniff`` and ``attachment`` unless ``response-content-disposition`` asks for inline and the type is inert."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.client import BaseClient

from chalicelib.graveler.records import Repository

PAGE = b"<html><body><script>document.title = 'ran'</script></body></html>"
CSP = "sandbox; default-src 'none'"


def headers_of(response: dict[str, Any]) -> dict[str, str]:
    return dict(response["ResponseMetadata"]["HTTPHeaders"])


def put(s3: BaseClient, key: str, content_type: str) -> None:
    s3.put_object(Bucket="repo", Key=f"main/{key}", Body=PAGE, ContentType=content_type)


@pytest.mark.parametrize("operation", ["get_object", "head_object"])
def test_an_html_object_is_an_attachment_in_a_sandbox(s3: BaseClient, repo: Repository, operation: str) -> None:
    put(s3, "docs/report.html", "text/html")
    response = getattr(s3, operation)(Bucket="repo", Key="main/docs/report.html")
    headers = headers_of(response)
    assert headers["content-security-policy"] == CSP
    assert headers["x-content-type-options"] == "nosniff"
    assert response["ContentDisposition"] == 'attachment; filename="report.html"'
    assert response["ContentType"] == "text/html"
    if operation == "get_object":
        assert response["Body"].read() == PAGE


def test_a_range_read_is_as_inert(s3: BaseClient, repo: Repository) -> None:
    put(s3, "page.svg", "image/svg+xml")
    response = s3.get_object(Bucket="repo", Key="main/page.svg", Range="bytes=0-9")
    assert response["ResponseMetadata"]["HTTPStatusCode"] == 206
    assert headers_of(response)["content-security-policy"] == CSP
    assert response["ContentDisposition"] == 'attachment; filename="page.svg"'


def test_an_override_to_html_cannot_make_a_page(s3: BaseClient, repo: Repository) -> None:
    put(s3, "notes.txt", "text/plain")
    response = s3.get_object(
        Bucket="repo", Key="main/notes.txt", ResponseContentType="text/html", ResponseContentDisposition="inline"
    )
    assert response["ContentType"] == "text/html"
    assert response["ContentDisposition"] == 'attachment; filename="notes.txt"'
    assert headers_of(response)["content-security-policy"] == CSP


def test_inline_stands_for_an_inert_type(s3: BaseClient, repo: Repository) -> None:
    put(s3, "notes.txt", "text/plain")
    response = s3.get_object(Bucket="repo", Key="main/notes.txt", ResponseContentDisposition="inline")
    assert response["ContentDisposition"] == "inline"
    assert headers_of(response)["x-content-type-options"] == "nosniff"


def test_an_asked_attachment_keeps_its_name_and_anything_else_is_an_attachment(
    s3: BaseClient, repo: Repository
) -> None:
    put(s3, "notes.txt", "text/plain")
    named = s3.get_object(
        Bucket="repo", Key="main/notes.txt", ResponseContentDisposition='attachment; filename="n.txt"'
    )
    assert named["ContentDisposition"] == 'attachment; filename="n.txt"'
    odd = s3.get_object(Bucket="repo", Key="main/notes.txt", ResponseContentDisposition="render-please")
    assert odd["ContentDisposition"] == 'attachment; filename="notes.txt"'
