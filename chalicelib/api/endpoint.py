"""The one decorator every route goes through: authentication, authorization, path decoding and the error table.

Chalice middleware cannot see exceptions raised in views (Chalice turns them into its own 500 first), so the
error mapping wraps each view instead. A route is protected unless declared ``public``: the caller presents
HTTP Basic credentials (access key id and secret), a Bearer token from POST /auth/login or the web UI's
session cookie carrying that token (401 otherwise),
and its policies must allow what permissions.py says the route needs (403 otherwise).
"""

from __future__ import annotations

import base64
import binascii
import functools
import logging
from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar
from typing import Any
from urllib.parse import unquote

import orjson
from chalice import Blueprint, Response
from chalice.app import CaseInsensitiveMapping, Request

from chalicelib import wiring
from chalicelib.auth.conditions import with_request_fields
from chalicelib.auth.policies import Permission
from chalicelib.auth.records import User
from chalicelib.graveler import errors

from . import session
from .errors import INTERNAL_ERROR_MESSAGE, error_response, graveler_error_response, iceberg_shape, status_for
from .permissions import UNMAPPED, RequestFacts, Rule, parameter_names, rule_for

__all__ = [
    "ANY_CONTENT_TYPE",
    "AUTH_FAILED",
    "BINARY_TYPES",
    "URL_PREFIX",
    "View",
    "accept_anything_by_default",
    "authenticate",
    "basic_credentials",
    "current_user",
    "json_response",
    "lakefs_error_shape",
    "no_content",
    "page_response",
    "raw_body",
    "route",
    "services",
    "source_ip",
]

log = logging.getLogger(__name__)

# Where app.py mounts the blueprints.
URL_PREFIX = "/api/v1"
# Every route reads its own body: JSON routes parse raw_body themselves (a lakeFS-shaped 400 instead of
# Chalice's 415), and uploads take any content type (the official client sends the object's own type).
ANY_CONTENT_TYPE = ["*/*"]
AUTH_FAILED = "error authenticating request"
# Every response is binary as far as Chalice and API Gateway are concerned: object reads return arbitrary
# content types (text/csv, application/json, ...) as raw bytes, and the official client asks for them with
# "Accept: application/json". Chalice base64-encodes JSON bodies too, which API Gateway decodes again.
BINARY_TYPES = ["*/*"]

_current_user: ContextVar[User | None] = ContextVar("lakelet_current_user", default=None)

View = Callable[..., Response]


def current_user() -> User:
    """The user the current request authenticated as (protected routes only)."""
    user = _current_user.get()
    if user is None:
        raise errors.Unauthorized(AUTH_FAILED)
    return user


def services() -> wiring.Services:
    return wiring.get_services()


def basic_credentials(header: str | None) -> tuple[str, str]:
    """(access key id, secret) from an ``Authorization: Basic`` header. Raises Unauthorized."""
    if not header:
        raise errors.Unauthorized(AUTH_FAILED)
    scheme, _, encoded = header.strip().partition(" ")
    if scheme.lower() != "basic":
        raise errors.Unauthorized(AUTH_FAILED)
    try:
        decoded = base64.b64decode(encoded.strip(), validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        raise errors.Unauthorized(AUTH_FAILED) from None
    access_key_id, colon, secret = decoded.partition(":")
    if not colon or not access_key_id or not secret:
        raise errors.Unauthorized(AUTH_FAILED)
    return access_key_id, secret


def authenticate(headers: Mapping[str, str], method: str = "GET") -> User:
    """The caller, from HTTP Basic credentials, a Bearer login token, or the web UI's session cookie (with its
    CSRF header on unsafe methods: session.py). Raises Unauthorized (Forbidden for a missing CSRF header)."""
    header = (headers.get("authorization") or "").strip()
    if not header:
        cookie = session.cookie_token(headers)
        if cookie is not None:
            session.check_csrf(method, headers)
            return services().auth.authenticate_token(cookie)
    scheme, _, token = header.partition(" ")
    if scheme.lower() == "bearer" and token.strip():
        return services().auth.authenticate_token(token.strip())
    access_key_id, secret = basic_credentials(header)
    return services().auth.authenticate_basic(access_key_id, secret)


def _unmapped(facts: RequestFacts) -> Sequence[Permission]:
    return UNMAPPED


def _rules(path: str, methods: list[str]) -> dict[str, Rule]:
    """The permission rule of each method of a route; a route the table lacks is for fs:* holders only."""
    rules: dict[str, Rule] = {}
    for method in methods:
        rule = rule_for(method, path)
        if rule is None:
            log.warning("%s %s has no permission rule: only callers allowed fs:* on * may call it", method, path)
            rule = _unmapped
        rules[method] = rule
    return rules


def route(
    bp: Blueprint,
    path: str,
    methods: list[str],
    *,
    public: bool = False,
    content_types: list[str] | None = None,
) -> Callable[[View], View]:
    """Registers ``view`` on ``bp``: authenticates (unless public), decodes path parameters, maps errors."""

    names = parameter_names(path)
    rules = {} if public else _rules(path, methods)

    def register(view: View) -> View:
        @functools.wraps(view)
        def handler(**path_params: str) -> Response:
            request = bp.current_request
            # A HEAD answer carries headers only, errors included.
            with_body = request.method != "HEAD"
            token = None
            usage = None
            try:
                # API Gateway and Chalice hand path parameters over still percent-encoded ("main%7E1").
                params = {name: unquote(value) for name, value in path_params.items()}
                with with_request_fields(source_ip(request.context)):
                    if not public:
                        user = authenticate(request.headers, request.method)
                        token = _current_user.set(user)
                        facts = RequestFacts([params[n] for n in names], request.query_params, request.raw_body)
                        services().auth.authorize(user, list(rules[request.method](facts)))
                        # lakeFS's usage report counts the API actions of signed-in callers (LogAction).
                        usage = services().usage
                        if usage is not None:
                            usage.count()
                    return view(**params)
            except errors.GravelerError as e:
                if status_for(e) >= 500 and not isinstance(e, errors.Unsupported):
                    log.error("%s %s failed: %r", request.method, request.path, e, exc_info=e)
                return session.without_browser_prompt(graveler_error_response(e, with_body), request.headers)
            except Exception:
                log.exception("unhandled error serving %s %s", request.method, request.path)
                return error_response(500, INTERNAL_ERROR_MESSAGE, with_body=with_body)
            finally:
                if token is not None:
                    _current_user.reset(token)
                if usage is not None:
                    usage.flush_if_due()  # at most once an interval: no request pays a write of its own
                wiring.freeze_long_lived()

        bp.route(path, methods=methods, content_types=content_types or ANY_CONTENT_TYPE)(handler)
        return handler

    return register


def source_ip(context: Mapping[str, Any] | None) -> str:
    """The client's address as the deployment sees it: API Gateway's requestContext.identity.sourceIp (REST API,
    and chalice local), or requestContext.http.sourceIp (HTTP API, Function URL); policy conditions test it."""
    context = context or {}
    identity = context.get("identity") or {}
    http = context.get("http") or {}
    return str(identity.get("sourceIp") or http.get("sourceIp") or "")


def accept_anything_by_default(request: Request, get_response: Callable[[Request], Response]) -> Response:
    """HTTP middleware: a request without an Accept header accepts anything (RFC 9110, 12.5.1).

    With BINARY_TYPES ["*/*"] Chalice refuses (400) any response to a request that sends no Accept header at
    all, JSON included; this restores the HTTP default before the route runs.
    """
    if "accept" not in request.headers:
        request.headers = CaseInsensitiveMapping({**request.headers, "accept": "*/*"})
    return get_response(request)


def lakefs_error_shape(request: Request, get_response: Callable[[Request], Response]) -> Response:
    """HTTP middleware: the errors Chalice answers by itself (405 method not allowed, 415, ...) come in its
    ``{"Code", "Message"}`` shape; clients of the lakeFS API expect ``{"message"}``, and the Iceberg catalog's the
    spec's IcebergErrorResponse."""
    response = get_response(request)
    body = response.body
    if response.status_code >= 400 and isinstance(body, dict) and set(body) == {"Code", "Message"}:
        if request.path.startswith("/iceberg/"):
            response.body = iceberg_shape(response.status_code, str(body["Message"]))
        else:
            response.body = {"message": str(body["Message"])}
    return response


def json_response(body: Any, status: int = 200, headers: Mapping[str, str] | None = None) -> Response:
    return Response(body=body, status_code=status, headers={"Content-Type": "application/json", **(headers or {})})


def page_response(page: Mapping[str, Any]) -> Response:
    """A listing page (``serializers.listing``'s) encoded by orjson, several times faster than the json module
    Chalice would use on its dict (a log of 100 commits spent a tenth of its request there). What orjson cannot
    encode (an integer past 64 bits) goes to Chalice's encoder as before. No metric reads a listing's body."""
    try:
        encoded: Any = orjson.dumps(page)
    except orjson.JSONEncodeError:
        encoded = page
    return json_response(encoded)


def raw_body(request: Request) -> bytes:
    """The body's bytes. Chalice types ``raw_body`` as str or bytes, though it decodes every body to bytes."""
    raw = request.raw_body
    return raw.encode() if isinstance(raw, str) else raw


def no_content() -> Response:
    return Response(body=b"", status_code=204, headers={})
