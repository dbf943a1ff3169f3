"""One error tree for graveler. api/errors.py maps it to HTTP statuses, in one table."""

from __future__ import annotations


class GravelerError(Exception):
    """Base of every error graveler (and its adapters) raise.

    ``lakefs_message`` is lakeFS's own wording of the error (pkg/graveler/errors.go), which clients match on:
    the API says it first and Lakelet's detail after a colon (api/errors.py). Empty: the detail alone.
    """

    lakefs_message = ""


class NotFound(GravelerError):
    pass


class RepositoryNotFound(NotFound):
    lakefs_message = "repository not found"


class BranchNotFound(NotFound):
    lakefs_message = "branch not found"


class TagNotFound(NotFound):
    lakefs_message = "tag not found"


class CommitNotFound(NotFound):
    lakefs_message = "commit not found"


class RefNotFound(NotFound):
    pass


class ObjectNotFound(NotFound):
    pass


class CredentialNotFound(NotFound):
    pass


class AlreadyExists(GravelerError):
    pass


class RepositoryExists(AlreadyExists):
    lakefs_message = "repository already exists"


class BranchExists(AlreadyExists):
    lakefs_message = "branch already exists"


class TagExists(AlreadyExists):
    lakefs_message = "tag already exists"


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
    lakefs_message = "no changes"


class DirtyBranch(GravelerError):
    lakefs_message = "uncommitted changes (dirty branch)"


class Conflict(GravelerError):
    """A compare-and-swap lost: the stored record was not the expected one."""


class PreconditionFailed(GravelerError):
    """A conditional request (If-None-Match: *) found the object already there."""

    lakefs_message = "precondition failed"


class Forbidden(GravelerError):
    """The operation is not allowed on this target (default branch, read-only repository)."""


class ReadOnlyRepository(Forbidden):
    lakefs_message = "read-only repository"


class ProtectedBranch(Forbidden):
    """A branch protection rule refuses the operation (lakeFS's ErrProtectedBranch family); the messages are
    lakeFS's own."""


class WriteToProtectedBranch(ProtectedBranch):
    pass


class CommitToProtectedBranch(ProtectedBranch):
    pass


class DeleteProtectedBranch(ProtectedBranch):
    pass


class TooManyTries(GravelerError):
    lakefs_message = "too many tries"


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
