"""The auth leaves of graveler's error tree: api/errors.py maps them through their families."""

from __future__ import annotations

from chalicelib.graveler import errors


class DecryptionFailed(errors.GravelerError):
    """A stored ciphertext did not decrypt (tampered, or moved to another row): data corruption, HTTP 500."""


class PermissionDenied(errors.Forbidden):
    """Authenticated, but no policy allows the action on the resource (HTTP 403)."""


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
