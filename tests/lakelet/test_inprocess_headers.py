"""lakelet/stack/inprocess_aws.py builds its environ from the headers a socket would have given it: the same
names, values and order as http.client's parser reads from the header block http.client would send (it adds
Host first, Accept-Encoding and a body's Content-Length), without formatting and parsing that block per call."""

from __future__ import annotations

import http.client
import io

import pytest
from botocore.awsrequest import AWSPreparedRequest, AWSRequest

from lakelet.stack.inprocess_aws import _headers

NETLOC = "moto:5000"


def _as_a_socket_reads_them(request: AWSPreparedRequest, body: bytes, chunked: bool) -> list[tuple[str, str]]:
    lines = []
    for name, value in request.headers.items():
        lines.append(f"{name}: {value.decode('latin-1') if isinstance(value, bytes) else value}")
    names = {line.split(":", 1)[0].lower() for line in lines}
    if "host" not in names:
        lines.insert(0, f"Host: {NETLOC}")
    if "accept-encoding" not in names:
        lines.append("Accept-Encoding: identity")
    if not chunked and "content-length" not in names and (body or request.method in {"POST", "PUT", "PATCH"}):
        lines.append(f"Content-Length: {len(body)}")
    block = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    return list(http.client.parse_headers(io.BytesIO(block)).items())


@pytest.mark.parametrize(
    ("method", "headers", "body", "chunked"),
    [
        (
            "POST",
            {"X-Amz-Target": "DynamoDB_20120810.GetItem", "Authorization": b"AWS4-HMAC-SHA256 C=K/x"},
            b"{}",
            False,
        ),
        ("PUT", {"Host": "elsewhere", "x-amz-meta-note": "  leading blanks", "Accept-Encoding": "gzip"}, b"", False),
        ("GET", {"x-amz-meta-note": "caf\u00e9", "Range": "bytes=0-1"}, b"", False),
        ("POST", {}, b"", False),
        ("PUT", {"Transfer-Encoding": "chunked"}, b"abc", True),
    ],
)
def test_the_headers_a_socket_would_give(
    method: str, headers: dict[str, str | bytes], body: bytes, chunked: bool
) -> None:
    request = AWSRequest(method=method, url=f"http://{NETLOC}/t", headers=headers, data=body).prepare()
    got = _headers(request, NETLOC, body, chunked)
    assert got == _as_a_socket_reads_them(request, body, chunked)
    assert got[0][0].lower() == "host"
