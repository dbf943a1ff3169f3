"""The auth package's errors: leaves of graveler's error tree (graveler/errors.py), under its families, so
api/errors.py maps them to HTTP statuses through those families and the S3 gateway refuses an unknown key the
same way.

    GravelerError
    ├── DecryptionFailed .............. 500
    ├── NotFound
    │   ├── UserNotFound
    │   ├── CredentialNotFound
    │   ├── GroupNotFound
    │   └── PolicyNotFound
    ├── AlreadyExists
    │   ├── UserExists
    │   ├── GroupExists
    │   └── PolicyExists
    ├── Forbidden
    │   └── PermissionDenied
    └── Unauthorized
        └── InvalidToken
"""

from __future__ import annotations

from chalicelib.graveler import errors


class DecryptionFailed(errors.GravelerError):
    """A stored ciphertext did not decrypt (tampered, or moved to another row): data corruption, HTTP 500."""


class PermissionDenied(errors.Forbidden):
    """Authenticated, but no policy allows the action on the resource (HTTP 403)."""


class UserNotFound(errors.NotFound):
    pass


class UserExists(errors.AlreadyExists):
    pass


class CredentialNotFound(errors.NotFound):
    """No access key of that id (or its user is gone)."""


class GroupNotFound(errors.NotFound):
    pass


class GroupExists(errors.AlreadyExists):
    pass


class PolicyNotFound(errors.NotFound):
    pass


class PolicyExists(errors.AlreadyExists):
    pass


class InvalidToken(errors.Unauthorized):
    """A bearer token that is malformed, forged or expired."""


__all__ = [
    "CredentialNotFound",
    "DecryptionFailed",
    "GroupExists",
    "GroupNotFound",
    "InvalidToken",
    "PermissionDenied",
    "PolicyExists",
    "PolicyNotFound",
    "UserExists",
    "UserNotFound",
]
