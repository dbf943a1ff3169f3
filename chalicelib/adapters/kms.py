"""SecretCipher on AWS KMS: Encrypt and Decrypt under one symmetric key, with the context as encryption context.

The caller builds the boto3 KMS client (endpoint, region) and names the key (id, ARN or alias). Secrets are
a few dozen bytes, far below KMS's 4 KB plaintext limit, so no envelope (data key) is needed. Decrypt names
the key as well, so a ciphertext made under any other key is refused rather than decrypted with it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from botocore.client import BaseClient
from botocore.exceptions import BotoCoreError, ClientError

from chalicelib.auth.errors import DecryptionFailed
from chalicelib.graveler import errors

__all__ = ["KmsCipher"]

# What Decrypt answers for a ciphertext that is damaged, made under another key, or given another context.
# AccessDenied is among them: KMS (and moto) say so for a ciphertext of another key, and a key policy that
# conditions kms:Decrypt on the encryption context refuses a foreign context that way too.
_UNDECRYPTABLE = frozenset({"InvalidCiphertextException", "IncorrectKeyException", "AccessDeniedException"})


@contextmanager
def _kms_errors(operation: str) -> Iterator[None]:
    try:
        yield
    except ClientError as e:
        code = str(e.response.get("Error", {}).get("Code", ""))
        if operation == "Decrypt" and code in _UNDECRYPTABLE:
            raise DecryptionFailed(f"KMS {operation}: {code}") from e
        raise errors.StorageError(f"KMS {operation}: {code}") from e
    except BotoCoreError as e:
        raise errors.StorageError(f"KMS {operation}: {type(e).__name__}") from e


class KmsCipher:
    """The SecretCipher port on one KMS key."""

    def __init__(self, client: BaseClient, key_id: str) -> None:
        self._client = client
        self._key_id = key_id

    def encrypt(self, plaintext: bytes, context: Mapping[str, str]) -> bytes:
        if not plaintext:
            raise errors.Invalid("KMS encrypts 1 to 4096 bytes")
        with _kms_errors("Encrypt"):
            answer = self._client.encrypt(KeyId=self._key_id, Plaintext=plaintext, EncryptionContext=dict(context))
        return bytes(answer["CiphertextBlob"])

    def decrypt(self, ciphertext: bytes, context: Mapping[str, str]) -> bytes:
        with _kms_errors("Decrypt"):
            answer = self._client.decrypt(
                KeyId=self._key_id, CiphertextBlob=ciphertext, EncryptionContext=dict(context)
            )
        return bytes(answer["Plaintext"])


def create_local_key(client: BaseClient, description: str = "lakelet secrets (local)") -> str:
    """Creates a symmetric key (the local stack does, in moto) and returns its id."""
    with _kms_errors("CreateKey"):
        answer = client.create_key(Description=description, KeyUsage="ENCRYPT_DECRYPT")
    return str(answer["KeyMetadata"]["KeyId"])
