"""Policy evaluation as lakeFS does it: actions and resources matched by wildcard, an explicit deny wins.

A request needs a list of permissions (action, resource ARN); it is allowed when every one of them is allowed
by some statement of the caller's policies and denied by none. In patterns ``*`` matches any run of characters
and ``?`` one character; ``${user}`` in a resource stands for the caller's user id.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from chalicelib.graveler import errors

from .conditions import ConditionError, evaluate, request_fields
from .records import Effect, Policy, Statement

# The matcher lives in wildcards.py (conditions match with it too); named here, where tests and callers find it.
from .wildcards import match_steps, matches

__all__ = [
    "ALL",
    "Permission",
    "branch_arn",
    "group_arn",
    "match_steps",
    "matches",
    "namespace_arn",
    "object_arn",
    "policy_arn",
    "repository_arn",
    "tag_arn",
    "user_arn",
]

ALL = "*"
FS_ARN = "arn:lakefs:fs:::"
AUTH_ARN = "arn:lakefs:auth:::"
USER_VARIABLE = "${user}"
# The services lakeFS knows; an action is "<service>:<name>", with wildcards in the name.
SERVICES = frozenset({"fs", "auth", "ci", "retention", "branches", "pr"})
_ACTION = re.compile(r"(?P<service>[a-z]+):[A-Za-z*?]+")


@dataclass(frozen=True, slots=True)
class Permission:
    """One thing a request does: an action on a resource (an ARN)."""

    action: str
    resource: str


def repository_arn(repository: str) -> str:
    return f"{FS_ARN}repository/{repository}"


def object_arn(repository: str, key: str) -> str:
    return f"{FS_ARN}repository/{repository}/object/{key}"


def branch_arn(repository: str, branch: str) -> str:
    return f"{FS_ARN}repository/{repository}/branch/{branch}"


def tag_arn(repository: str, tag: str) -> str:
    return f"{FS_ARN}repository/{repository}/tag/{tag}"


def namespace_arn(namespace: str) -> str:
    return f"{FS_ARN}namespace/{namespace}"


def user_arn(user_id: str) -> str:
    return f"{AUTH_ARN}user/{user_id}"


def group_arn(group_id: str) -> str:
    return f"{AUTH_ARN}group/{group_id}"


def policy_arn(policy_id: str) -> str:
    return f"{AUTH_ARN}policy/{policy_id}"


def _applies(statement: Statement, permission: Permission, user_id: str) -> bool:
    resource = statement.resource.replace(USER_VARIABLE, user_id)
    if not matches(resource, permission.resource):
        return False
    return any(matches(action, permission.action) for action in statement.actions)


def is_allowed(policies: Iterable[Policy], permissions: Sequence[Permission], user_id: str) -> bool:
    """True when every permission is allowed by some statement and denied by none. A statement with conditions
    counts only while they hold for the current request (conditions.request_fields); one that cannot be evaluated
    denies everything, as lakeFS's CheckPermissions does."""
    fields = request_fields()
    statements: list[Statement] = []
    for policy in policies:
        for statement in policy.statements:
            try:
                if evaluate(statement.conditions, fields):
                    statements.append(statement)
            except ConditionError:
                return False
    for permission in permissions:
        effects = {s.effect for s in statements if _applies(s, permission, user_id)}
        if Effect.DENY in effects or Effect.ALLOW not in effects:
            return False
    return True


def validate_statement(statement: Statement) -> None:
    """Raises Invalid for an action outside lakeFS's services or a resource that is neither ``*`` nor an ARN."""
    if not statement.actions:
        raise errors.Invalid("a statement needs at least one action")
    for action in statement.actions:
        match = _ACTION.fullmatch(action)
        if action != ALL and (match is None or match.group("service") not in SERVICES):
            services = ", ".join(sorted(SERVICES))
            raise errors.Invalid(f"invalid action {action!r}: expected <service>:<action>, service one of {services}")
    resource = statement.resource
    if resource != ALL and not resource.startswith("arn:lakefs:"):
        raise errors.Invalid(f"invalid resource {resource!r}: expected '*' or an arn:lakefs: ARN")
