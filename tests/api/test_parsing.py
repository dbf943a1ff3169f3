"""The edge parsers on their own: query parameters, JSON bodies, Range, multipart and HTTP Basic."""

from __future__ import annotations

import base64

import pytest

from chalicelib.api.endpoint import basic_credentials
from chalicelib.api.errors import UnsatisfiableRange
from chalicelib.api.multipart import form_field
from chalicelib.api.params import JsonBody, Query
from chalicelib.api.ranges import parse_range
from chalicelib.graveler import errors


@pytest.mark.parametrize(
    ("raw", "value"),
    [("True", True), ("true", True), ("TRUE", True), ("1", True), ("False", False), ("false", False), ("0", False)],
)
def test_query_booleans(raw: str, value: bool) -> None:
    assert Query({"presign": raw}).boolean("presign") is value


def test_query_defaults_and_errors() -> None:
    q = Query(None)
    assert (q.string("prefix"), q.boolean("user_metadata", True), q.integer("n"), q.amount()) == ("", True, None, 100)
    with pytest.raises(errors.Invalid):
        q.required_string("path")
    with pytest.raises(errors.Invalid):
        Query({"flag": "yes please"}).boolean("flag")
    assert Query({"amount": "1000"}).amount() == 1000
    assert Query({"amount": "-1"}).amount() == Query({"amount": "0"}).amount() == 100
    assert Query({"amount": "7"}).amount() == 7
    for bad in ("1001", "-2", "x", "1.0", "+1", " 1", "1_0", "١"):  # noqa: RUF001 (a non-ASCII digit int() takes)
        with pytest.raises(errors.Invalid):
            Query({"amount": bad}).amount()


def test_json_body_types() -> None:
    body = JsonBody.parse(b'{"s": "x", "b": true, "i": 3, "m": {"k": "v"}, "l": ["a"], "n": null, "o": {"s": "y"}}')
    assert body.required_string("s") == "x" and body.boolean("b") is True and body.integer("i") == 3
    assert body.str_map("m") == {"k": "v"} and body.str_list("l") == ["a"]
    assert body.string("n", "default") == "default" and body.boolean("n", True) is True and body.integer("n") is None
    inner = body.nested("o")
    assert inner is not None and inner.required_string("s") == "y"
    for accessor in (
        lambda: body.required_string("n"),
        lambda: body.required_string("i"),
        lambda: body.boolean("s"),
        lambda: body.integer("b"),
        lambda: body.str_map("l"),
        lambda: body.str_list("m"),
        lambda: body.str_list("missing"),
        lambda: body.nested("s"),
    ):
        with pytest.raises(errors.Invalid):
            accessor()


@pytest.mark.parametrize("raw", [b"", b"{", b"[]", b"1", b'"s"', b"\xff", b"null"])
def test_json_body_must_be_an_object(raw: bytes) -> None:
    with pytest.raises(errors.Invalid):
        JsonBody.parse(raw)


@pytest.mark.parametrize(
    ("header", "size", "expected"),
    [
        (None, 10, None),
        ("", 10, None),
        ("bytes=0-0", 10, (0, 0)),
        ("bytes=2-", 10, (2, 9)),
        ("bytes=-2", 10, (8, 9)),
        ("Bytes = 1 - 3", 10, (1, 3)),
        ("bytes=0-99", 10, (0, 9)),
    ],
)
def test_ranges(header: str | None, size: int, expected: tuple[int, int] | None) -> None:
    assert parse_range(header, size) == expected


@pytest.mark.parametrize(("header", "size"), [("bytes=10-", 10), ("bytes=-0", 10), ("bytes=0-", 0), ("bytes=-5", 0)])
def test_unsatisfiable_ranges_carry_the_size(header: str, size: int) -> None:
    with pytest.raises(UnsatisfiableRange) as caught:
        parse_range(header, size)
    assert caught.value.size == size


@pytest.mark.parametrize("header", ["bytes=", "bytes=-", "bytes=3-1", "bytes=0-1,2-3", "items=0-1", "bytes=a-b"])
def test_malformed_ranges(header: str) -> None:
    with pytest.raises(errors.Invalid):
        parse_range(header, 10)


def test_multipart_with_a_quoted_boundary_and_no_part_type() -> None:
    body = (
        b"preamble\r\n--a b:c\r\nContent-Disposition: form-data; name=content\r\n\r\n"
        b"\r\nline\r\n\r\n--a b:c--\r\nepilogue"
    )
    assert form_field('multipart/form-data; boundary="a b:c"', body) == (b"\r\nline\r\n", "application/octet-stream")


def test_multipart_keeps_bytes_exact() -> None:
    data = b"\r\n--not-the-boundary\r\n\x00\xff"
    head = b'--XYZ\r\nContent-Disposition: form-data; name="content"; filename="f"\r\n\r\n'
    body = head + data + b"\r\n--XYZ--\r\n"
    assert form_field("multipart/form-data; boundary=XYZ", body) == (data, "application/octet-stream")


def test_multipart_errors() -> None:
    good_part = b'--XYZ\r\nContent-Disposition: form-data; name="content"\r\n\r\nx\r\n'
    with pytest.raises(errors.Invalid):
        form_field("multipart/form-data", good_part + b"--XYZ--\r\n")  # no boundary parameter
    with pytest.raises(errors.Invalid):
        form_field("multipart/form-data; boundary=XYZ", good_part)  # never closed
    with pytest.raises(errors.Invalid):
        form_field("multipart/form-data; boundary=XYZ", good_part + b"--XYZ--\r\n", field="other")


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def test_basic_credentials() -> None:
    assert basic_credentials("Basic " + b64("AKIA:se:cret")) == ("AKIA", "se:cret")
    assert basic_credentials("basic   " + b64("AKIA:secret")) == ("AKIA", "secret")
    bad_headers = (None, "", "Basic", "Basic ***", "Bearer abc")
    for bad in (*bad_headers, "Basic " + b64("nocolon"), "Basic " + b64(":secret"), "Basic " + b64("AKIA:")):
        with pytest.raises(errors.Unauthorized):
            basic_credentials(bad)
