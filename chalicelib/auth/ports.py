"""The port auth reaches its store through."""

from __future__ import annotations

from typing import Protocol

from .records import Credential, User


class AuthStore(Protocol):
    """Users and their access keys. Creations are put-if-absent."""

    def create_user(self, user: User) -> None:
        """Stores a new user. Raises UserExists."""
        ...

    def get_user(self, user_id: str) -> User:
        """The user. Raises UserNotFound."""
        ...

    def list_users(self, after: str = "", limit: int = 1000) -> list[User]:
        """Up to ``limit`` users with id > ``after``, sorted by id."""
        ...

    def create_credential(self, credential: Credential) -> None:
        """Stores a new access key. Raises AlreadyExists if the access key id is taken."""
        ...

    def get_credential(self, access_key_id: str) -> Credential:
        """The access key. Raises CredentialNotFound."""
        ...

    def list_credentials(self, user_id: str) -> list[Credential]:
        """Every access key of the user, sorted by access key id."""
        ...

    def delete_credential(self, access_key_id: str) -> None:
        """Deletes the access key. Raises CredentialNotFound."""
        ...
