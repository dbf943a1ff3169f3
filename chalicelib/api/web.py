"""What the web UI needs beyond lakeFS's API: ending the session (POST /auth/logout) and asking which
actions the caller may take (GET /user/permissions), so the UI offers only what would be allowed.

The permission answer is a hint for the UI, decided by the same policy evaluation as every route, on
resources with a wildcard where the UI does not know the exact one yet (``object/*``, ``tag/*``). The routes
stay the authority: whatever the UI shows, a request that is not allowed still answers 403.
"""

from __future__ import annotations

from chalice import Blueprint, Response

from chalicelib.auth.policies import (
    ALL,
    Permission,
    branch_arn,
    object_arn,
    repository_arn,
    tag_arn,
)

from . import session
from .endpoint import current_user, json_response, route, services
from .params import Query

bp = Blueprint(__name__)

_GLOBAL_ACTIONS = (
    "fs:CreateRepository",
    "fs:DeleteRepository",
    "auth:ListUsers",
    "auth:CreateUser",
    "auth:ListGroups",
    "auth:CreateGroup",
    "auth:ListPolicies",
    "auth:CreatePolicy",
)


def _repository_permissions(repository: str, branch: str) -> dict[str, Permission]:
    repo, any_branch = repository_arn(repository), branch_arn(repository, branch or "*")
    return {
        "fs:DeleteRepository": Permission("fs:DeleteRepository", repo),
        "fs:UpdateRepository": Permission("fs:UpdateRepository", repo),
        "fs:WriteObject": Permission("fs:WriteObject", object_arn(repository, "*")),
        "fs:DeleteObject": Permission("fs:DeleteObject", object_arn(repository, "*")),
        "fs:CreateCommit": Permission("fs:CreateCommit", any_branch),
        "fs:CreateBranch": Permission("fs:CreateBranch", branch_arn(repository, "*")),
        "fs:DeleteBranch": Permission("fs:DeleteBranch", any_branch),
        "fs:RevertBranch": Permission("fs:RevertBranch", any_branch),
        "fs:CreateTag": Permission("fs:CreateTag", tag_arn(repository, "*")),
        "fs:DeleteTag": Permission("fs:DeleteTag", tag_arn(repository, "*")),
        "retention:GetGarbageCollectionRules": Permission("retention:GetGarbageCollectionRules", repo),
        "retention:SetGarbageCollectionRules": Permission("retention:SetGarbageCollectionRules", repo),
        "branches:GetBranchProtectionRules": Permission("branches:GetBranchProtectionRules", repo),
        "branches:SetBranchProtectionRules": Permission("branches:SetBranchProtectionRules", repo),
        "pr:ListPullRequests": Permission("pr:ListPullRequests", repo),
        "pr:ReadPullRequest": Permission("pr:ReadPullRequest", repo),
        "pr:WritePullRequest": Permission("pr:WritePullRequest", repo),
    }


@route(bp, "/auth/logout", ["POST"], public=True)
def logout() -> Response:
    """Revokes the session's token on the server (session.presented_token: the cookie's, or a Bearer token) and
    clears the cookie: a copy of the token stops working at once, in every container. Public: logging out
    needs no valid session (it may have expired)."""
    headers = bp.current_request.headers
    token = session.presented_token(headers, bp.current_request.method)
    if token is not None:
        services().auth.logout(token, services().settings.login_token_seconds)
    return Response(body=b"", status_code=204, headers={"Set-Cookie": session.clear_cookie(headers)})


@route(bp, "/user/permissions", ["GET"])
def user_permissions() -> Response:
    """{"user", "allowed": {action: bool}}: the global actions, and with ?repository= (and optionally
    &branch=) the actions on that repository."""
    q = Query(bp.current_request.query_params)
    user = current_user()
    wanted = {action: Permission(action, ALL) for action in _GLOBAL_ACTIONS}
    repository = q.string("repository")
    if repository:
        wanted.update(_repository_permissions(repository, q.string("branch") or ""))
    authorizer = services().auth.authorizer
    allowed = {action: authorizer.is_allowed(user.id, [permission]) for action, permission in wanted.items()}
    return json_response({"user": user.id, "repository": repository or None, "allowed": allowed})
