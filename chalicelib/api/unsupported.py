"""The operations lakeFS OSS answers 501 Not Implemented (pkg/api/controller.go: external principals when the auth
service has none, STS and OIDC login without an external authenticator, group ACLs under the basic auth service),
answered the same way: a client probing for them gets lakeFS's ``{"message": "Not Implemented"}``, not a 404 that
reads as a wrong URL. The three login routes are public in lakeFS's spec (``security: []``); the others
authenticate first, as every protected route does."""

from __future__ import annotations

from chalice import Blueprint, Response

from chalicelib.graveler import errors

from .endpoint import route
from .params import JsonBody

__all__ = ["bp"]

bp = Blueprint(__name__)


def _unsupported() -> Response:
    # lakeFS validates a request's body against its spec before the handler answers 501: a malformed one is a 400.
    body = bp.current_request.raw_body
    if body:
        JsonBody.parse(body)
    raise errors.Unsupported()


@route(bp, "/sts/login", ["POST"], public=True)
def sts_login() -> Response:
    return _unsupported()


@route(bp, "/oidc/callback", ["GET"], public=True)
def oauth_callback() -> Response:
    return _unsupported()


@route(bp, "/auth/external/principal/login", ["POST"], public=True)
def external_principal_login() -> Response:
    return _unsupported()


@route(bp, "/auth/external/principals", ["GET"])
def get_external_principal() -> Response:
    return _unsupported()


@route(bp, "/auth/users/{user_id}/external/principals", ["POST", "DELETE"])
def user_external_principal(user_id: str) -> Response:
    return _unsupported()


@route(bp, "/auth/users/{user_id}/external/principals/ls", ["GET"])
def list_user_external_principals(user_id: str) -> Response:
    return _unsupported()


@route(bp, "/auth/groups/{group_id}/acl", ["GET", "POST"])
def group_acl(group_id: str) -> Response:
    return _unsupported()
