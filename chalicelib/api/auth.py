"""Auth in lakeFS's shapes: POST /auth/login, users and their access keys, groups and members, policies and
their attachments. Who may call what is in permissions.py; the use cases are in chalicelib/auth/."""

from __future__ import annotations

import time

from chalice import Blueprint, Response

from chalicelib.auth.records import Principal, PrincipalKind
from chalicelib.graveler import errors

from . import auth_shapes as shapes
from . import serializers, session
from .endpoint import json_response, no_content, route, services
from .params import JsonBody, Query
from .serializers import credentials_with_secret

bp = Blueprint(__name__)

USERS = "/auth/users"
USER = USERS + "/{userId}"
GROUPS = "/auth/groups"
GROUP = GROUPS + "/{groupId}"
POLICIES = "/auth/policies"
POLICY = POLICIES + "/{policyId}"


def _query() -> Query:
    return Query(bp.current_request.query_params)


def _body() -> JsonBody:
    return JsonBody.parse(bp.current_request.raw_body)


def created() -> Response:
    return Response(body=b"", status_code=201, headers={})


# login


@route(bp, "/auth/login", ["POST"], public=True)
def login() -> Response:
    """JSON only (session.require_json): a form or a plain-text body is how another page would log the browser
    in under an account of its choosing (login CSRF)."""
    session.require_json(bp.current_request.headers)
    body = _body()
    auth = services().auth
    token = auth.login(
        body.required_string("access_key_id"),
        body.required_string("secret_access_key"),
        services().settings.login_token_seconds,
    )
    # The web UI's session rides in an HttpOnly cookie as well (session.py); API clients use the body.
    cookie = session.set_cookie(token.value, token.expires - int(time.time()), bp.current_request.headers)
    return json_response(shapes.token(token), headers={"Set-Cookie": cookie})


# users and access keys


@route(bp, USERS, ["GET"])
def list_users() -> Response:
    q = _query()
    page = services().auth.directory.list_users(q.string("prefix"), q.string("after"), q.amount())
    return json_response(shapes.listing(page, serializers.user))


@route(bp, USERS, ["POST"])
def create_user() -> Response:
    user = services().auth.directory.create_user(_body().required_string("id"))
    return json_response(shapes.created_user(user), 201)


@route(bp, USER, ["GET"])
def get_user(userId: str) -> Response:
    return json_response(serializers.user(services().auth.directory.get_user(userId)))


@route(bp, USER, ["DELETE"])
def delete_user(userId: str) -> Response:
    services().auth.directory.delete_user(userId)
    return no_content()


@route(bp, USER + "/credentials", ["GET"])
def list_credentials(userId: str) -> Response:
    q = _query()
    keys = services().auth.list_credentials(userId)
    page = shapes.page_of(keys, lambda c: c.access_key_id, q.string("prefix"), q.string("after"), q.amount())
    return json_response(shapes.listing(page, shapes.credentials))


@route(bp, USER + "/credentials", ["POST"])
def create_credentials(userId: str) -> Response:
    credential, secret = services().auth.create_credentials(userId)
    return json_response(credentials_with_secret(credential, secret), 201)


@route(bp, USER + "/credentials/{accessKeyId}", ["GET"])
def get_credentials(userId: str, accessKeyId: str) -> Response:
    return json_response(shapes.credentials(services().auth.get_credentials(userId, accessKeyId)))


@route(bp, USER + "/credentials/{accessKeyId}", ["DELETE"])
def delete_credentials(userId: str, accessKeyId: str) -> Response:
    services().auth.delete_credentials(userId, accessKeyId)
    return no_content()


@route(bp, USER + "/groups", ["GET"])
def list_user_groups(userId: str) -> Response:
    q = _query()
    page = services().auth.directory.groups_of(userId, q.string("prefix"), q.string("after"), q.amount())
    return json_response(shapes.listing(page, shapes.group))


@route(bp, USER + "/policies", ["GET"])
def list_user_policies(userId: str) -> Response:
    q = _query()
    directory = services().auth.directory
    if q.boolean("effective"):
        directory.get_user(userId)
        effective = directory.effective_policies(userId)
        page = shapes.page_of(effective, lambda p: p.id, q.string("prefix"), q.string("after"), q.amount())
    else:
        page = directory.attached(
            Principal(PrincipalKind.USER, userId), q.string("prefix"), q.string("after"), q.amount()
        )
    return json_response(shapes.listing(page, shapes.policy))


@route(bp, USER + "/policies/{policyId}", ["PUT"])
def attach_policy_to_user(userId: str, policyId: str) -> Response:
    services().auth.directory.attach(Principal(PrincipalKind.USER, userId), policyId)
    return created()


@route(bp, USER + "/policies/{policyId}", ["DELETE"])
def detach_policy_from_user(userId: str, policyId: str) -> Response:
    services().auth.directory.detach(Principal(PrincipalKind.USER, userId), policyId)
    return no_content()


# groups


@route(bp, GROUPS, ["GET"])
def list_groups() -> Response:
    q = _query()
    page = services().auth.directory.list_groups(q.string("prefix"), q.string("after"), q.amount())
    return json_response(shapes.listing(page, shapes.group))


@route(bp, GROUPS, ["POST"])
def create_group() -> Response:
    body = _body()
    group = services().auth.directory.create_group(body.required_string("id"), body.string("description") or "")
    return json_response(shapes.group(group), 201)


@route(bp, GROUP, ["GET"])
def get_group(groupId: str) -> Response:
    return json_response(shapes.group(services().auth.directory.get_group(groupId)))


@route(bp, GROUP, ["DELETE"])
def delete_group(groupId: str) -> Response:
    services().auth.directory.delete_group(groupId)
    return no_content()


@route(bp, GROUP + "/members", ["GET"])
def list_group_members(groupId: str) -> Response:
    q = _query()
    page = services().auth.directory.members(groupId, q.string("prefix"), q.string("after"), q.amount())
    return json_response(shapes.listing(page, serializers.user))


@route(bp, GROUP + "/members/{userId}", ["PUT"])
def add_group_membership(groupId: str, userId: str) -> Response:
    services().auth.directory.add_member(groupId, userId)
    return created()


@route(bp, GROUP + "/members/{userId}", ["DELETE"])
def delete_group_membership(groupId: str, userId: str) -> Response:
    services().auth.directory.remove_member(groupId, userId)
    return no_content()


@route(bp, GROUP + "/policies", ["GET"])
def list_group_policies(groupId: str) -> Response:
    q = _query()
    page = services().auth.directory.attached(
        Principal(PrincipalKind.GROUP, groupId), q.string("prefix"), q.string("after"), q.amount()
    )
    return json_response(shapes.listing(page, shapes.policy))


@route(bp, GROUP + "/policies/{policyId}", ["PUT"])
def attach_policy_to_group(groupId: str, policyId: str) -> Response:
    services().auth.directory.attach(Principal(PrincipalKind.GROUP, groupId), policyId)
    return created()


@route(bp, GROUP + "/policies/{policyId}", ["DELETE"])
def detach_policy_from_group(groupId: str, policyId: str) -> Response:
    services().auth.directory.detach(Principal(PrincipalKind.GROUP, groupId), policyId)
    return no_content()


# policies


@route(bp, POLICIES, ["GET"])
def list_policies() -> Response:
    q = _query()
    page = services().auth.directory.list_policies(q.string("prefix"), q.string("after"), q.amount())
    return json_response(shapes.listing(page, shapes.policy))


@route(bp, POLICIES, ["POST"])
def create_policy() -> Response:
    policy_id, statements = shapes.parse_policy(bp.current_request.raw_body)
    return json_response(shapes.policy(services().auth.directory.create_policy(policy_id, statements)), 201)


@route(bp, POLICY, ["GET"])
def get_policy(policyId: str) -> Response:
    return json_response(shapes.policy(services().auth.directory.get_policy(policyId)))


@route(bp, POLICY, ["PUT"])
def update_policy(policyId: str) -> Response:
    body_id, statements = shapes.parse_policy(bp.current_request.raw_body)
    if body_id != policyId:
        raise errors.Invalid("the policy id in the body must match the path")
    return json_response(shapes.policy(services().auth.directory.update_policy(policyId, statements)))


@route(bp, POLICY, ["DELETE"])
def delete_policy(policyId: str) -> Response:
    services().auth.directory.delete_policy(policyId)
    return no_content()
