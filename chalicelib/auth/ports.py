"""The ports of auth: its store (users, keys, groups, policies, server keys, revoked login tokens), the cipher
of secrets at rest, and the SigV4 arithmetic that checks what a user signed with a secret key."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from .records import Credential, Group, Policy, Principal, User

__all__ = [
    "AuthStore",
    "CredentialStore",
    "GroupStore",
    "PolicyStore",
    "RevokedTokens",
    "SecretCipher",
    "ServerKeyStore",
    "Signer",
    "UserStore",
]


class UserStore(Protocol):
    """The users. Creation is put-if-absent; deleting a user removes only its own record (the service removes
    its keys, memberships and attachments first)."""

    def create_user(self, user: User) -> None:
        """Stores a new user. Raises UserExists."""
        ...

    def get_user(self, user_id: str) -> User:
        """The user. Raises UserNotFound."""
        ...

    def list_users(self, after: str = "", limit: int = 1000) -> list[User]:
        """Up to ``limit`` users with id > ``after``, sorted by id."""
        ...

    def delete_user(self, user_id: str) -> None:
        """Deletes the user record. Raises UserNotFound."""
        ...


class CredentialStore(Protocol):
    """The users' access keys (their secrets sealed by the SecretCipher). Creation is put-if-absent."""

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


class GroupStore(Protocol):
    """The groups and their members. Creation is put-if-absent; memberships are sets: adding twice or removing
    what is not there changes nothing. Deleting a group removes only its own record."""

    def create_group(self, group: Group) -> None:
        """Stores a new group. Raises GroupExists."""
        ...

    def get_group(self, group_id: str) -> Group:
        """The group. Raises GroupNotFound."""
        ...

    def list_groups(self, after: str = "", limit: int = 1000) -> list[Group]:
        """Up to ``limit`` groups with id > ``after``, sorted by id."""
        ...

    def delete_group(self, group_id: str) -> None:
        """Deletes the group record. Raises GroupNotFound."""
        ...

    def add_group_member(self, group_id: str, user_id: str) -> None:
        """Makes the user a member of the group (both must exist; the caller checks)."""
        ...

    def remove_group_member(self, group_id: str, user_id: str) -> None:
        """Ends the membership, if any."""
        ...

    def list_group_members(self, group_id: str) -> list[str]:
        """The ids of the group's members, sorted."""
        ...

    def list_user_groups(self, user_id: str) -> list[str]:
        """The ids of the groups the user belongs to, sorted."""
        ...


class PolicyStore(Protocol):
    """The policies and their attachments to users and groups. Creation is put-if-absent; attachments are sets.
    Deleting a policy removes only its own record (the service detaches it first)."""

    def create_policy(self, policy: Policy) -> None:
        """Stores a new policy. Raises PolicyExists."""
        ...

    def update_policy(self, policy: Policy) -> None:
        """Replaces an existing policy. Raises PolicyNotFound."""
        ...

    def get_policy(self, policy_id: str) -> Policy:
        """The policy. Raises PolicyNotFound."""
        ...

    def get_policies(self, policy_ids: list[str]) -> list[Policy]:
        """The policies that exist among ``policy_ids``, sorted by id (missing ones are skipped)."""
        ...

    def list_policies(self, after: str = "", limit: int = 1000) -> list[Policy]:
        """Up to ``limit`` policies with id > ``after``, sorted by id."""
        ...

    def delete_policy(self, policy_id: str) -> None:
        """Deletes the policy record. Raises PolicyNotFound."""
        ...

    def attach_policy(self, principal: Principal, policy_id: str) -> None:
        """Attaches the policy to the user or group."""
        ...

    def detach_policy(self, principal: Principal, policy_id: str) -> None:
        """Detaches the policy, if attached."""
        ...

    def list_attached_policies(self, principal: Principal) -> list[str]:
        """The ids of the policies attached to the user or group, sorted."""
        ...

    def list_policy_principals(self, policy_id: str) -> list[Principal]:
        """Every user and group the policy is attached to, sorted by (kind, id)."""
        ...


class ServerKeyStore(Protocol):
    """The server's own keys, sealed (auth/keys.py): written once, read back on every cold start."""

    def create_server_key(self, name: str, sealed: str) -> None:
        """Stores a sealed server key (see auth/keys.py). Raises AlreadyExists."""
        ...

    def get_server_key(self, name: str) -> str:
        """The sealed server key. Raises NotFound."""
        ...


class RevokedTokens(Protocol):
    """The ids of revoked login tokens, until those tokens expire."""

    def revoke_token(self, token_id: str, expires: int) -> None:
        """Records that the login token ``token_id`` is revoked. ``expires`` is the token's own expiry (Unix
        seconds): past it the token is refused anyway, so the record may disappear then. Idempotent."""
        ...

    def is_token_revoked(self, token_id: str) -> bool:
        """True once revoke_token was called for ``token_id``, through any store on the same data (a strongly
        consistent read: a logout is seen by the very next request, in any container). May answer False once
        the token has expired."""
        ...


class AuthStore(UserStore, CredentialStore, GroupStore, PolicyStore, ServerKeyStore, RevokedTokens, Protocol):
    """Everything auth keeps, in one store: users, access keys, groups, memberships, policies and their
    attachments, sealed server keys, and the ids of revoked login tokens until those tokens expire.

    Creations are put-if-absent. Memberships and attachments are sets: adding twice or removing what is not
    there changes nothing. Deleting a user, group or policy removes only its own record; the service removes
    what refers to it first. One adapter implements it all (one DynamoDB table, one in-memory twin); code that
    needs one concern asks for that part alone (auth/keys.py takes a ServerKeyStore).
    """


class SecretCipher(Protocol):
    """Encryption at rest of secrets the service must read back in clear (SigV4 needs the user's secret).

    AWS: KMS Encrypt/Decrypt under one key (adapters/kms.py); tests: an in-memory twin. ``context`` is
    authenticated, not secret: a ciphertext decrypts only with the context it was encrypted with.
    """

    def encrypt(self, plaintext: bytes, context: Mapping[str, str]) -> bytes:
        """The ciphertext of ``plaintext`` (1 to 4096 bytes, else Invalid) bound to ``context``.

        Raises StorageError when the cipher is unreachable."""
        ...

    def decrypt(self, ciphertext: bytes, context: Mapping[str, str]) -> bytes:
        """The plaintext. Raises DecryptionFailed for a tampered ciphertext or another context, StorageError
        when the cipher is unreachable."""
        ...


class Signer(Protocol):
    """SigV4 arithmetic, for verifying what S3 clients signed with a user's secret key (the S3 gateway,
    chalicelib/s3proxy/sigv4.py, decides the policy around it; chalicelib/adapters/sigv4.py binds it to botocore).
    Every value is already canonical except where said; the signer only assembles and hashes."""

    def canonical_request(
        self,
        method: str,
        canonical_uri: str,
        query: Sequence[tuple[str, str]],
        headers: Sequence[tuple[str, str]],
        payload_hash: str,
    ) -> str:
        """The canonical request. ``query`` is decoded (the signer encodes and sorts it); ``headers`` are the
        signed headers only, lower-case names, raw values (the signer trims them)."""
        ...

    def string_to_sign(self, canonical_request: str, amz_date: str, region: str, service: str) -> str:
        """``AWS4-HMAC-SHA256\\n<date>\\n<scope>\\n<sha256(canonical request)>``."""
        ...

    def signature(self, secret: str, amz_date: str, region: str, service: str, string_to_sign: str) -> str:
        """Hex HMAC-SHA256 of ``string_to_sign`` under the key derived from the secret and the scope."""
        ...
