"""Policy evaluation: wildcards, ${user}, deny wins, every permission needed; and statement validation."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chalicelib.auth import builtin
from chalicelib.auth.policies import (
    Permission,
    branch_arn,
    is_allowed,
    matches,
    object_arn,
    repository_arn,
    user_arn,
    validate_statement,
)
from chalicelib.auth.records import Effect, Policy, Statement
from chalicelib.graveler import errors


def policy(*statements: Statement) -> Policy:
    return Policy("p", 0, statements)


def allow(actions: tuple[str, ...], resource: str = "*") -> Statement:
    return Statement(Effect.ALLOW, actions, resource)


def deny(actions: tuple[str, ...], resource: str = "*") -> Statement:
    return Statement(Effect.DENY, actions, resource)


@pytest.mark.parametrize(
    ("pattern", "value", "expected"),
    [
        ("*", "", True),
        ("*", "anything at all", True),
        ("fs:Read*", "fs:ReadObject", True),
        ("fs:Read*", "fs:Read", True),
        ("fs:Read*", "fs:WriteObject", False),
        ("fs:Read*", "xfs:ReadObject", False),
        ("fs:?eadObject", "fs:ReadObject", True),
        ("fs:?eadObject", "fs:eadObject", False),
        ("arn:lakefs:fs:::repository/sales/*", "arn:lakefs:fs:::repository/sales/object/a/b.csv", True),
        ("arn:lakefs:fs:::repository/sales/*", "arn:lakefs:fs:::repository/sales", False),
        ("arn:lakefs:fs:::repository/sales*", "arn:lakefs:fs:::repository/sales-eu", True),
        # Regex metacharacters are literal.
        ("a.b", "axb", False),
        ("a+(b)[c]", "a+(b)[c]", True),
        ("fs:ReadObject", "fs:readobject", False),
    ],
)
def test_wildcards(pattern: str, value: str, expected: bool) -> None:
    assert matches(pattern, value) is expected


@given(st.text(max_size=20))
def test_a_pattern_without_wildcards_matches_only_itself(text: str) -> None:
    literal = text.replace("*", "").replace("?", "")
    assert matches(literal, literal)
    assert not matches(literal, literal + "x")


def test_allow_needs_action_and_resource() -> None:
    policies = [policy(allow(("fs:ReadObject",), "arn:lakefs:fs:::repository/sales/*"))]
    read_sales = Permission("fs:ReadObject", object_arn("sales", "a.csv"))
    assert is_allowed(policies, [read_sales], "u")
    assert not is_allowed(policies, [Permission("fs:WriteObject", object_arn("sales", "a.csv"))], "u")
    assert not is_allowed(policies, [Permission("fs:ReadObject", object_arn("hr", "a.csv"))], "u")
    assert not is_allowed([], [read_sales], "u")


def test_deny_wins_over_allow_anywhere() -> None:
    policies = [
        policy(allow(("fs:*",))),
        Policy("no-prod", 0, (deny(("fs:Delete*",), "arn:lakefs:fs:::repository/prod*"),)),
    ]
    assert is_allowed(policies, [Permission("fs:DeleteObject", object_arn("dev", "x"))], "u")
    assert not is_allowed(policies, [Permission("fs:DeleteObject", object_arn("prod", "x"))], "u")
    assert not is_allowed(policies, [Permission("fs:DeleteRepository", repository_arn("prod"))], "u")
    assert is_allowed(policies, [Permission("fs:ReadObject", object_arn("prod", "x"))], "u")


def test_every_permission_is_needed() -> None:
    policies = [policy(allow(("fs:CreateRepository",)))]
    create = Permission("fs:CreateRepository", repository_arn("r"))
    attach = Permission("fs:AttachStorageNamespace", "arn:lakefs:fs:::namespace/s3://b/r")
    assert is_allowed(policies, [create], "u")
    assert not is_allowed(policies, [create, attach], "u")
    assert is_allowed(policies, [], "u")


def test_user_variable_is_the_caller() -> None:
    own = builtin.POLICY_STATEMENTS["AuthManageOwnCredentials"]
    policies = [Policy("own", 0, own)]
    assert is_allowed(policies, [Permission("auth:CreateCredentials", user_arn("alice"))], "alice")
    assert not is_allowed(policies, [Permission("auth:CreateCredentials", user_arn("bob"))], "alice")
    assert not is_allowed(policies, [Permission("auth:CreateUser", user_arn("alice"))], "alice")


def test_builtin_groups_do_what_lakefs_groups_do() -> None:
    def allowed(group: str, action: str, resource: str) -> bool:
        policies = [Policy(p, 0, builtin.POLICY_STATEMENTS[p]) for p in builtin.GROUP_POLICIES[group]]
        return is_allowed(policies, [Permission(action, resource)], "someone")

    write = ("fs:WriteObject", object_arn("r", "k"))
    read = ("fs:ReadObject", object_arn("r", "k"))
    create_repo = ("fs:CreateRepository", repository_arn("r"))
    commit = ("fs:CreateCommit", branch_arn("r", "main"))
    users = ("auth:CreateUser", user_arn("new"))
    for group in builtin.GROUP_POLICIES:
        assert allowed(group, *read)
        assert allowed(group, "auth:ListCredentials", user_arn("someone"))
    assert [g for g in builtin.GROUP_POLICIES if allowed(g, *write)] == ["Admins", "SuperUsers", "Developers"]
    assert [g for g in builtin.GROUP_POLICIES if allowed(g, *commit)] == ["Admins", "SuperUsers", "Developers"]
    assert [g for g in builtin.GROUP_POLICIES if allowed(g, *create_repo)] == ["Admins", "SuperUsers"]
    assert [g for g in builtin.GROUP_POLICIES if allowed(g, *users)] == ["Admins"]


@pytest.mark.parametrize(
    "statement",
    [
        allow(()),
        allow(("ReadObject",)),
        allow(("s3:GetObject",)),
        allow(("fs:Read Object",)),
        allow(("fs:ReadObject",), "sales/*"),
        allow(("fs:ReadObject",), ""),
    ],
)
def test_invalid_statements(statement: Statement) -> None:
    with pytest.raises(errors.Invalid):
        validate_statement(statement)


@pytest.mark.parametrize(
    "statement",
    [allow(("*",)), allow(("fs:*", "auth:Read*", "retention:Get*"), "arn:lakefs:fs:::repository/x/*")],
)
def test_valid_statements(statement: Statement) -> None:
    validate_statement(statement)
