"""Signature V4: AWS's published examples verify; wrong keys, wrong secrets, tampered requests, expired or
too-long presigned URLs and skewed clocks are refused, and a refused request changes nothing.

moto checks no signature, so all of this is tested here, against the gateway's own verification.
"""

from __future__ import annotations

import calendar
import hashlib
import time
from dataclasses import replace
from urllib.parse import urlsplit

import pytest
from botocore.client import BaseClient
from botocore.exceptions import ClientError

from chalicelib.adapters.sigv4 import BotocoreSigner
from chalicelib.auth import errors as auth_errors
from chalicelib.graveler import errors
from chalicelib.graveler.records import Repository
from chalicelib.s3proxy import Request, S3Gateway
from chalicelib.s3proxy.errors import S3Error
from chalicelib.s3proxy.payload import request_body
from chalicelib.s3proxy.sigv4 import MAX_PRESIGN_SECONDS, authenticate

from .conftest import ACCESS_KEY, Harness, lookup, signed

# AWS's examples (S3 API reference, "Signature Calculations for the Authorization Header" and "Authenticating
# Requests: Using Query Parameters"): key AKIAIOSFODNN7EXAMPLE, these exact requests and signatures.
EXAMPLE_KEY = "AKIAIOSFODNN7EXAMPLE"
EXAMPLE_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
EXAMPLE_TIME = calendar.timegm(time.strptime("20130524T000000Z", "%Y%m%dT%H%M%SZ"))
EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()


def example_lookup(key: str) -> tuple[str, str]:
    if key != EXAMPLE_KEY:
        raise auth_errors.CredentialNotFound(key)
    return "example-user", EXAMPLE_SECRET


def example_get(
    signature: str = "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41", range_header: str = "bytes=0-9"
) -> Request:
    return Request.build(
        "GET",
        "/test.txt",
        "",
        {
            "Host": "examplebucket.s3.amazonaws.com",
            "Range": range_header,
            "x-amz-content-sha256": EMPTY_SHA256,
            "x-amz-date": "20130524T000000Z",
            "Authorization": "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,"
            f"SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,Signature={signature}",
        },
    )


EXAMPLE_PRESIGNED = (
    "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2F"
    "aws4_request&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host&X-Amz-Signature="
    "aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404"
)
CHUNK_SIGNATURES = [
    "ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648",
    "0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497",
    "b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9",
]


def example_chunked(chunk: bytes = b"a" * 65536) -> Request:
    body = (
        b"10000;chunk-signature="
        + CHUNK_SIGNATURES[0].encode()
        + b"\r\n"
        + chunk
        + b"\r\n"
        + b"400;chunk-signature="
        + CHUNK_SIGNATURES[1].encode()
        + b"\r\n"
        + b"a" * 1024
        + b"\r\n"
        + b"0;chunk-signature="
        + CHUNK_SIGNATURES[2].encode()
        + b"\r\n\r\n"
    )
    signed = (
        "content-encoding;content-length;host;x-amz-content-sha256;x-amz-date;x-amz-decoded-content-length;"
        "x-amz-storage-class"
    )
    return Request.build(
        "PUT",
        "/examplebucket/chunkObject.txt",
        "",
        {
            "Host": "s3.amazonaws.com",
            "x-amz-date": "20130524T000000Z",
            "x-amz-storage-class": "REDUCED_REDUNDANCY",
            "x-amz-content-sha256": "STREAMING-AWS4-HMAC-SHA256-PAYLOAD",
            "Content-Encoding": "aws-chunked",
            "x-amz-decoded-content-length": "66560",
            "Content-Length": "66824",
            "Authorization": "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,"
            f"SignedHeaders={signed},"
            "Signature=4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9",
        },
        body,
    )


def refusal(request: Request, now: float = EXAMPLE_TIME + 60) -> str:
    with pytest.raises(S3Error) as error:
        identity = authenticate(request, example_lookup, BotocoreSigner(), now)
        request_body(request, identity, BotocoreSigner())
    return error.value.code


def test_aws_header_example_verifies() -> None:
    identity = authenticate(example_get(), example_lookup, BotocoreSigner(), EXAMPLE_TIME + 60)
    assert (identity.user_id, identity.access_key_id, identity.region) == ("example-user", EXAMPLE_KEY, "us-east-1")


def test_aws_presigned_example_verifies() -> None:
    request = Request.build("GET", "/test.txt", EXAMPLE_PRESIGNED, {"Host": "examplebucket.s3.amazonaws.com"})
    assert authenticate(request, example_lookup, BotocoreSigner(), EXAMPLE_TIME + 86000).presigned
    # One day later than its 86400 seconds, it has expired.
    assert refusal(request, EXAMPLE_TIME + 86401) == "RequestExpired"


def test_aws_chunked_upload_example_verifies() -> None:
    request = example_chunked()
    identity = authenticate(request, example_lookup, BotocoreSigner(), EXAMPLE_TIME)
    assert request_body(request, identity, BotocoreSigner()) == b"a" * 66560


def test_tampered_examples_are_refused() -> None:
    assert refusal(example_get(range_header="bytes=0-10")) == "SignatureDoesNotMatch"
    assert refusal(example_get(signature="0" * 64)) == "SignatureDoesNotMatch"
    assert refusal(example_chunked(b"b" + b"a" * 65535)) == "SignatureDoesNotMatch"
    tampered = EXAMPLE_PRESIGNED.replace("X-Amz-Expires=86400", "X-Amz-Expires=86401")
    request = Request.build("GET", "/test.txt", tampered, {"Host": "examplebucket.s3.amazonaws.com"})
    assert refusal(request) == "SignatureDoesNotMatch"
    moved = Request.build("GET", "/other.txt", EXAMPLE_PRESIGNED, {"Host": "examplebucket.s3.amazonaws.com"})
    assert refusal(moved) == "SignatureDoesNotMatch"


def test_malformed_authorization_is_refused() -> None:
    base = dict(example_get().headers)
    cases = {
        "AWS AKIAIOSFODNN7EXAMPLE:c2lnbmF0dXJl": "InvalidRequest",  # Signature Version 2
        "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request": (
            "AuthorizationHeaderMalformed"
        ),
        base["authorization"].replace("/s3/", "/ec2/"): "AuthorizationHeaderMalformed",
        base["authorization"].replace("20130524/", "20130525/"): "AuthorizationHeaderMalformed",
        base["authorization"].replace("host;range;", "range;"): "AccessDenied",  # host must be signed
        base["authorization"].replace("AKIAIOSFODNN7EXAMPLE", "AKIAUNKNOWNKEY000000"): "InvalidAccessKeyId",
    }
    for authorization, expected in cases.items():
        assert refusal(Request.build("GET", "/test.txt", "", {**base, "authorization": authorization})) == expected
    assert refusal(Request.build("GET", "/test.txt", "", {"host": "x"})) == "AccessDenied"  # anonymous


# Through the gateway, with real boto3 clients: every refusal leaves no trace.


def _nothing_written(harness: Harness) -> None:
    assert harness.services.engine.objects.list_objects("repo", "main").results == []


def _refused(call: object, expected: str) -> ClientError:
    with pytest.raises(ClientError) as error:
        call()  # type: ignore[operator]
    assert error.value.response["Error"]["Code"] == expected
    assert error.value.response["ResponseMetadata"]["HTTPStatusCode"] in (400, 403)
    return error.value


def test_wrong_secret(harness: Harness, repo: Repository) -> None:
    s3 = harness.client(secret="not-the-secret-at-all")
    error = _refused(lambda: s3.put_object(Bucket="repo", Key="main/x", Body=b"x"), "SignatureDoesNotMatch")
    assert error.response["ResponseMetadata"]["HTTPStatusCode"] == 403
    _nothing_written(harness)


def test_unknown_key(harness: Harness, repo: Repository) -> None:
    s3 = harness.client(key="AKIANOSUCHKEY0000000")
    _refused(lambda: s3.put_object(Bucket="repo", Key="main/x", Body=b"x"), "InvalidAccessKeyId")
    _refused(s3.list_buckets, "InvalidAccessKeyId")
    _nothing_written(harness)


def test_tampered_header(harness: Harness, repo: Repository) -> None:
    s3 = harness.client()
    harness.tamper = lambda r: replace(r, headers={**r.headers, "x-amz-meta-owner": "mallory"})
    _refused(
        lambda: s3.put_object(Bucket="repo", Key="main/x", Body=b"x", Metadata={"owner": "alice"}),
        "SignatureDoesNotMatch",
    )
    # A header the client never signed may not be slipped in either.
    harness.tamper = lambda r: replace(r, headers={**r.headers, "x-amz-meta-extra": "1"})
    _refused(lambda: s3.put_object(Bucket="repo", Key="main/x", Body=b"x"), "AccessDenied")
    harness.tamper = lambda r: replace(r, raw_path=r.raw_path.replace("/x", "/y"))
    _refused(lambda: s3.put_object(Bucket="repo", Key="main/x", Body=b"x"), "SignatureDoesNotMatch")
    _nothing_written(harness)


def test_tampered_payload(harness: Harness, repo: Repository) -> None:
    s3 = harness.client("http")
    harness.tamper = lambda r: replace(r, body=b"evil")
    _refused(lambda: s3.put_object(Bucket="repo", Key="main/x", Body=b"good"), "XAmzContentSHA256Mismatch")
    # Changing the declared hash with the body breaks the signature instead.
    harness.tamper = lambda r: replace(
        r, body=b"evil", headers={**r.headers, "x-amz-content-sha256": hashlib.sha256(b"evil").hexdigest()}
    )
    _refused(lambda: s3.put_object(Bucket="repo", Key="main/x", Body=b"good"), "SignatureDoesNotMatch")
    _nothing_written(harness)


def test_tampered_chunked_payload_over_https(harness: Harness, repo: Repository) -> None:
    s3 = harness.client("https")  # aws-chunked, unsigned chunks, CRC32 in the trailer
    harness.tamper = lambda r: replace(r, body=r.body.replace(b"good data", b"evil data"))
    _refused(lambda: s3.put_object(Bucket="repo", Key="main/x", Body=b"good data"), "BadDigest")
    _nothing_written(harness)


@pytest.mark.parametrize("minutes", [-20, 20])
def test_request_outside_the_clock_skew(harness: Harness, repo: Repository, minutes: int) -> None:
    harness.clock.offset = minutes * 60  # the gateway's clock: the client's request is 20 minutes off
    s3 = harness.client()
    _refused(lambda: s3.put_object(Bucket="repo", Key="main/x", Body=b"x"), "RequestTimeTooSkewed")
    _nothing_written(harness)


def test_request_within_the_clock_skew(harness: Harness, repo: Repository) -> None:
    harness.clock.offset = 14 * 60
    harness.client().put_object(Bucket="repo", Key="main/x", Body=b"x")


def _presigned_request(url: str, method: str = "GET", body: bytes = b"") -> Request:
    parts = urlsplit(url)
    return Request.build(method, parts.path, parts.query, {"Host": parts.netloc}, body)


def test_presigned_get_and_put(harness: Harness, s3_http: BaseClient, repo: Repository) -> None:
    put_url = s3_http.generate_presigned_url(
        "put_object", Params={"Bucket": "repo", "Key": "main/p.txt"}, ExpiresIn=300
    )
    assert harness.handle(_presigned_request(put_url, "PUT", b"presigned body")).status == 200
    get_url = s3_http.generate_presigned_url(
        "get_object", Params={"Bucket": "repo", "Key": "main/p.txt"}, ExpiresIn=300
    )
    response = harness.handle(_presigned_request(get_url))
    assert (response.status, response.body) == (200, b"presigned body")


def test_expired_presigned_url(harness: Harness, s3_http: BaseClient, repo: Repository) -> None:
    put_url = s3_http.generate_presigned_url("put_object", Params={"Bucket": "repo", "Key": "main/late"}, ExpiresIn=60)
    harness.clock.offset = 61
    response = harness.handle(_presigned_request(put_url, "PUT", b"too late"))
    assert response.status == 403 and b"<Code>RequestExpired</Code>" in response.body
    _nothing_written(harness)


def test_presigned_urls_last_at_most_seven_days(harness: Harness, s3_http: BaseClient, repo: Repository) -> None:
    harness.services.engine.objects.upload_object("repo", "main", "k", b"v")
    week = s3_http.generate_presigned_url(
        "get_object", Params={"Bucket": "repo", "Key": "main/k"}, ExpiresIn=MAX_PRESIGN_SECONDS
    )
    assert harness.handle(_presigned_request(week)).status == 200
    longer = s3_http.generate_presigned_url(
        "get_object", Params={"Bucket": "repo", "Key": "main/k"}, ExpiresIn=MAX_PRESIGN_SECONDS + 1
    )
    response = harness.handle(_presigned_request(longer))
    assert response.status == 400 and b"AuthorizationQueryParametersError" in response.body


def test_tampered_presigned_url(harness: Harness, s3_http: BaseClient, repo: Repository) -> None:
    url = s3_http.generate_presigned_url("put_object", Params={"Bucket": "repo", "Key": "main/a"}, ExpiresIn=60)
    for forged in (url.replace("main/a", "main/b"), url.replace("X-Amz-Expires=60", "X-Amz-Expires=600")):
        response = harness.handle(_presigned_request(forged, "PUT", b"x"))
        assert response.status == 403 and b"SignatureDoesNotMatch" in response.body
    _nothing_written(harness)


def test_presigned_with_a_wrong_secret(harness: Harness, repo: Repository) -> None:
    sigv2 = harness.client("http").generate_presigned_url("get_object", Params={"Bucket": "repo", "Key": "main/a"})
    assert b"Signature Version 2 is not supported" in harness.handle(_presigned_request(sigv2)).body
    url = harness.client("http", secret="wrong-secret-value", signature_version="s3v4").generate_presigned_url(
        "get_object", Params={"Bucket": "repo", "Key": "main/a"}, ExpiresIn=60
    )
    assert b"SignatureDoesNotMatch" in harness.handle(_presigned_request(url)).body


def test_authorizer_refusal_has_no_side_effect(harness: Harness, repo: Repository) -> None:
    def read_only(user_id: str, action: str, resource: str) -> None:
        if action in ("fs:WriteObject", "fs:DeleteObject"):
            raise errors.Forbidden(f"{user_id} may not {action} on {resource}")

    harness.gateway = S3Gateway(
        harness.services.engine, lookup(harness.keys), BotocoreSigner(), authorize=read_only, clock=harness.clock
    )
    s3 = harness.client()
    _refused(lambda: s3.put_object(Bucket="repo", Key="main/x", Body=b"x"), "AccessDenied")
    _refused(lambda: s3.create_multipart_upload(Bucket="repo", Key="main/x"), "AccessDenied")
    assert s3.list_objects_v2(Bucket="repo", Prefix="main/")["KeyCount"] == 0  # reads still allowed
    _nothing_written(harness)


def test_head_errors_carry_no_body(harness: Harness, repo: Repository) -> None:
    s3 = harness.client(secret="wrong-secret-value")
    with pytest.raises(ClientError) as error:
        s3.head_object(Bucket="repo", Key="main/x")
    assert error.value.response["ResponseMetadata"]["HTTPStatusCode"] == 403
    assert harness.responses[-1].status == 403


def test_presigned_url_cannot_carry_unsigned_amz_headers(
    harness: Harness, s3_http: BaseClient, repo: Repository
) -> None:
    harness.services.engine.objects.upload_object("repo", "main", "secret-source", b"not for you")
    url = s3_http.generate_presigned_url("put_object", Params={"Bucket": "repo", "Key": "main/up"}, ExpiresIn=60)
    smuggled = _presigned_request(url, "PUT", b"")
    smuggled = replace(smuggled, headers={**smuggled.headers, "x-amz-copy-source": "repo/main/secret-source"})
    response = harness.handle(smuggled)
    assert response.status == 403 and b"not signed" in response.body
    with pytest.raises(errors.ObjectNotFound):
        harness.services.engine.objects.stat_object("repo", "main", "up")
    # Integrity checks may be added: they only make the request stricter.
    for crc, status in [("AAAAAA==", 400), ("rfPzYw==", 200)]:  # the second is CRC32 of b"data"
        checked = _presigned_request(url, "PUT", b"data")
        checked = replace(checked, headers={**checked.headers, "x-amz-checksum-crc32": crc})
        assert harness.handle(checked).status == status


def test_the_pre_body_check_spares_the_second_verification_of_the_same_request_only(
    harness: Harness, repo: Repository
) -> None:
    """The local server verifies a request's line and headers before reading its body (refuse_before_body), then
    hands the whole request to handle: the signer found then is taken for exactly that line and those headers, on
    the same thread, within a second; anything else is verified again, and a changed one refused."""
    looked_up: list[str] = []
    find = lookup(harness.keys)

    def counting(key: str) -> tuple[str, str]:
        looked_up.append(key)
        return find(key)

    harness.gateway = S3Gateway(harness.services.engine, counting, BotocoreSigner(), clock=harness.clock)
    request = signed("PUT", "/repo/main/pre", body=b"data")
    head = replace(request, body=b"")
    assert harness.gateway.refuse_before_body(head) is None
    assert harness.gateway.handle(request).status == 200
    assert looked_up == [ACCESS_KEY]  # once, before the body
    assert harness.gateway.handle(request).status == 200  # nothing verified before it: verified again
    assert looked_up == [ACCESS_KEY] * 2
    tampered = replace(request, headers={**request.headers, "x-amz-meta-owner": "mallory"})
    assert harness.gateway.refuse_before_body(head) is None
    assert harness.gateway.handle(tampered).status == 403  # not the request verified: refused (an unsigned header)
    assert harness.gateway.refuse_before_body(head) is None
    assert harness.gateway.handle(replace(request, body=b"evil")).status == 400  # the body against the signed hash
    assert harness.gateway.refuse_before_body(head) is None
    harness.clock.offset += 2  # the body took two seconds
    assert harness.gateway.handle(request).status == 200
    # Looked up: before each body (4), the handling without a check before it, and the one two seconds late.
    assert looked_up == [ACCESS_KEY] * 6
