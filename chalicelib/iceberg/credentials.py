"""Vended credentials: what an engine gets to read and write a table's files in the store itself
(docs/iceberg.md, "Data files").

The catalog asks a :class:`Vendor` for temporary S3 credentials scoped to one table's physical root (files.py):
read-only for a caller who may only read the table, read and write for one who may commit to it. Deployed, the
vendor is STS AssumeRole with an inline session policy (chalicelib/adapters/sts_credentials.py); the credentials
can do no more than both the role's policy and that session policy allow, whatever the engine asks.
"""

from __future__ import annotations

from .metadata import Json
from .ports import Vended, Vendor

__all__ = ["ACCESS_DELEGATION", "Vended", "Vendor", "session_policy", "storage_credentials"]

# The header through which a client says how it wants to reach the files (the REST spec's loadTable).
ACCESS_DELEGATION = "X-Iceberg-Access-Delegation"
_READ_ACTIONS = ("s3:GetObject",)
_WRITE_ACTIONS = ("s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload", "s3:ListMultipartUploadParts")


def _split(root: str) -> tuple[str, str]:
    bucket, _, key = root.removeprefix("s3://").partition("/")
    return bucket, key.rstrip("/")


def session_policy(root: str, write: bool) -> Json:
    """Objects under the root (read, and write when ``write``), and listing the bucket under it only."""
    bucket, key = _split(root)
    actions = [*_READ_ACTIONS, *(_WRITE_ACTIONS if write else ())]
    return {
        "Version": "2012-10-17",
        "Statement": [
            {"Effect": "Allow", "Action": actions, "Resource": f"arn:aws:s3:::{bucket}/{key}/*"},
            {
                "Effect": "Allow",
                "Action": "s3:ListBucket",
                "Resource": f"arn:aws:s3:::{bucket}",
                "Condition": {"StringLike": {"s3:prefix": [f"{key}/*", key]}},
            },
        ],
    }


def storage_credentials(vendor: Vendor, root: str, write: bool, refresh_endpoint: str) -> tuple[Json, list[Json]]:
    """(the table config, the spec's storage-credentials) for a table whose root is ``root``."""
    minted = vendor.vend(session_policy(root, write), "lakelet-iceberg-" + ("rw" if write else "ro"))
    config = {
        **vendor.client_config(),
        "s3.access-key-id": minted.access_key_id,
        "s3.secret-access-key": minted.secret_access_key,
        "s3.session-token": minted.session_token,
        "s3.session-token-expires-at-ms": str(minted.expires_at_ms),
        # Java's S3FileIO asks the catalog for new credentials before these expire (the spec's loadCredentials).
        "client.refresh-credentials-enabled": "true",
        "client.refresh-credentials-endpoint": refresh_endpoint,
    }
    return config, [{"prefix": root, "config": config}]
