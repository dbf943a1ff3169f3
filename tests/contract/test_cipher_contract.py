"""SecretCipher contract: the in-memory twin and KmsCipher (on moto's KMS) behave the same, and the sealed form
of an access key secret is bound to its key id."""

from __future__ import annotations

from collections.abc import Iterator

import boto3
import pytest
from botocore.exceptions import EndpointConnectionError

from chalicelib.adapters.kms import KmsCipher, create_local_key
from chalicelib.adapters.memory import MemoryCipher
from chalicelib.auth import secrets as sealed
from chalicelib.auth.errors import DecryptionFailed
from chalicelib.auth.ports import SecretCipher
from chalicelib.graveler import errors

from .conftest import REGION, Moto

CONTEXT = {"purpose": "test", "access_key_id": "AKIAEXAMPLE"}


@pytest.fixture
def cipher(moto: Moto | None) -> SecretCipher:
    if moto is None:
        return MemoryCipher()
    client = boto3.client("kms", region_name=REGION)
    return KmsCipher(client, create_local_key(client))


@pytest.fixture
def other_cipher(moto: Moto | None) -> Iterator[SecretCipher]:
    """A cipher with another key (another KMS key, or another twin)."""
    if moto is None:
        yield MemoryCipher()
        return
    client = boto3.client("kms", region_name=REGION)
    yield KmsCipher(client, create_local_key(client, "another key"))


@pytest.mark.parametrize("plaintext", [b"x", b"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", bytes(range(256)) * 4])
def test_round_trip(cipher: SecretCipher, plaintext: bytes) -> None:
    ciphertext = cipher.encrypt(plaintext, CONTEXT)
    if len(plaintext) >= 16:  # a short run of bytes may turn up in any ciphertext by chance
        assert plaintext not in ciphertext
    assert cipher.decrypt(ciphertext, CONTEXT) == plaintext
    assert cipher.decrypt(ciphertext, dict(reversed(list(CONTEXT.items())))) == plaintext  # order is irrelevant


def test_empty_plaintext_is_invalid(cipher: SecretCipher) -> None:
    with pytest.raises(errors.Invalid):
        cipher.encrypt(b"", CONTEXT)


def test_encryption_is_randomized(cipher: SecretCipher) -> None:
    assert cipher.encrypt(b"same secret", CONTEXT) != cipher.encrypt(b"same secret", CONTEXT)


def test_another_context_does_not_decrypt(cipher: SecretCipher) -> None:
    ciphertext = cipher.encrypt(b"secret", CONTEXT)
    for context in ({**CONTEXT, "access_key_id": "AKIAOTHER"}, {"purpose": "test"}, {**CONTEXT, "extra": "x"}):
        with pytest.raises(DecryptionFailed):
            cipher.decrypt(ciphertext, context)


def test_tampered_ciphertext_does_not_decrypt(cipher: SecretCipher) -> None:
    ciphertext = bytearray(cipher.encrypt(b"secret value", CONTEXT))
    ciphertext[-1] ^= 0x01
    with pytest.raises(DecryptionFailed):
        cipher.decrypt(bytes(ciphertext), CONTEXT)
    with pytest.raises(DecryptionFailed):
        cipher.decrypt(b"\x00" * 8, CONTEXT)


def test_another_key_does_not_decrypt(cipher: SecretCipher, other_cipher: SecretCipher) -> None:
    with pytest.raises(DecryptionFailed):
        other_cipher.decrypt(cipher.encrypt(b"secret", CONTEXT), CONTEXT)


def test_sealed_secret_is_bound_to_its_access_key(cipher: SecretCipher) -> None:
    stored = sealed.seal(cipher, "AKIAONE", "the-secret-of-one")
    assert "the-secret-of-one" not in stored
    assert sealed.unseal(cipher, "AKIAONE", stored) == "the-secret-of-one"
    with pytest.raises(DecryptionFailed):
        sealed.unseal(cipher, "AKIATWO", stored)
    for garbage in ("", "not base64!", "AAAA"):
        with pytest.raises(DecryptionFailed):
            sealed.unseal(cipher, "AKIAONE", garbage)


def test_unreachable_kms_is_a_storage_error(fake_aws_env: None) -> None:
    client = boto3.client("kms", region_name=REGION, endpoint_url="http://127.0.0.1:9")
    client.meta.events.register("before-send", _refuse)
    with pytest.raises(errors.StorageError):
        KmsCipher(client, "some-key").encrypt(b"x", CONTEXT)


def _refuse(**_: object) -> None:
    raise EndpointConnectionError(endpoint_url="http://127.0.0.1:9")
