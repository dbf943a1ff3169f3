"""AuthStore on DynamoDB: everything auth keeps, in one table (pk, sk), listed by query, never by scan.

Rows:
- user:        pk "users",             sk "user#<user id>"      (one partition: a query lists users in id order)
- access key:  pk "cred#<key id>",     sk "cred"                (user_id, encrypted_secret, creation_date)
- key index:   pk "user#<user id>",    sk "cred#<key id>"       (keys only: which access keys a user has)
- group:       pk "groups",            sk "group#<group id>"    (creation_date, description)
- membership:  pk "group#<group id>",  sk "member#<user id>"    and its mirror
               pk "user#<user id>",    sk "group#<group id>"
- policy:      pk "policies",          sk "policy#<policy id>"  (creation_date, statements)
- attachment:  pk "<kind>#<id>",       sk "policy#<policy id>"  (kind user or group) and its mirror
               pk "policy#<policy id>", sk "<kind>#<id>"
- server key:  pk "serverkey#<name>",  sk "key"                 (sealed_key)
- revoked token: pk "revoked#<token id>", sk "token"          (expires_at: DynamoDB's TTL attribute)
- the usage report's installation id and monthly counters: usage.py

An access key and its index row are two writes (no transactions). The index row is written first and removed
last, and list_credentials keeps only index rows whose access key exists and belongs to the user, so a write
interrupted between the two never shows a key that does not exist, nor hides one that does.
A membership or an attachment and its mirror are written and removed in one transaction: both sides are
read (who is in a group, which groups a user is in), and they must never disagree about a permission.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from pynamodb.transactions import TransactWrite

from chalicelib.auth import errors as auth_errors
from chalicelib.auth.conditions import conditions_json, parse_conditions
from chalicelib.auth.errors import (
    GroupExists,
    GroupNotFound,
    PolicyExists,
    PolicyNotFound,
)
from chalicelib.auth.records import (
    Credential,
    Effect,
    Group,
    Policy,
    Principal,
    PrincipalKind,
    Statement,
    User,
)
from chalicelib.graveler import errors

from .models import AuthRow, model_set
from .tables import TableNames
from .translate import storage_errors, translated

_USERS_PK = "users"
_USER_SK = "user#"
_CREDENTIAL_PK = "cred#"
_CREDENTIAL_SK = "cred"
_USER_PK = "user#"
_INDEX_SK = "cred#"
_GROUPS_PK = "groups"
_GROUP_SK = "group#"
_GROUP_PK = "group#"
_MEMBER_SK = "member#"
_POLICIES_PK = "policies"
_POLICY_SK = "policy#"
_POLICY_PK = "policy#"
_SERVER_KEY_PK = "serverkey#"
_SERVER_KEY_SK = "key"
_REVOKED_PK = "revoked#"
_REVOKED_SK = "token"
_BATCH_GET_MAX = 100


def _credential_pk(access_key_id: str) -> str:
    return _CREDENTIAL_PK + access_key_id


def _user_pk(user_id: str) -> str:
    return _USER_PK + user_id


def _principal_key(principal: Principal) -> str:
    return f"{principal.kind.value}#{principal.id}"


def _principal(key: str) -> Principal:
    kind, _, principal_id = key.partition("#")
    return Principal(PrincipalKind(kind), principal_id)


class DynamoAuthStore:
    """The AuthStore port on the auth table."""

    def __init__(self, names: TableNames, region: str, endpoint_url: str | None = None) -> None:
        self._model = model_set(names, region, endpoint_url).auth

    # users

    def create_user(self, user: User) -> None:
        row = self._model(
            pk=_USERS_PK,
            sk=_USER_SK + user.id,
            user_id=user.id,
            creation_date=user.creation_date,
            generation=user.generation or None,
        )
        with storage_errors(on_condition_failed=lambda: auth_errors.UserExists(user.id)):
            row.save(condition=self._model.pk.does_not_exist())

    def get_user(self, user_id: str) -> User:
        with storage_errors(on_missing=lambda: auth_errors.UserNotFound(user_id)):
            row = self._model.get(_USERS_PK, _USER_SK + user_id, consistent_read=True)
        return _user(row)

    def list_users(self, after: str = "", limit: int = 1000) -> list[User]:
        return [_user(row) for row in self._list(_USERS_PK, _USER_SK, after, limit)]

    def delete_user(self, user_id: str) -> None:
        with storage_errors(on_condition_failed=lambda: auth_errors.UserNotFound(user_id)):
            self._model(pk=_USERS_PK, sk=_USER_SK + user_id).delete(condition=self._model.pk.exists())

    # access keys

    def create_credential(self, credential: Credential) -> None:
        akid = credential.access_key_id
        index = self._model(pk=_user_pk(credential.user_id), sk=_INDEX_SK + akid)
        row = self._model(
            pk=_credential_pk(akid),
            sk=_CREDENTIAL_SK,
            user_id=credential.user_id,
            encrypted_secret=credential.encrypted_secret,
            creation_date=credential.creation_date,
        )
        with storage_errors():
            index.save()
        try:
            with storage_errors(on_condition_failed=lambda: errors.AlreadyExists(akid)):
                row.save(condition=self._model.pk.does_not_exist())
        except errors.AlreadyExists:
            self._forget_stray_index(index, akid, credential.user_id)
            raise

    def _forget_stray_index(self, index: AuthRow, access_key_id: str, user_id: str) -> None:
        # The key id is taken. If another user holds it, the index row just written is wrong: take it back.
        # (list_credentials would skip it anyway; this keeps the user's partition clean.)
        try:
            owner = self.get_credential(access_key_id).user_id
        except auth_errors.CredentialNotFound:
            owner = ""  # deleted meanwhile: the row is stray as well
        if owner != user_id:
            with storage_errors():
                index.delete()

    def get_credential(self, access_key_id: str) -> Credential:
        with storage_errors(on_missing=lambda: auth_errors.CredentialNotFound(access_key_id)):
            row = self._model.get(_credential_pk(access_key_id), _CREDENTIAL_SK, consistent_read=True)
        return _credential(row)

    def list_credentials(self, user_id: str) -> list[Credential]:
        ids = self._suffixes(_user_pk(user_id), _INDEX_SK)
        rows = self._batch_get([(_credential_pk(akid), _CREDENTIAL_SK) for akid in ids])
        credentials = (_credential(row) for row in rows)
        return sorted((c for c in credentials if c.user_id == user_id), key=lambda c: c.access_key_id)

    def delete_credential(self, access_key_id: str) -> None:
        credential = self.get_credential(access_key_id)
        with storage_errors(on_condition_failed=lambda: auth_errors.CredentialNotFound(access_key_id)):
            self._model(pk=_credential_pk(access_key_id), sk=_CREDENTIAL_SK).delete(condition=self._model.pk.exists())
        with storage_errors():
            self._model(pk=_user_pk(credential.user_id), sk=_INDEX_SK + access_key_id).delete()

    # groups and memberships

    def create_group(self, group: Group) -> None:
        row = self._model(
            pk=_GROUPS_PK, sk=_GROUP_SK + group.id, creation_date=group.creation_date, description=group.description
        )
        with storage_errors(on_condition_failed=lambda: GroupExists(group.id)):
            row.save(condition=self._model.pk.does_not_exist())

    def get_group(self, group_id: str) -> Group:
        with storage_errors(on_missing=lambda: GroupNotFound(group_id)):
            row = self._model.get(_GROUPS_PK, _GROUP_SK + group_id, consistent_read=True)
        return _group(row)

    def list_groups(self, after: str = "", limit: int = 1000) -> list[Group]:
        return [_group(row) for row in self._list(_GROUPS_PK, _GROUP_SK, after, limit)]

    def delete_group(self, group_id: str) -> None:
        with storage_errors(on_condition_failed=lambda: GroupNotFound(group_id)):
            self._model(pk=_GROUPS_PK, sk=_GROUP_SK + group_id).delete(condition=self._model.pk.exists())

    def add_group_member(self, group_id: str, user_id: str) -> None:
        self._link(
            self._model(pk=_GROUP_PK + group_id, sk=_MEMBER_SK + user_id),
            self._model(pk=_user_pk(user_id), sk=_GROUP_SK + group_id),
        )

    def remove_group_member(self, group_id: str, user_id: str) -> None:
        self._unlink(
            self._model(pk=_GROUP_PK + group_id, sk=_MEMBER_SK + user_id),
            self._model(pk=_user_pk(user_id), sk=_GROUP_SK + group_id),
        )

    def list_group_members(self, group_id: str) -> list[str]:
        return self._suffixes(_GROUP_PK + group_id, _MEMBER_SK)

    def list_user_groups(self, user_id: str) -> list[str]:
        return self._suffixes(_user_pk(user_id), _GROUP_SK)

    # policies and attachments

    def create_policy(self, policy: Policy) -> None:
        with storage_errors(on_condition_failed=lambda: PolicyExists(policy.id)):
            self._policy_row(policy).save(condition=self._model.pk.does_not_exist())

    def update_policy(self, policy: Policy) -> None:
        with storage_errors(on_condition_failed=lambda: PolicyNotFound(policy.id)):
            self._policy_row(policy).save(condition=self._model.pk.exists())

    def get_policy(self, policy_id: str) -> Policy:
        with storage_errors(on_missing=lambda: PolicyNotFound(policy_id)):
            row = self._model.get(_POLICIES_PK, _POLICY_SK + policy_id, consistent_read=True)
        return _policy(row)

    def get_policies(self, policy_ids: list[str]) -> list[Policy]:
        rows = self._batch_get([(_POLICIES_PK, _POLICY_SK + p) for p in sorted(set(policy_ids))])
        return sorted((_policy(row) for row in rows), key=lambda p: p.id)

    def list_policies(self, after: str = "", limit: int = 1000) -> list[Policy]:
        return [_policy(row) for row in self._list(_POLICIES_PK, _POLICY_SK, after, limit)]

    def delete_policy(self, policy_id: str) -> None:
        with storage_errors(on_condition_failed=lambda: PolicyNotFound(policy_id)):
            self._model(pk=_POLICIES_PK, sk=_POLICY_SK + policy_id).delete(condition=self._model.pk.exists())

    def attach_policy(self, principal: Principal, policy_id: str) -> None:
        self._link(*self._attachment_rows(principal, policy_id))

    def detach_policy(self, principal: Principal, policy_id: str) -> None:
        self._unlink(*self._attachment_rows(principal, policy_id))

    def list_attached_policies(self, principal: Principal) -> list[str]:
        return self._suffixes(_principal_key(principal), _POLICY_SK)

    def list_policy_principals(self, policy_id: str) -> list[Principal]:
        with storage_errors():
            rows = list(self._model.query(_POLICY_PK + policy_id, consistent_read=True))
        return sorted((_principal(row.sk) for row in rows), key=lambda p: (p.kind, p.id))

    # server keys

    def create_server_key(self, name: str, sealed: str) -> None:
        row = self._model(pk=_SERVER_KEY_PK + name, sk=_SERVER_KEY_SK, sealed_key=sealed)
        with storage_errors(on_condition_failed=lambda: errors.AlreadyExists(f"server key {name}")):
            row.save(condition=self._model.pk.does_not_exist())

    def get_server_key(self, name: str) -> str:
        with storage_errors(on_missing=lambda: errors.NotFound(f"server key {name}")):
            row = self._model.get(_SERVER_KEY_PK + name, _SERVER_KEY_SK, consistent_read=True)
        return row.sealed_key or ""

    def revoke_token(self, token_id: str, expires: int) -> None:
        row = self._model(pk=_REVOKED_PK + token_id, sk=_REVOKED_SK, expires_at=datetime.fromtimestamp(expires, tz=UTC))
        with storage_errors():
            row.save()

    def is_token_revoked(self, token_id: str) -> bool:
        # Strongly consistent: the logout may have been written by another container a moment ago.
        with storage_errors():
            rows = list(
                self._model.query(
                    _REVOKED_PK + token_id,
                    self._model.sk == _REVOKED_SK,
                    consistent_read=True,
                    attributes_to_get=["pk"],
                )
            )
        return bool(rows)

    # helpers

    def _list(self, pk: str, sk_prefix: str, after: str, limit: int) -> list[AuthRow]:
        # Every sk of the partition starts with the prefix, so sk > prefix + after is exactly "id > after".
        with storage_errors():
            rows = self._model.query(
                pk,
                range_key_condition=self._model.sk > sk_prefix + after,
                consistent_read=True,
                limit=limit,
                page_size=limit,
            )
            return list(rows)

    def _suffixes(self, pk: str, sk_prefix: str) -> list[str]:
        """The ids after ``sk_prefix`` of the partition's rows with that prefix, in order."""
        with storage_errors():
            rows = self._model.query(
                pk,
                range_key_condition=self._model.sk.startswith(sk_prefix),
                consistent_read=True,
                attributes_to_get=["pk", "sk"],
            )
            return [row.sk.removeprefix(sk_prefix) for row in rows]

    def _batch_get(self, keys: list[tuple[str, str]]) -> Iterable[AuthRow]:
        found: list[AuthRow] = []
        for start in range(0, len(keys), _BATCH_GET_MAX):
            with storage_errors():
                rows = self._model.batch_get(keys[start : start + _BATCH_GET_MAX], consistent_read=True)
            found.extend(translated(rows))
        return found

    def _link(self, row: AuthRow, mirror: AuthRow) -> None:
        with storage_errors(), TransactWrite(connection=self._connection()) as transaction:
            transaction.save(row)
            transaction.save(mirror)

    def _unlink(self, row: AuthRow, mirror: AuthRow) -> None:
        with storage_errors(), TransactWrite(connection=self._connection()) as transaction:
            transaction.delete(row)
            transaction.delete(mirror)

    def _connection(self) -> Any:
        return self._model._get_connection().connection

    def _attachment_rows(self, principal: Principal, policy_id: str) -> tuple[AuthRow, AuthRow]:
        return (
            self._model(pk=_principal_key(principal), sk=_POLICY_SK + policy_id),
            self._model(pk=_POLICY_PK + policy_id, sk=_principal_key(principal)),
        )

    def _policy_row(self, policy: Policy) -> AuthRow:
        return self._model(
            pk=_POLICIES_PK,
            sk=_POLICY_SK + policy.id,
            creation_date=policy.creation_date,
            statements=[statement_json(s) for s in policy.statements],
        )


def statement_json(statement: Statement) -> dict[str, Any]:
    shaped: dict[str, Any] = {
        "effect": statement.effect.value,
        "action": list(statement.actions),
        "resource": statement.resource,
    }
    if statement.conditions:
        shaped["condition"] = conditions_json(statement.conditions)
    return shaped


def _user(row: AuthRow) -> User:
    return User(
        id=row.sk.removeprefix(_USER_SK), creation_date=int(row.creation_date or 0), generation=row.generation or ""
    )


def _credential(row: AuthRow) -> Credential:
    return Credential(
        access_key_id=row.pk.removeprefix(_CREDENTIAL_PK),
        encrypted_secret=row.encrypted_secret or "",
        user_id=row.user_id or "",
        creation_date=int(row.creation_date or 0),
    )


def _group(row: AuthRow) -> Group:
    return Group(
        id=row.sk.removeprefix(_GROUP_SK), creation_date=int(row.creation_date or 0), description=row.description or ""
    )


def _policy(row: AuthRow) -> Policy:
    statements = tuple(
        Statement(
            Effect(item["effect"]),
            tuple(item["action"]),
            item["resource"],
            parse_conditions(item.get("condition"), "stored statement"),
        )
        for item in row.statements or []
    )
    return Policy(id=row.sk.removeprefix(_POLICY_SK), creation_date=int(row.creation_date or 0), statements=statements)
