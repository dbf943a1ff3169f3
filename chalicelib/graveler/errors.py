"""One error tree for graveler. api/errors.py maps it to HTTP statuses, in one table."""

from __future__ import annotations


class GravelerError(Exception):
    """Base of every error graveler (and its adapters) raise."""


class NotFound(GravelerError):
    pass


class RepositoryNotFound(NotFound):
    pass


class BranchNotFound(NotFound):
    pass


class TagNotFound(NotFound):
    pass


class CommitNotFound(NotFound):
    pass


class RefNotFound(NotFound):
    pass


class ObjectNotFound(NotFound):
    pass


class CredentialNotFound(NotFound):
    pass


class AlreadyExists(GravelerError):
    pass


class RepositoryExists(AlreadyExists):
    pass


class BranchExists(AlreadyExists):
    pass


class TagExists(AlreadyExists):
    pass


class CommitExists(AlreadyExists):
    """A different commit with the same ID: cannot happen with content-addressed IDs unless data is corrupt."""


class Invalid(GravelerError):
    """Bad input: a name, a ref expression, a parameter."""


class InvalidRef(Invalid):
    pass


class InvalidName(Invalid):
    pass


class InvalidObjectField(Invalid):
    """A field of an object (content type, metadata, checksum, size, mtime) that S3 would not take."""


class MetadataTooLarge(InvalidObjectField):
    """User metadata over S3's 2 KiB."""


class EntityTooLarge(InvalidObjectField):
    """An object over S3's 5 TiB."""


class NoChanges(GravelerError):
    pass


class DirtyBranch(GravelerError):
    pass


class Conflict(GravelerError):
    """A compare-and-swap lost: the stored record was not the expected one."""


class PreconditionFailed(GravelerError):
    """A conditional request (If-None-Match: *) found the object already there."""


class Forbidden(GravelerError):
    """The operation is not allowed on this target (default branch, read-only repository)."""


class ReadOnlyRepository(Forbidden):
    pass


class TooManyTries(GravelerError):
    pass


class RangeNotSatisfiable(GravelerError):
    pass


class Unauthorized(GravelerError):
    """No credentials, or credentials that do not verify."""


class StorageError(GravelerError):
    """The underlying store failed in a way the caller cannot fix by changing the request."""


class Gone(GravelerError):
    """The entry exists but its physical object was garbage collected (HTTP 410)."""


class UserNotFound(NotFound):
    pass


class UserExists(AlreadyExists):
    pass
