"""Managing users, groups, memberships, policies and attachments: the use cases behind the /auth API.

Deleting something removes what refers to it first (a user's keys, memberships and attachments; a group's
memberships and attachments; a policy's attachments), then the record itself, so a crash midway leaves a
record that can simply be deleted again, never a dangling grant. Every change calls ``on_change`` so the
caches of authentication and authorization in this container forget what they knew.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Sequence
from typing import Protocol

from chalicelib.graveler import errors
from chalicelib.graveler.records import Page

from . import errors as auth_errors
from . import policies as policy_rules
from .errors import GroupNotFound, PolicyNotFound
from .ports import AuthStore
from .records import Group, Policy, Principal, PrincipalKind, Statement, User, new_user

MAX_AMOUNT = 1000
_ID_MAX = 256
_DESCRIPTION_MAX = 1024
_STATEMENTS_MAX = 100
# A policy is one DynamoDB item (400 KB at most): refused above this size whatever the store, with the same 400.
_POLICY_MAX_BYTES = 256 * 1024


class _HasId(Protocol):
    @property
    def id(self) -> str: ...


def _policy_bytes(statements: Sequence[Statement]) -> int:
    """About what the statements take stored: the UTF-8 bytes of their strings."""
    total = 0
    for statement in statements:
        strings = [*statement.actions, statement.resource]
        for condition in statement.conditions:
            strings += [condition.operator, condition.field, *condition.values]
        total += sum(len(text.encode("utf-8", "surrogatepass")) for text in strings)
    return total


def validate_id(kind: str, value: str) -> None:
    """Raises Invalid for an id that could not appear in a URL path segment or an ARN."""
    if not value or len(value) > _ID_MAX or any(c.isspace() or c in "/:*?\\" or ord(c) < 32 for c in value):
        raise errors.Invalid(f"{kind} id must be 1-{_ID_MAX} characters without spaces or / : * ? \\")


def page_by_id[T: _HasId](fetch: Callable[[str, int], Sequence[T]], prefix: str, after: str, amount: int) -> Page[T]:
    """A page of records sorted by id, from a store listing ids > after; filtered by prefix."""
    limit = max(1, min(amount, MAX_AMOUNT))
    start = after
    if prefix and prefix > after:
        start = prefix[:-1]  # just below the prefix: ids starting with it are all greater
    items: list[T] = []
    while len(items) <= limit:
        batch = fetch(start, limit + 1)
        done = len(batch) <= limit
        for item in batch:
            if item.id.startswith(prefix):
                items.append(item)
            elif item.id > prefix:
                done = True
                break
        if done or not batch:
            break
        start = batch[-1].id
    has_more = len(items) > limit
    items = items[:limit]
    return Page(items, has_more, items[-1].id if has_more else "")


def _page_ids(ids: list[str], prefix: str, after: str, amount: int) -> tuple[list[str], Page[str]]:
    """One page of a sorted id list (records that vanished meanwhile are dropped later, not refilled)."""
    limit = max(1, min(amount, MAX_AMOUNT))
    selected = [i for i in ids if i > after and i.startswith(prefix)]
    has_more = len(selected) > limit
    page = selected[:limit]
    return page, Page(page, has_more, page[-1] if has_more else "")


class Directory:
    """Users, groups and policies, and the links between them."""

    def __init__(
        self, store: AuthStore, on_change: Callable[[str | None], None], clock: Callable[[], float] = time.time
    ) -> None:
        self._store = store
        self._on_change = on_change  # called with the user id whose keys changed, or None
        self._clock = clock

    # users

    def create_user(self, user_id: str) -> User:
        """Raises Invalid for a bad id, UserExists."""
        validate_id("user", user_id)
        user = new_user(user_id, self._clock())
        self._store.create_user(user)
        return user

    def get_user(self, user_id: str) -> User:
        return self._store.get_user(user_id)

    def list_users(self, prefix: str = "", after: str = "", amount: int = 100) -> Page[User]:
        return page_by_id(self._store.list_users, prefix, after, amount)

    def delete_user(self, user_id: str) -> None:
        """Deletes the user with its access keys, memberships and attached policies. Raises UserNotFound."""
        self._store.get_user(user_id)
        for credential in self._store.list_credentials(user_id):
            with contextlib.suppress(auth_errors.CredentialNotFound):
                self._store.delete_credential(credential.access_key_id)
        for group_id in self._store.list_user_groups(user_id):
            self._store.remove_group_member(group_id, user_id)
        user = Principal(PrincipalKind.USER, user_id)
        for policy_id in self._store.list_attached_policies(user):
            self._store.detach_policy(user, policy_id)
        self._on_change(user_id)
        self._store.delete_user(user_id)

    # groups

    def create_group(self, group_id: str, description: str = "") -> Group:
        """Raises Invalid for a bad id or description, GroupExists."""
        validate_id("group", group_id)
        if len(description) > _DESCRIPTION_MAX:
            raise errors.Invalid(f"group description must be at most {_DESCRIPTION_MAX} characters")
        group = Group(group_id, int(self._clock()), description)
        self._store.create_group(group)
        return group

    def get_group(self, group_id: str) -> Group:
        return self._store.get_group(group_id)

    def list_groups(self, prefix: str = "", after: str = "", amount: int = 100) -> Page[Group]:
        return page_by_id(self._store.list_groups, prefix, after, amount)

    def delete_group(self, group_id: str) -> None:
        """Deletes the group with its memberships and attached policies. Raises GroupNotFound."""
        self._store.get_group(group_id)
        for user_id in self._store.list_group_members(group_id):
            self._store.remove_group_member(group_id, user_id)
        group = Principal(PrincipalKind.GROUP, group_id)
        for policy_id in self._store.list_attached_policies(group):
            self._store.detach_policy(group, policy_id)
        self._on_change(None)
        self._store.delete_group(group_id)

    def add_member(self, group_id: str, user_id: str) -> None:
        """Raises GroupNotFound, UserNotFound."""
        self._store.get_group(group_id)
        self._store.get_user(user_id)
        self._store.add_group_member(group_id, user_id)
        self._on_change(None)

    def remove_member(self, group_id: str, user_id: str) -> None:
        """Raises GroupNotFound, or UserNotFound when the user is not a member."""
        self._store.get_group(group_id)
        if user_id not in self._store.list_group_members(group_id):
            raise auth_errors.UserNotFound(f"user {user_id} is not a member of group {group_id}")
        self._store.remove_group_member(group_id, user_id)
        self._on_change(None)

    def members(self, group_id: str, prefix: str = "", after: str = "", amount: int = 100) -> Page[User]:
        """The group's members (users deleted meanwhile are skipped). Raises GroupNotFound."""
        self._store.get_group(group_id)
        ids, page = _page_ids(self._store.list_group_members(group_id), prefix, after, amount)
        return Page(self._users(ids), page.has_more, page.next_offset)

    def groups_of(self, user_id: str, prefix: str = "", after: str = "", amount: int = 100) -> Page[Group]:
        """The groups the user belongs to. Raises UserNotFound."""
        self._store.get_user(user_id)
        ids, page = _page_ids(self._store.list_user_groups(user_id), prefix, after, amount)
        return Page(self._groups(ids), page.has_more, page.next_offset)

    # policies

    def create_policy(self, policy_id: str, statements: Sequence[Statement]) -> Policy:
        """Raises Invalid for a bad id or statement, PolicyExists."""
        policy = self._valid_policy(policy_id, statements)
        self._store.create_policy(policy)
        return policy

    def update_policy(self, policy_id: str, statements: Sequence[Statement]) -> Policy:
        """Replaces the statements, keeping the creation date. Raises Invalid, PolicyNotFound."""
        existing = self._store.get_policy(policy_id)
        policy = self._valid_policy(policy_id, statements, existing.creation_date)
        self._store.update_policy(policy)
        self._on_change(None)
        return policy

    def get_policy(self, policy_id: str) -> Policy:
        return self._store.get_policy(policy_id)

    def list_policies(self, prefix: str = "", after: str = "", amount: int = 100) -> Page[Policy]:
        return page_by_id(self._store.list_policies, prefix, after, amount)

    def delete_policy(self, policy_id: str) -> None:
        """Deletes the policy after detaching it from every user and group. Raises PolicyNotFound."""
        self._store.get_policy(policy_id)
        for principal in self._store.list_policy_principals(policy_id):
            self._store.detach_policy(principal, policy_id)
        self._on_change(None)
        self._store.delete_policy(policy_id)

    def attach(self, principal: Principal, policy_id: str) -> None:
        """Raises UserNotFound or GroupNotFound for the principal, PolicyNotFound."""
        self._check_principal(principal)
        self._store.get_policy(policy_id)
        self._store.attach_policy(principal, policy_id)
        self._on_change(None)

    def detach(self, principal: Principal, policy_id: str) -> None:
        """Raises UserNotFound or GroupNotFound, and PolicyNotFound when the policy is not attached."""
        self._check_principal(principal)
        if policy_id not in self._store.list_attached_policies(principal):
            raise PolicyNotFound(f"policy {policy_id} is not attached to {principal.kind} {principal.id}")
        self._store.detach_policy(principal, policy_id)
        self._on_change(None)

    def attached(self, principal: Principal, prefix: str = "", after: str = "", amount: int = 100) -> Page[Policy]:
        """The policies attached to the user or group. Raises UserNotFound or GroupNotFound."""
        self._check_principal(principal)
        ids, page = _page_ids(self._store.list_attached_policies(principal), prefix, after, amount)
        return Page(self._store.get_policies(ids), page.has_more, page.next_offset)

    def effective_policies(self, user_id: str) -> list[Policy]:
        """Every policy that applies to the user: attached to it or to one of its groups, sorted by id."""
        ids = set(self._store.list_attached_policies(Principal(PrincipalKind.USER, user_id)))
        for group_id in self._store.list_user_groups(user_id):
            ids.update(self._store.list_attached_policies(Principal(PrincipalKind.GROUP, group_id)))
        return self._store.get_policies(sorted(ids))

    # helpers

    def _valid_policy(self, policy_id: str, statements: Sequence[Statement], created: int | None = None) -> Policy:
        validate_id("policy", policy_id)
        if not statements or len(statements) > _STATEMENTS_MAX:
            raise errors.Invalid(f"a policy needs 1-{_STATEMENTS_MAX} statements")
        for statement in statements:
            policy_rules.validate_statement(statement)
        if _policy_bytes(statements) > _POLICY_MAX_BYTES:
            raise errors.Invalid(
                f"a policy holds at most {_POLICY_MAX_BYTES // 1024} KiB of actions, resources and conditions"
            )
        return Policy(policy_id, int(self._clock()) if created is None else created, tuple(statements))

    def _check_principal(self, principal: Principal) -> None:
        if principal.kind is PrincipalKind.USER:
            self._store.get_user(principal.id)
        else:
            self._store.get_group(principal.id)

    def _users(self, ids: list[str]) -> list[User]:
        found = []
        for user_id in ids:
            with contextlib.suppress(auth_errors.UserNotFound):
                found.append(self._store.get_user(user_id))
        return found

    def _groups(self, ids: list[str]) -> list[Group]:
        found = []
        for group_id in ids:
            with contextlib.suppress(GroupNotFound):
                found.append(self._store.get_group(group_id))
        return found
