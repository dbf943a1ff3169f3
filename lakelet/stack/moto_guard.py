"""The local stack's AWS stand-in answers the stack only: a WSGI layer in front of moto's server.

Why: moto checks no signature, so on loopback it answered anyone. curl with no credential read every object, the
auth tables and the KMS key that unseals secrets, and moto's CORS reflected any Origin, so any web page open in
the developer's browser could do the same. And moto cannot tell a presigned URL's signed headers from the rest,
so a write-once URL (signed for ``If-None-Match: *``) could overwrite the object it had created.

What :class:`MotoGuard` lets through to moto:

- a request signed with SigV4 (Authorization header or presigned query) under the stack's key pair, verified by
  the S3 gateway's code (chalicelib/s3proxy/sigv4.py on botocore's signer) for any AWS service's scope. As on
  AWS, every header the signature names must be sent with the signed value: a write-once URL without
  ``If-None-Match: *`` is refused, and with it moto answers 412 for an existing key;
- an S3 request signed with temporary keys the stack's moto STS minted (the Iceberg catalog's vended
  credentials), with their session token, before they expire, and only as their session policy allows
  (lakelet/stack/session_keys.py);
- from a browser, only requests whose ``Origin`` is the stack's own web UI; the CORS answers (preflight and
  response headers) are the guard's, for that origin only. Any other Origin is refused before moto sees it.

Before the guard reads a body (the services other than S3 sign its hash), the request must name the stack's key
in its credential scope and declare a body of at most :data:`MAX_SIGNED_BODY` bytes: an unsigned or foreign
request never makes the guard read (or hold) what it sends.

A request this process answers in process (lakelet/stack/inprocess_aws.py) and that names the stack's key is not
checked again: only the process's own clients, made with the stack's key pair, can send it. Everything else gets
403 in S3's XML error shape. moto's own ``/moto-api`` (state dump, reset, config) takes a
signed request too (:func:`signed_headers` signs one).
"""

from __future__ import annotations

import re
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from typing import Any
from urllib.parse import parse_qs, urlsplit

from botocore.auth import S3SigV4Auth, SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials as BotoCredentials

from chalicelib.adapters.sigv4 import BotocoreSigner
from chalicelib.auth.errors import CredentialNotFound
from chalicelib.s3proxy.errors import S3Error, error_response
from chalicelib.s3proxy.model import Request
from chalicelib.s3proxy.sigv4 import authenticate
from lakelet.persistence.middleware import WsgiApp, read_body
from lakelet.stack import session_keys
from lakelet.stack.inprocess_aws import IN_PROCESS

# What the stack's web UI does on moto's port: presigned GETs and PUTs (and the HEAD a client may send first).
_CORS_METHODS = "GET, HEAD, PUT"
# The UI reads the ETag of its upload (the checksum it links with); S3's CORS names it the same way.
_CORS_EXPOSE = "ETag, x-amz-request-id"
_CORS_MAX_AGE = "600"
_S3_SCOPE = "/s3/aws4_request"
_GUARD_USER = "lakelet-local-stack"
# The largest body the guard reads to check its hash: DynamoDB's largest request (BatchWriteItem, TransactWrite)
# is 16 MB; KMS, Step Functions and a Lambda invoke (6 MB) are smaller. S3's bodies are never read by the guard.
MAX_SIGNED_BODY = 16 * 1024 * 1024
_CREDENTIAL = re.compile(r"Credential=([^/,\s]+)/")

StartResponse = Callable[..., Any]


def ui_origins(endpoint: str) -> frozenset[str]:
    """The origins of a UI served at ``endpoint`` (``http://host:port``): on loopback, 127.0.0.1 and localhost
    name the same server, and a browser sends whichever the user typed."""
    parts = urlsplit(endpoint)
    origin = f"{parts.scheme}://{parts.netloc}"
    if parts.hostname in ("127.0.0.1", "localhost") and parts.port is not None:
        return frozenset({f"{parts.scheme}://127.0.0.1:{parts.port}", f"{parts.scheme}://localhost:{parts.port}"})
    return frozenset({origin})


def _request(environ: Mapping[str, Any], body: bytes) -> Request:
    headers = [(key[5:].replace("_", "-"), str(value)) for key, value in environ.items() if key.startswith("HTTP_")]
    for key, name in (("CONTENT_TYPE", "content-type"), ("CONTENT_LENGTH", "content-length")):
        if environ.get(key):
            headers.append((name, str(environ[key])))
    # The signature covers the path as the client encoded it; PATH_INFO is already decoded.
    raw_uri = str(environ.get("REQUEST_URI") or environ.get("RAW_URI") or environ.get("PATH_INFO") or "/")
    raw_path = urlsplit(raw_uri).path or "/"
    return Request.build(
        str(environ.get("REQUEST_METHOD", "GET")), raw_path, str(environ.get("QUERY_STRING", "")), headers, body
    )


def _claimed_key(environ: Mapping[str, Any]) -> str | None:
    """The access key id a request's credential scope names (header or presigned query), before any check."""
    match = _CREDENTIAL.search(str(environ.get("HTTP_AUTHORIZATION", "")))
    if match is not None:
        return match.group(1)
    credential = parse_qs(str(environ.get("QUERY_STRING", ""))).get("X-Amz-Credential", [""])[0]
    return credential.split("/", 1)[0] or None


def _signs_a_body_hash(environ: Mapping[str, Any]) -> bool:
    """True for the services other than S3: their signature covers the body's hash, so the guard reads the
    body first. S3 declares its payload hash in a header, and its bodies (uploads) can be large."""
    scope = str(environ.get("HTTP_AUTHORIZATION", "")) or str(environ.get("QUERY_STRING", ""))
    return _S3_SCOPE not in scope.replace("%2F", "/").replace("%2f", "/")


class MotoGuard:
    """Wraps moto's WSGI app: see the module docstring. :meth:`allow_origins` names the UI once it listens."""

    def __init__(
        self, app: WsgiApp, access_key_id: str, secret_access_key: str, clock: Callable[[], float] = time.time
    ) -> None:
        self._app = app
        self._access_key_id = access_key_id
        self._secret = secret_access_key
        self._clock = clock
        self._signer = BotocoreSigner()
        self._origins: frozenset[str] = frozenset()
        self._lock = threading.Lock()

    def allow_origins(self, origins: Iterable[str]) -> None:
        with self._lock:
            self._origins = frozenset(origins)

    @property
    def origins(self) -> frozenset[str]:
        return self._origins

    def _lookup(self, access_key_id: str) -> tuple[str, str]:
        if access_key_id == self._access_key_id:
            return _GUARD_USER, self._secret
        key = session_keys.minted(access_key_id)  # a vended credential of the Iceberg catalog
        if key is None:
            raise CredentialNotFound(access_key_id)
        return _GUARD_USER, key.secret_access_key

    def _check_minted(self, environ: Mapping[str, Any]) -> None:
        """A request signed with a key moto's STS minted: its session token, its expiry, its session policy."""
        claimed = _claimed_key(environ)
        if claimed is None or claimed == self._access_key_id:
            return
        key = session_keys.minted(claimed)
        if key is None:
            raise S3Error("InvalidAccessKeyId", details={"AWSAccessKeyId": claimed})
        query = str(environ.get("QUERY_STRING", ""))
        token = (
            str(environ.get("HTTP_X_AMZ_SECURITY_TOKEN", "")) or parse_qs(query).get("X-Amz-Security-Token", [""])[0]
        )
        if token != key.session_token:
            raise S3Error("InvalidToken", "the security token does not belong to the access key")
        if self._clock() >= key.expires_at:
            raise S3Error("ExpiredToken", "the provided token has expired")
        raw_uri = str(environ.get("REQUEST_URI") or environ.get("RAW_URI") or environ.get("PATH_INFO") or "/")
        request = session_keys.s3_request(str(environ.get("REQUEST_METHOD", "GET")), urlsplit(raw_uri).path, query)
        if key.policy is not None and (request is None or not session_keys.allowed(key.policy, *request)):
            raise S3Error("AccessDenied", "the session policy of these temporary credentials does not allow this")

    def _check_before_reading(self, environ: Mapping[str, Any]) -> None:
        """Refuses, from the headers alone, a request whose body the guard should not read: one that names no
        key or another key than the stack's, or that declares (or, chunked, may send) too large a body."""
        claimed = _claimed_key(environ)
        if claimed is None:
            raise S3Error("AccessDenied", "anonymous requests are not accepted: sign requests with SigV4")
        if claimed != self._access_key_id:
            raise S3Error("InvalidAccessKeyId", details={"AWSAccessKeyId": claimed})
        length = str(environ.get("CONTENT_LENGTH") or "")
        if not length.isdigit():
            # Chunked or unknown: AWS's SDKs send a Content-Length for these services' JSON and form bodies.
            if "chunked" in str(environ.get("HTTP_TRANSFER_ENCODING", "")).lower():
                raise S3Error("MissingContentLength", "send a Content-Length with a signed body")
        elif int(length) > MAX_SIGNED_BODY:
            raise S3Error("EntityTooLarge", f"a signed body holds at most {MAX_SIGNED_BODY} bytes here")

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        origin = environ.get("HTTP_ORIGIN")
        allowed = origin is not None and origin in self._origins
        if origin is not None and not allowed:
            return self._refuse(
                environ,
                start_response,
                S3Error("AccessDenied", f"requests from origin {origin!r} are not accepted: only the stack's web UI"),
                None,
            )
        if environ.get("REQUEST_METHOD") == "OPTIONS" and allowed and environ.get("HTTP_ACCESS_CONTROL_REQUEST_METHOD"):
            return self._preflight(environ, start_response, str(origin))
        _drop_forwarded_basic_auth(environ)
        try:
            # This process's own client, signed with the stack's key (lakelet/stack/inprocess_aws.py), passes.
            if environ.get(IN_PROCESS) is not True or _claimed_key(environ) != self._access_key_id:
                body = b""
                if _signs_a_body_hash(environ):
                    self._check_before_reading(environ)
                    body = read_body(environ)
                authenticate(_request(environ, body), self._lookup, self._signer, self._clock(), services=None)
                self._check_minted(environ)
        except S3Error as error:
            return self._refuse(environ, start_response, error, origin if allowed else None)

        def respond(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            # moto's flask-cors reflects any Origin: its CORS headers go, the guard's take their place.
            kept = [(name, value) for name, value in headers if not name.lower().startswith("access-control-")]
            if allowed:
                kept += _cors_headers(str(origin))
            return start_response(status, kept, exc_info) if exc_info is not None else start_response(status, kept)

        return self._app(environ, respond)

    def _preflight(self, environ: Mapping[str, Any], start_response: StartResponse, origin: str) -> Iterable[bytes]:
        headers = [
            *_cors_headers(origin),
            ("Access-Control-Allow-Methods", _CORS_METHODS),
            ("Access-Control-Max-Age", _CORS_MAX_AGE),
            ("Content-Length", "0"),
        ]
        requested = str(environ.get("HTTP_ACCESS_CONTROL_REQUEST_HEADERS", ""))
        if requested:
            headers.append(("Access-Control-Allow-Headers", requested))
        start_response("200 OK", headers)
        return [b""]

    def _refuse(
        self, environ: Mapping[str, Any], start_response: StartResponse, error: S3Error, origin: str | None
    ) -> Iterable[bytes]:
        response = error_response(error, str(environ.get("PATH_INFO", "/")), uuid.uuid4().hex)
        headers = [*response.headers.items(), ("Content-Length", str(len(response.body)))]
        if origin is not None:
            headers += _cors_headers(origin)  # so the UI can read why
        start_response(f"{response.status} {_REASONS.get(response.status, 'Error')}", headers)
        return [response.body]


_REASONS = {400: "Bad Request", 403: "Forbidden", 411: "Length Required"}


def _drop_forwarded_basic_auth(environ: dict[str, Any]) -> None:
    """A presigned URL followed from the API's 302 may arrive with the API's own ``Authorization: Basic``: Go's
    HTTP client (lakectl) keeps it across a redirect to the same host name, and locally moto shares the API's
    127.0.0.1 (S3 on AWS is another host, so it never sees it). The URL's signature is the credential: the header
    goes, as it would never have come."""
    authorization = str(environ.get("HTTP_AUTHORIZATION", ""))
    if authorization.lower().startswith("basic ") and "X-Amz-Signature=" in str(environ.get("QUERY_STRING", "")):
        del environ["HTTP_AUTHORIZATION"]


def _cors_headers(origin: str) -> list[tuple[str, str]]:
    return [
        ("Access-Control-Allow-Origin", origin),
        ("Access-Control-Expose-Headers", _CORS_EXPOSE),
        ("Vary", "Origin"),
    ]


def signed_headers(
    method: str, url: str, body: bytes, access_key_id: str, secret_access_key: str, region: str, service: str = "s3"
) -> dict[str, str]:
    """The headers that sign a plain HTTP request to the guarded moto (e.g. ``/moto-api/config``) with SigV4."""
    request = AWSRequest(method=method, url=url, data=body)
    auth = S3SigV4Auth if service == "s3" else SigV4Auth  # S3's declares its payload hash in a header
    auth(BotoCredentials(access_key_id, secret_access_key), service, region).add_auth(request)
    return dict(request.headers.items())
