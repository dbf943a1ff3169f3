"""Temporary keys the local stack's moto STS minted (the Iceberg catalog's vended credentials,
chalicelib/iceberg/credentials.py), as the guard in front of moto accepts them (moto_guard.py): signed with the
minted secret, carrying the session token, before the expiry, and only for the S3 requests the session policy
allows. moto checks none of that itself (it enforces no IAM), and on AWS STS and S3 would: without this, the local
stack would accept a read-only engine's writes, or any path of the bucket, where AWS refuses them.

The policy check covers what session policies of the catalog say (Allow statements on object and bucket ARNs, the
``s3:prefix`` condition of a listing) and the requests engines send: objects (GET, HEAD, PUT, DELETE), multipart
uploads (create, part, complete, abort, list parts) and bucket listings. Anything else (DeleteObjects, whose keys
are in a body the guard does not read; copies; bucket operations) is refused to minted keys.
"""

from __future__ import annotations

import datetime
import fnmatch
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, unquote

__all__ = ["MintedKey", "allowed", "minted", "s3_request"]


@dataclass(frozen=True, slots=True)
class MintedKey:
    secret_access_key: str
    session_token: str
    expires_at: float
    policy: Any  # the session policy document, None when AssumeRole had none


def minted(access_key_id: str) -> MintedKey | None:
    """The key moto's STS minted under this id, in any account and partition; None for another."""
    from moto.sts.models import sts_backends

    for account in list(sts_backends.keys()):
        for backend in list(sts_backends[account].values()):
            role = backend.get_assumed_role_from_access_key(access_key_id)
            if role is not None:
                expires = role.expiration.replace(tzinfo=datetime.UTC).timestamp()
                policy = json.loads(role.policy) if role.policy else None
                return MintedKey(role.secret_access_key, role.session_token, expires, policy)
    return None


def s3_request(method: str, path: str, query: str) -> tuple[str, str, str | None] | None:
    """(action, resource ARN, listing prefix) of a path-style S3 request; None for one minted keys never make."""
    bucket, _, key = unquote(path).lstrip("/").partition("/")
    params = parse_qs(query, keep_blank_values=True)
    if not bucket:
        return None
    if not key:
        if method == "GET" and "uploads" not in params and "versions" not in params:
            return "s3:ListBucket", f"arn:aws:s3:::{bucket}", params.get("prefix", [""])[0]
        return None
    resource = f"arn:aws:s3:::{bucket}/{key}"
    upload = "uploadId" in params
    if method in ("GET", "HEAD"):
        return ("s3:ListMultipartUploadParts" if upload else "s3:GetObject"), resource, None
    if method in ("PUT", "POST"):
        return "s3:PutObject", resource, None
    if method == "DELETE":
        return ("s3:AbortMultipartUpload" if upload else "s3:DeleteObject"), resource, None
    return None


def _statements(policy: Any) -> list[Mapping[str, Any]]:
    found = policy.get("Statement", []) if isinstance(policy, dict) else []
    return [found] if isinstance(found, dict) else [s for s in found if isinstance(s, dict)]


def _listed(value: Any) -> list[str]:
    return [value] if isinstance(value, str) else [str(v) for v in value or []]


def allowed(policy: Any, action: str, resource: str, prefix: str | None) -> bool:
    """Whether an Allow statement of the policy (no Deny statement matching) grants ``action`` on ``resource``;
    a ``StringLike`` condition on ``s3:prefix`` must match the listing's prefix."""
    granted = False
    for statement in _statements(policy):
        if not any(fnmatch.fnmatchcase(action, a) for a in _listed(statement.get("Action"))):
            continue
        if not any(fnmatch.fnmatchcase(resource, r) for r in _listed(statement.get("Resource"))):
            continue
        like = (statement.get("Condition") or {}).get("StringLike", {}).get("s3:prefix")
        if like is not None and not any(fnmatch.fnmatchcase(prefix or "", p) for p in _listed(like)):
            continue
        if statement.get("Effect") == "Deny":
            return False
        granted = granted or statement.get("Effect") == "Allow"
    return granted
