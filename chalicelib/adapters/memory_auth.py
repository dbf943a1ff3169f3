"""The AuthStore twin: users, credentials, groups, policies, server keys and revoked login tokens in dicts, the
behaviour the contract suite holds the DynamoDB auth store to."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from chalicelib.auth import errors as auth_errors
from chalicelib.auth.errors import GroupExists, GroupNotFound, PolicyExists, PolicyNotFound
from chalicelib.auth.records import Credential, Group, Policy, Principal, User
from chalicelib.graveler import errors

from .memory_pages import page

__all__ = ["MemoryAuthStore"]


class MemoryAuthStore:
    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._lock = threading.Lock()
        self._users: dict[str, User] = {}
        self._credentials: dict[str, Credential] = {}
        self._groups: dict[str, Group] = {}
        self._members: set[tuple[str, str]] = set()  # (group id, user id)
        self._policies: dict[str, Policy] = {}
        self._attached: set[tuple[Principal, str]] = set()  # (principal, policy id)
        self._server_keys: dict[str, str] = {}
        self._revoked: dict[str, int] = {}  # login token id -> its expiry
        self._clock = clock

    def create_user(self, user: User) -> None:
        with self._lock:
            if user.id in self._users:
                raise auth_errors.UserExists(user.id)
            self._users[user.id] = user

    def get_user(self, user_id: str) -> User:
        try:
            return self._users[user_id]
        except KeyError:
            raise auth_errors.UserNotFound(user_id) from None

    def list_users(self, after: str = "", limit: int = 1000) -> list[User]:
        return page(self._users, after, limit)  # type: ignore[arg-type]

    def delete_user(self, user_id: str) -> None:
        with self._lock:
            if self._users.pop(user_id, None) is None:
                raise auth_errors.UserNotFound(user_id)

    def create_credential(self, credential: Credential) -> None:
        with self._lock:
            if credential.access_key_id in self._credentials:
                raise errors.AlreadyExists(credential.access_key_id)
            self._credentials[credential.access_key_id] = credential

    def get_credential(self, access_key_id: str) -> Credential:
        try:
            return self._credentials[access_key_id]
        except KeyError:
            raise auth_errors.CredentialNotFound(access_key_id) from None

    def list_credentials(self, user_id: str) -> list[Credential]:
        return sorted((c for c in self._credentials.values() if c.user_id == user_id), key=lambda c: c.access_key_id)

    def delete_credential(self, access_key_id: str) -> None:
        with self._lock:
            if self._credentials.pop(access_key_id, None) is None:
                raise auth_errors.CredentialNotFound(access_key_id)

    def create_group(self, group: Group) -> None:
        with self._lock:
            if group.id in self._groups:
                raise GroupExists(group.id)
            self._groups[group.id] = group

    def get_group(self, group_id: str) -> Group:
        try:
            return self._groups[group_id]
        except KeyError:
            raise GroupNotFound(group_id) from None

    def list_groups(self, after: str = "", limit: int = 1000) -> list[Group]:
        return page(self._groups, after, limit)  # type: ignore[arg-type]

    def delete_group(self, group_id: str) -> None:
        with self._lock:
            if self._groups.pop(group_id, None) is None:
                raise GroupNotFound(group_id)

    def add_group_member(self, group_id: str, user_id: str) -> None:
        with self._lock:
            self._members.add((group_id, user_id))

    def remove_group_member(self, group_id: str, user_id: str) -> None:
        with self._lock:
            self._members.discard((group_id, user_id))

    def list_group_members(self, group_id: str) -> list[str]:
        return sorted(user for group, user in set(self._members) if group == group_id)

    def list_user_groups(self, user_id: str) -> list[str]:
        return sorted(group for group, user in set(self._members) if user == user_id)

    def create_policy(self, policy: Policy) -> None:
        with self._lock:
            if policy.id in self._policies:
                raise PolicyExists(policy.id)
            self._policies[policy.id] = policy

    def update_policy(self, policy: Policy) -> None:
        with self._lock:
            if policy.id not in self._policies:
                raise PolicyNotFound(policy.id)
            self._policies[policy.id] = policy

    def get_policy(self, policy_id: str) -> Policy:
        try:
            return self._policies[policy_id]
        except KeyError:
            raise PolicyNotFound(policy_id) from None

    def get_policies(self, policy_ids: list[str]) -> list[Policy]:
        return [self._policies[p] for p in sorted(set(policy_ids)) if p in self._policies]

    def list_policies(self, after: str = "", limit: int = 1000) -> list[Policy]:
        return page(self._policies, after, limit)  # type: ignore[arg-type]

    def delete_policy(self, policy_id: str) -> None:
        with self._lock:
            if self._policies.pop(policy_id, None) is None:
                raise PolicyNotFound(policy_id)

    def attach_policy(self, principal: Principal, policy_id: str) -> None:
        with self._lock:
            self._attached.add((principal, policy_id))

    def detach_policy(self, principal: Principal, policy_id: str) -> None:
        with self._lock:
            self._attached.discard((principal, policy_id))

    def list_attached_policies(self, principal: Principal) -> list[str]:
        return sorted(policy for who, policy in set(self._attached) if who == principal)

    def list_policy_principals(self, policy_id: str) -> list[Principal]:
        return sorted((who for who, policy in set(self._attached) if policy == policy_id), key=lambda p: (p.kind, p.id))

    def create_server_key(self, name: str, sealed: str) -> None:
        with self._lock:
            if name in self._server_keys:
                raise errors.AlreadyExists(f"server key {name}")
            self._server_keys[name] = sealed

    def get_server_key(self, name: str) -> str:
        try:
            return self._server_keys[name]
        except KeyError:
            raise errors.NotFound(f"server key {name}") from None

    def revoke_token(self, token_id: str, expires: int) -> None:
        with self._lock:
            # Expired revocations go as DynamoDB's TTL drops them, so the twin stays as small as the table.
            now = self._clock()
            self._revoked = {t: e for t, e in self._revoked.items() if e > now}
            self._revoked[token_id] = max(expires, self._revoked.get(token_id, expires))

    def is_token_revoked(self, token_id: str) -> bool:
        return token_id in self._revoked
