"""Auth records: users and their access keys, groups, policies and the principals policies attach to."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from enum import StrEnum

from .conditions import Condition

__all__ = ["Credential", "Effect", "Group", "Policy", "Principal", "PrincipalKind", "Statement", "User"]


@dataclass(frozen=True, slots=True)
class User:
    """``generation`` is random per creation: a user deleted and created again under the same id is another
    user, and login tokens name the generation they were issued to (auth/tokens.py). "" for users stored
    before generations existed."""

    id: str
    creation_date: int
    generation: str = ""


def new_user(user_id: str, now: float) -> User:
    return User(user_id, int(now), secrets.token_hex(16))


@dataclass(frozen=True, slots=True)
class Credential:
    """An access key pair. The secret is stored only encrypted (base64 of the SecretCipher's ciphertext, bound to
    the access key id); see auth/secrets.py for the scheme."""

    access_key_id: str
    encrypted_secret: str
    user_id: str
    creation_date: int


@dataclass(frozen=True, slots=True)
class Group:
    """A set of users; policies attached to a group apply to each member."""

    id: str
    creation_date: int
    description: str = ""


class Effect(StrEnum):
    ALLOW = "allow"
    DENY = "deny"


@dataclass(frozen=True, slots=True)
class Statement:
    """Allows or denies ``actions`` (patterns like ``fs:Read*``) on ``resource`` (an ARN pattern like
    ``arn:lakefs:fs:::repository/sales/*``; ``${user}`` stands for the caller's user id)."""

    effect: Effect
    actions: tuple[str, ...]
    resource: str
    # The statement applies only while these hold (auth/conditions.py: lakeFS's IpAddress, NotIpAddress, ...).
    conditions: tuple[Condition, ...] = ()


@dataclass(frozen=True, slots=True)
class Policy:
    id: str
    creation_date: int
    statements: tuple[Statement, ...]


class PrincipalKind(StrEnum):
    USER = "user"
    GROUP = "group"


@dataclass(frozen=True, slots=True)
class Principal:
    """Who a policy is attached to: a user or a group."""

    kind: PrincipalKind
    id: str
