"""AuthStore on DynamoDB: users and access keys in one table (pk, sk), listed by query, never by scan.

Rows:
- user:       pk "users",            sk "user#<user id>"  (one partition: a query lists users in id order)
- access key: pk "cred#<key id>",    sk "cred"            (user_id, secret_hash, creation_date)
- key index:  pk "user#<user id>",   sk "cred#<key id>"   (keys only: which access keys a user has)

An access key and its index row are two writes (no transactions). The index row is written first and removed
last, and list_credentials keeps only index rows whose access key exists and belongs to the user, so a write
interrupted between the two never shows a key that does not exist, nor hides one that does.
"""

from __future__ import annotations

from chalicelib.auth.records import Credential, User
from chalicelib.graveler import errors

from .models import AuthRow, model_set
from .tables import TableNames
from .translate import storage_errors, translated

_USERS_PK = "users"
_USER_SK = "user#"
_CREDENTIAL_PK = "cred#"
_CREDENTIAL_SK = "cred"
_INDEX_PK = "user#"
_INDEX_SK = "cred#"


def _credential_pk(access_key_id: str) -> str:
    return _CREDENTIAL_PK + access_key_id


def _index_pk(user_id: str) -> str:
    return _INDEX_PK + user_id


class DynamoAuthStore:
    """The AuthStore port on the auth table."""

    def __init__(self, names: TableNames, region: str, endpoint_url: str | None = None) -> None:
        self._model = model_set(names, region, endpoint_url).auth

    # users

    def create_user(self, user: User) -> None:
        row = self._model(pk=_USERS_PK, sk=_USER_SK + user.id, user_id=user.id, creation_date=user.creation_date)
        with storage_errors(on_condition_failed=lambda: errors.UserExists(user.id)):
            row.save(condition=self._model.pk.does_not_exist())

    def get_user(self, user_id: str) -> User:
        with storage_errors(on_missing=lambda: errors.UserNotFound(user_id)):
            row = self._model.get(_USERS_PK, _USER_SK + user_id, consistent_read=True)
        return _user(row)

    def list_users(self, after: str = "", limit: int = 1000) -> list[User]:
        # Every user sk starts with "user#", so sk > "user#" + after is exactly "id > after".
        with storage_errors():
            rows = self._model.query(
                _USERS_PK,
                range_key_condition=self._model.sk > _USER_SK + after,
                consistent_read=True,
                limit=limit,
                page_size=limit,
            )
            return [_user(row) for row in rows]

    # access keys

    def create_credential(self, credential: Credential) -> None:
        akid = credential.access_key_id
        index = self._model(pk=_index_pk(credential.user_id), sk=_INDEX_SK + akid)
        row = self._model(
            pk=_credential_pk(akid),
            sk=_CREDENTIAL_SK,
            user_id=credential.user_id,
            secret_hash=credential.secret_hash,
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
        except errors.CredentialNotFound:
            owner = ""  # deleted meanwhile: the row is stray as well
        if owner != user_id:
            with storage_errors():
                index.delete()

    def get_credential(self, access_key_id: str) -> Credential:
        with storage_errors(on_missing=lambda: errors.CredentialNotFound(access_key_id)):
            row = self._model.get(_credential_pk(access_key_id), _CREDENTIAL_SK, consistent_read=True)
        return _credential(row)

    def list_credentials(self, user_id: str) -> list[Credential]:
        with storage_errors():
            index = self._model.query(
                _index_pk(user_id),
                range_key_condition=self._model.sk.startswith(_INDEX_SK),
                consistent_read=True,
            )
            keys = [(_credential_pk(row.sk.removeprefix(_INDEX_SK)), _CREDENTIAL_SK) for row in index]
        if not keys:
            return []
        with storage_errors():
            rows = self._model.batch_get(keys, consistent_read=True)
        credentials = (_credential(row) for row in translated(rows))
        return sorted((c for c in credentials if c.user_id == user_id), key=lambda c: c.access_key_id)

    def delete_credential(self, access_key_id: str) -> None:
        credential = self.get_credential(access_key_id)
        with storage_errors(on_condition_failed=lambda: errors.CredentialNotFound(access_key_id)):
            self._model(pk=_credential_pk(access_key_id), sk=_CREDENTIAL_SK).delete(
                condition=self._model.pk.exists()
            )
        with storage_errors():
            self._model(pk=_index_pk(credential.user_id), sk=_INDEX_SK + access_key_id).delete()


def _user(row: AuthRow) -> User:
    return User(id=row.sk.removeprefix(_USER_SK), creation_date=int(row.creation_date or 0))


def _credential(row: AuthRow) -> Credential:
    return Credential(
        access_key_id=row.pk.removeprefix(_CREDENTIAL_PK),
        secret_hash=row.secret_hash or "",
        user_id=row.user_id or "",
        creation_date=int(row.creation_date or 0),
    )

