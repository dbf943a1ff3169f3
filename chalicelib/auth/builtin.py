"""The groups and policies every installation starts with, as lakeFS's RBAC setup creates them.

Admins may do everything; SuperUsers everything on data but auth; Developers read and write data; Viewers
read. Every group but Admins may manage its members' own access keys. Installing is idempotent, and never
changes a group or policy an administrator has since edited.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable

from chalicelib.graveler import errors

from .policies import ALL, USER_VARIABLE, user_arn
from .ports import AuthStore
from .records import Effect, Group, Policy, Principal, PrincipalKind, Statement

ADMINS = "Admins"
SUPER_USERS = "SuperUsers"
DEVELOPERS = "Developers"
VIEWERS = "Viewers"

_FS_READ = ("fs:List*", "fs:Read*")
_FS_WRITE = (
    "fs:WriteObject",
    "fs:DeleteObject",
    "fs:RevertBranch",
    "fs:CreateBranch",
    "fs:CreateTag",
    "fs:DeleteBranch",
    "fs:DeleteTag",
    "fs:CreateCommit",
)
_OWN_CREDENTIALS = ("auth:CreateCredentials", "auth:DeleteCredentials", "auth:ListCredentials", "auth:ReadCredentials")


def _allow(actions: tuple[str, ...], resource: str = ALL) -> tuple[Statement, ...]:
    return (Statement(Effect.ALLOW, actions, resource),)


POLICY_STATEMENTS: dict[str, tuple[Statement, ...]] = {
    "FSFullAccess": _allow(("fs:*",)),
    "FSReadWriteAll": _allow(_FS_READ + _FS_WRITE),
    "FSReadAll": _allow(_FS_READ),
    "RepoManagementFullAccess": _allow(("ci:*", "retention:*", "branches:*", "pr:*", "fs:ReadConfig")),
    "RepoManagementReadAll": _allow(
        ("ci:Read*", "retention:Get*", "branches:Get*", "pr:Read*", "pr:List*", "fs:ReadConfig")
    ),
    "AuthFullAccess": _allow(("auth:*",)),
    "AuthManageOwnCredentials": _allow(_OWN_CREDENTIALS, user_arn(USER_VARIABLE)),
}

GROUP_POLICIES: dict[str, tuple[str, ...]] = {
    ADMINS: ("FSFullAccess", "AuthFullAccess", "RepoManagementFullAccess"),
    SUPER_USERS: ("FSFullAccess", "AuthManageOwnCredentials", "RepoManagementReadAll"),
    DEVELOPERS: ("FSReadWriteAll", "AuthManageOwnCredentials", "RepoManagementReadAll"),
    VIEWERS: ("FSReadAll", "AuthManageOwnCredentials"),
}


def install(store: AuthStore, clock: Callable[[], float]) -> None:
    """Creates the built-in policies and groups that do not exist yet and attaches each group's policies.

    Attachments are made only for a group that has none (created now, or by an install cut short), so a group
    an administrator re-shaped stays as it is.
    """
    now = int(clock())
    for policy_id, statements in POLICY_STATEMENTS.items():
        with contextlib.suppress(errors.AlreadyExists):
            store.create_policy(Policy(policy_id, now, statements))
    for group_id, policy_ids in GROUP_POLICIES.items():
        with contextlib.suppress(errors.AlreadyExists):
            store.create_group(Group(group_id, now))
        group = Principal(PrincipalKind.GROUP, group_id)
        if store.list_attached_policies(group):
            continue
        for policy_id in policy_ids:
            store.attach_policy(group, policy_id)
