"""Auth records."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class User:
    id: str
    creation_date: int


@dataclass(frozen=True, slots=True)
class Credential:
    """An access key pair. The secret is kept only as ``secret_hash`` (see auth/service.py for the scheme)."""

    access_key_id: str
    secret_hash: str
    user_id: str
    creation_date: int
