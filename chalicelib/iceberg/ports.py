"""The catalog's port above its adapter: the vendor of temporary S3 credentials for a table's files
(credentials.py says what is asked of it; chalicelib/adapters/sts_credentials.py is STS's)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

__all__ = ["Vended", "Vendor"]


@dataclass(frozen=True, slots=True)
class Vended:
    access_key_id: str
    secret_access_key: str
    session_token: str
    expires_at_ms: int


class Vendor(Protocol):
    """Mints temporary credentials limited to ``policy`` (an IAM policy document)."""

    def vend(self, policy: dict[str, Any], session_name: str) -> Vended: ...

    def client_config(self) -> dict[str, str]:
        """What every engine needs besides the keys: the region, and the S3 endpoint where it is not AWS's."""
        ...
