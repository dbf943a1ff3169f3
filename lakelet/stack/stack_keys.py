"""The local stack's own keys, kept in ``<data dir>/stack-keys.json`` (0600, like everything in that directory).

Two things live there, both for the stack alone:

- the key pair its AWS stand-in trusts (lakelet/stack/moto_guard.py). It is generated on the first start and is
  not the admin's lakeFS key: deleting or rotating the admin key (even the published sample key
  AKIAIOSFOLKFSSAMPLES) leaves no way into moto's S3, DynamoDB or KMS with it. An ephemeral stack generates one
  per run and keeps it in memory.
- the admin access key ids the stack has created. A key that the stack created and that is gone was deleted by
  an admin: the next start does not create it again (``lakelet local`` says so, and how to get another).

Format: ``{"format": 1, "aws": {"access_key_id": "...", "secret_access_key": "..."}, "admin_keys": ["..."]}``.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from lakelet.persistence.datadir import DataDirError, write_atomically

KEYS_FILE = "stack-keys.json"
_FORMAT = 1
_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"


@dataclass(frozen=True, slots=True)
class StackKeys:
    """The AWS stand-in's key pair, and the admin key ids the stack created in this data directory."""

    aws_access_key_id: str
    aws_secret_access_key: str
    admin_keys: frozenset[str] = frozenset()

    def with_admin_key(self, access_key_id: str) -> StackKeys:
        return replace(self, admin_keys=self.admin_keys | {access_key_id})


def generate() -> StackKeys:
    """A fresh pair, shaped like AWS's own (AKIA + 16 characters, 40-character secret)."""
    key_id = "AKIA" + "".join(secrets.choice(_ALPHABET) for _ in range(16))
    return StackKeys(key_id, secrets.token_urlsafe(30)[:40])


def load_or_create(data_dir: Path | None) -> StackKeys:
    """The data directory's keys, created on its first start; a new pair for an ephemeral stack."""
    if data_dir is None:
        return generate()
    path = data_dir / KEYS_FILE
    try:
        content = json.loads(path.read_text())
        aws = content["aws"]
        return StackKeys(
            str(aws["access_key_id"]), str(aws["secret_access_key"]), frozenset(map(str, content["admin_keys"]))
        )
    except FileNotFoundError:
        keys = generate()
        save(data_dir, keys)
        return keys
    except OSError as error:
        raise DataDirError(f"cannot read {path}: {error.strerror}") from error
    except (ValueError, KeyError, TypeError):
        raise DataDirError(
            f"{path} is damaged: it holds the key of the stack's AWS stand-in; remove it to have a new one made"
        ) from None


def save(data_dir: Path, keys: StackKeys) -> None:
    content = {
        "format": _FORMAT,
        "aws": {"access_key_id": keys.aws_access_key_id, "secret_access_key": keys.aws_secret_access_key},
        "admin_keys": sorted(keys.admin_keys),
    }
    write_atomically(data_dir / KEYS_FILE, json.dumps(content, indent=2).encode() + b"\n")


def ensure_admin_key(
    auth: Any, access_key_id: str, secret: str, keys: StackKeys, *, fresh: bool
) -> tuple[StackKeys, str | None]:
    """Installs the admin key pair unless it is one this stack created and an admin deleted since. Returns the
    keys to keep (with the admin key recorded) and a line for the user when something changed or was refused.
    ``fresh``: the stack starts on no earlier state (a new data directory, or --ephemeral): nothing to say then."""
    from chalicelib.auth import errors as auth_errors

    try:
        auth.store.get_credential(access_key_id)
        existed = True
    except auth_errors.CredentialNotFound:
        existed = False
    if not existed and access_key_id in keys.admin_keys:
        return keys, (
            f"the admin key {access_key_id} was deleted, and stays deleted: sign in with another key, or start "
            "with --access-key-id and --secret-access-key naming a new pair to create a new admin key"
        )
    auth.ensure_admin(access_key_id, secret)
    notice = None
    if not existed and not fresh:
        notice = f"created the admin key {access_key_id} (user admin, group Admins)"
    return keys.with_admin_key(access_key_id), notice
