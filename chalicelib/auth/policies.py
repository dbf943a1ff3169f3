"""Policy evaluation as lakeFS does it: actions and resources matched by wildcard, an explicit deny wins.

A request needs a list of permissions (action, resource ARN); it is allowed when every one of them is allowed
by some statement of the caller's policies and denied by none. In patterns ``*`` matches any run of characters
and ``?`` one character; ``${user}`` in a resource stands for the caller's user id.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from chalicelib.graveler import errors

from .conditions import ConditionError, evaluate, request_fields
from .records import Effect, Policy, Statement

__all__ = [
    "ALL",
    "Permission",
    "branch_arn",
    "group_arn",
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


@dataclass(frozen=True, slots=True)
class _Segment:
    """A run of the pattern between two ``*``: its length, and its literal pieces at their offsets (a ``?``
    is the gap between pieces)."""

    length: int
    pieces: tuple[tuple[int, str], ...]
    literal: bool  # no ``?``: str.find can look for it directly

    @classmethod
    def parse(cls, text: str) -> _Segment:
        pieces: list[tuple[int, str]] = []
        offset = 0
        for chunk in text.split("?"):
            if chunk:
                pieces.append((offset, chunk))
            offset += len(chunk) + 1
        return cls(len(text), tuple(pieces), "?" not in text)

    def at(self, value: str, start: int) -> bool:
        """Whether the segment matches ``value`` at ``start`` (the caller checked it fits)."""
        return all(value.startswith(piece, start + offset) for offset, piece in self.pieces)


@dataclass(frozen=True, slots=True)
class _Glob:
    """A wildcard pattern split on ``*``: a head that must match the start, a tail that must match the end,
    and middle segments found left to right in between."""

    head: _Segment
    middle: tuple[_Segment, ...]
    tail: _Segment | None  # None: the pattern has no ``*`` at all

    def match(self, value: str) -> tuple[bool, int]:
        """(matched, steps): steps counts the positions tried, so tests can see the work is linear."""
        n = len(value)
        if self.tail is None:
            return n == self.head.length and self.head.at(value, 0), 1
        end = n - self.tail.length
        if end < self.head.length or not self.head.at(value, 0) or not self.tail.at(value, end):
            return False, 1
        position, steps = self.head.length, 1
        for segment in self.middle:
            # Taking the leftmost place for each segment is never worse than a later one: everything after it
            # stays available to the segments that follow. So no choice is ever revisited.
            found, tried = _find(segment, value, position, end)
            steps += tried
            if found < 0:
                return False, steps
            position = found + segment.length
        return True, steps


def _find(segment: _Segment, value: str, start: int, end: int) -> tuple[int, int]:
    """(leftmost index >= start where ``segment`` fits wholly before ``end``, or -1; positions tried)."""
    if segment.literal:
        return value.find(segment.pieces[0][1], start, end), 1
    last = end - segment.length
    for index in range(start, last + 1):
        if segment.at(value, index):
            return index, index - start + 1
    return -1, max(last - start + 1, 1)


@functools.lru_cache(maxsize=4096)
def _glob(pattern: str) -> _Glob:
    parts = pattern.split("*")
    if len(parts) == 1:
        return _Glob(_Segment.parse(pattern), (), None)
    middle = tuple(_Segment.parse(p) for p in parts[1:-1] if p)
    return _Glob(_Segment.parse(parts[0]), middle, _Segment.parse(parts[-1]))


def match_steps(pattern: str, value: str) -> tuple[bool, int]:
    """:func:`matches` with the number of positions it tried: at most about ``len(value)`` plus the number
    of segments, whatever the pattern (a regex built from the glob backtracked: 2.4 s for 190 slashes)."""
    return _glob(pattern).match(value)


def matches(pattern: str, value: str) -> bool:
    """Whether ``value`` matches the wildcard ``pattern`` (``*`` any run, ``?`` one character), in time linear
    in ``len(value)`` for a given pattern."""
    return _glob(pattern).match(value)[0]


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
