"""The Iceberg REST catalog's route decorator, configuration and OAuth2 token endpoint (/iceberg/api/v1).

Every catalog route authenticates as the lakeFS API does (a Bearer token from the token endpoint or POST
/auth/login, or HTTP Basic with an access key pair); the catalog then checks the caller's policies on the objects
each operation reads or writes (chalicelib/iceberg). Errors answer in the spec's IcebergErrorResponse shape; the
token endpoint's in OAuth 2's.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from typing import TYPE_CHECKING
from urllib.parse import parse_qs, unquote

from chalice import Blueprint, Response

from chalicelib import wiring
from chalicelib.auth.conditions import with_request_fields
from chalicelib.auth.policies import Permission
from chalicelib.auth.records import User
from chalicelib.graveler import errors
from chalicelib.iceberg import Authorize, Catalog

if TYPE_CHECKING:
    from chalicelib.iceberg.ports import Vendor

from .endpoint import (
    ANY_CONTENT_TYPE,
    View,
    authenticate,
    basic_credentials,
    json_response,
    raw_body,
    services,
    source_ip,
)
from .errors import iceberg_error_response, iceberg_status_for, oauth_error_response

__all__ = ["ICEBERG_PREFIX", "bp", "caller", "catalog", "catalog_route", "vendor"]

log = logging.getLogger(__name__)

ICEBERG_PREFIX = "/iceberg/api/v1"
ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token"
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
# What the catalog serves, as GET /v1/config's endpoints list says it (views are not served yet).
ENDPOINTS = [
    "GET /v1/{prefix}/namespaces",
    "POST /v1/{prefix}/namespaces",
    "GET /v1/{prefix}/namespaces/{namespace}",
    "HEAD /v1/{prefix}/namespaces/{namespace}",
    "DELETE /v1/{prefix}/namespaces/{namespace}",
    "POST /v1/{prefix}/namespaces/{namespace}/properties",
    "GET /v1/{prefix}/namespaces/{namespace}/tables",
    "POST /v1/{prefix}/namespaces/{namespace}/tables",
    "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "POST /v1/{prefix}/namespaces/{namespace}/register",
    "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/metrics",
    "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}/credentials",
    "POST /v1/{prefix}/tables/rename",
    "POST /v1/{prefix}/transactions/commit",
]

bp = Blueprint(__name__)
_caller: ContextVar[User | None] = ContextVar("lakelet_iceberg_caller", default=None)


def catalog() -> Catalog:
    """The container's catalog (wiring.Services.iceberg_catalog), built once and shared by every request: each
    call takes this request's ``caller()``."""
    return services().iceberg_catalog()


def caller() -> Authorize:
    """The authenticated caller of this request, as the catalog's calls take it: the check of its permissions."""
    user = _caller.get()
    if user is None:
        raise errors.Unauthorized("error authenticating request")
    auth = services().auth

    def authorize(permissions: Sequence[Permission]) -> None:
        auth.authorize(user, list(permissions))

    return authorize


def vendor() -> Vendor | None:
    """The catalog's credential vendor (wiring.Services.vending): None where the deployment names no role (tables
    then go through the S3 gateway)."""
    return services().vending()


def catalog_route(path: str, methods: list[str]) -> Callable[[View], View]:
    """Registers ``view`` at ``path`` under /iceberg/api/v1: authenticates, decodes path parameters, maps errors
    to the spec's error shape."""

    def register(view: View) -> View:
        @functools.wraps(view)
        def handler(**path_params: str) -> Response:
            request = bp.current_request
            with_body = request.method != "HEAD"
            token = None
            try:
                params = {name: unquote(value) for name, value in path_params.items()}
                with with_request_fields(source_ip(request.context)):
                    token = _caller.set(authenticate(request.headers, request.method))
                    return view(**params)
            except errors.GravelerError as e:
                if iceberg_status_for(e) >= 500:
                    log.error("%s %s failed: %r", request.method, request.path, e, exc_info=e)
                return iceberg_error_response(e, with_body)
            except Exception:
                log.exception("unhandled error serving %s %s", request.method, request.path)
                return iceberg_error_response(None, with_body)
            finally:
                if token is not None:
                    _caller.reset(token)
                wiring.freeze_long_lived()

        bp.route(path, methods=methods, content_types=ANY_CONTENT_TYPE)(handler)
        return handler

    return register


@catalog_route("/config", ["GET"])
def get_config() -> Response:
    """No prefix: every route is at /v1/...; the namespace names the repository and the ref."""
    return json_response({"defaults": {}, "overrides": {}, "endpoints": ENDPOINTS})


@bp.route("/oauth/tokens", methods=["POST"], content_types=ANY_CONTENT_TYPE)
def get_token() -> Response:
    """OAuth 2 client credentials: the client id is an access key id and the secret its secret (pyiceberg's
    ``credential`` ``<access key id>:<secret>``, in the form or as HTTP Basic); the token is the one POST
    /auth/login issues. The token exchange grant renews a valid token (Iceberg clients refresh theirs)."""
    request = bp.current_request
    try:
        form = {k: v[0] for k, v in parse_qs(raw_body(request).decode("utf-8", "replace")).items()}
        grant = form.get("grant_type", "")
        ttl = services().settings.login_token_seconds
        if grant == TOKEN_EXCHANGE:
            # A client renewing its token before it expires: the subject token is the one it holds.
            subject = form.get("subject_token", "")
            if not subject:
                raise errors.Invalid("subject_token is required")
            issued = services().auth.refresh(subject, ttl)
        elif grant == "client_credentials":
            client_id, secret = form.get("client_id", ""), form.get("client_secret", "")
            if not client_id and request.headers.get("authorization"):
                client_id, secret = basic_credentials(request.headers.get("authorization"))
            if not client_id or not secret:
                raise errors.Invalid("client_id and client_secret are required")
            issued = services().auth.login(client_id, secret, ttl)
        else:
            raise errors.Unsupported(f"grant_type {grant!r} is not supported: use client_credentials")
    except errors.GravelerError as e:
        return oauth_error_response(e)
    finally:
        wiring.freeze_long_lived()
    return json_response(
        {
            "access_token": issued.value,
            "token_type": "bearer",
            "expires_in": ttl,
            "issued_token_type": ACCESS_TOKEN_TYPE,
        }
    )
