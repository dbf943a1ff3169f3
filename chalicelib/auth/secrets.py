"""How a secret access key is kept at rest: encrypted by the SecretCipher, bound to its access key id.

The stored form is the base64 of the cipher's ciphertext. The encryption context names the purpose and the
access key id, so a ciphertext copied onto another key's row (or used for anything else) does not decrypt.
On AWS the cipher is KMS: the table alone reveals nothing, and reading a secret takes kms:Decrypt with this
context, which the key policy can grant to the API and gateway roles only.
"""

from __future__ import annotations

import base64
import binascii

from .errors import DecryptionFailed
from .ports import SecretCipher

PURPOSE = "lakelet:access-key-secret"


def _context(access_key_id: str) -> dict[str, str]:
    return {"purpose": PURPOSE, "access_key_id": access_key_id}


def b64(ciphertext: bytes) -> str:
    return base64.b64encode(ciphertext).decode("ascii")


def unb64(stored: str, what: str) -> bytes:
    """The ciphertext of a stored value. Raises DecryptionFailed for an empty or malformed one."""
    try:
        ciphertext = base64.b64decode(stored, validate=True)
    except (binascii.Error, ValueError):
        raise DecryptionFailed(f"stored {what} is not base64") from None
    if not ciphertext:
        raise DecryptionFailed(f"no stored {what}")
    return ciphertext


def seal(cipher: SecretCipher, access_key_id: str, secret: str) -> str:
    """The stored form of ``secret``. Raises StorageError when the cipher is unreachable."""
    return b64(cipher.encrypt(secret.encode("utf-8"), _context(access_key_id)))


def unseal(cipher: SecretCipher, access_key_id: str, sealed: str) -> str:
    """The secret in clear. Raises DecryptionFailed for anything that is not this key's sealed secret."""
    ciphertext = unb64(sealed, f"secret of {access_key_id}")
    try:
        return cipher.decrypt(ciphertext, _context(access_key_id)).decode("utf-8")
    except UnicodeDecodeError:
        raise DecryptionFailed(f"stored secret of {access_key_id} is not text") from None
