"""Every error graveler raises, in one tree. api/errors.py maps the families to HTTP statuses (one table), the S3
gateway to S3 error codes (s3proxy/errors.py), and the workflows derive their Step Functions failure names from
the class names (``error_names``). Auth's leaves (users, credentials, groups, policies) live in auth/errors.py,
under the same families.

    GravelerError
    ├── NotFound ...................... 404
    │   ├── RepositoryNotFound
    │   ├── BranchNotFound
    │   ├── TagNotFound
    │   ├── CommitNotFound
    │   ├── RefNotFound
    │   ├── ObjectNotFound
    │   ├── ImportNotFound
    │   ├── RunNotFound ............... an action run (actions/)
    │   ├── HookRunNotFound
    │   ├── PullRequestNotFound
    │   └── TaskNotFound .............. a repository dump or restore task
    ├── AlreadyExists ................. 409
    │   ├── RepositoryExists
    │   ├── BranchExists
    │   ├── TagExists
    │   ├── CommitExists
    │   └── PullRequestExists
    ├── Invalid ....................... 400
    │   ├── InvalidRef
    │   ├── InvalidName
    │   ├── InvalidObjectField
    │   │   ├── MetadataTooLarge
    │   │   └── EntityTooLarge
    │   ├── NoMergeBase
    │   ├── NamespaceInUse
    │   ├── InvalidActionFile ......... an action file that does not parse or check (a Lua hook among them)
    │   ├── ClaimMismatch
    │   └── NotBareRepository ......... a refs restore into a repository that has commits
    ├── NoChanges ..................... 400
    ├── DirtyBranch ................... 400
    ├── Conflict ...................... 409
    │   ├── MergeConflicts
    │   ├── ImportCanceled (a step found its import canceled)
    │   └── ImportFinished (a cancel came after the import ended)
    ├── PreconditionFailed ............ 412
    │   └── HookAborted ............... a pre-hook failed: the operation did not happen
    ├── Forbidden ..................... 403
    │   ├── ReadOnlyRepository
    │   ├── ImportNotAllowed (a source outside the allowed import locations)
    │   └── ProtectedBranch
    │       ├── WriteToProtectedBranch
    │       ├── CommitToProtectedBranch
    │       └── DeleteProtectedBranch
    ├── TooManyTries .................. 429
    ├── RangeNotSatisfiable ........... 416
    ├── Unauthorized .................. 401
    ├── StorageError .................. 503
    ├── Gone .......................... 410
    ├── DataMissing ................... 500 (committed data a commit names is not in the store: permanent)
    ├── Unsupported ................... 501 (an operation lakeFS OSS does not serve either: STS, OIDC, group ACLs)
    └── WorkflowFailed ................ 500 (not the user's: a workflow step failed for a reason of its own)

    StillRunning (outside the tree: no error, a commit or merge that goes on as a workflow after the caller's
                  wait ended; it carries the task id to poll)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .committed.mergetable import KeyConflict

__all__ = [
    "AlreadyExists",
    "BranchExists",
    "BranchNotFound",
    "ClaimMismatch",
    "CommitExists",
    "CommitNotFound",
    "CommitToProtectedBranch",
    "Conflict",
    "DataMissing",
    "DeleteProtectedBranch",
    "DirtyBranch",
    "EntityTooLarge",
    "Forbidden",
    "Gone",
    "GravelerError",
    "HookAborted",
    "HookRunNotFound",
    "ImportCanceled",
    "ImportFinished",
    "ImportNotAllowed",
    "ImportNotFound",
    "Invalid",
    "InvalidActionFile",
    "InvalidName",
    "InvalidObjectField",
    "InvalidRef",
    "MergeConflicts",
    "MetadataTooLarge",
    "NamespaceInUse",
    "NoChanges",
    "NoMergeBase",
    "NotBareRepository",
    "NotFound",
    "ObjectNotFound",
    "PreconditionFailed",
    "ProtectedBranch",
    "PullRequestExists",
    "PullRequestNotFound",
    "RangeNotSatisfiable",
    "ReadOnlyRepository",
    "RefNotFound",
    "RepositoryExists",
    "RepositoryNotFound",
    "RunNotFound",
    "StillRunning",
    "StorageError",
    "TagExists",
    "TagNotFound",
    "TaskNotFound",
    "TooManyTries",
    "Unauthorized",
    "Unsupported",
    "WorkflowFailed",
    "WriteToProtectedBranch",
]


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


class RunNotFound(NotFound):
    lakefs_message = "not found"


class HookRunNotFound(NotFound):
    lakefs_message = "not found"


class PullRequestNotFound(NotFound):
    lakefs_message = "pull request not found"


class TaskNotFound(NotFound):
    lakefs_message = "not found"


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


class PullRequestExists(AlreadyExists):
    lakefs_message = "pull request already exists"


class Invalid(GravelerError):
    """Bad input: a name, a ref expression, a parameter."""


class InvalidActionFile(Invalid):
    pass


class InvalidRef(Invalid):
    pass


class InvalidName(Invalid):
    pass


class NamespaceInUse(Invalid):
    """The namespace is, holds, or lies inside another repository's namespace (HTTP 400, as lakeFS)."""


class NoMergeBase(Invalid):
    """The two commits share no ancestor."""

    lakefs_message = "no merge base"


class ClaimMismatch(Invalid):
    """The uploaded object is not the one the link request describes."""


class InvalidObjectField(Invalid):
    """A field of an object (content type, metadata, checksum, size, mtime) that S3 would not take."""


class MetadataTooLarge(InvalidObjectField):
    """User metadata over S3's 2 KiB."""


class EntityTooLarge(InvalidObjectField):
    """An object over S3's 5 TiB."""


class NotBareRepository(Invalid):
    """lakeFS restores refs only into a bare repository (no commits, no branches)."""

    lakefs_message = "can only restore into a bare repository"


class NoChanges(GravelerError):
    lakefs_message = "no changes"


class DirtyBranch(GravelerError):
    lakefs_message = "uncommitted changes (dirty branch)"


class Conflict(GravelerError):
    """A compare-and-swap lost: the stored record was not the expected one."""


class MergeConflicts(Conflict):
    """The merge met conflicts no strategy settled (HTTP 409). ``conflicts`` lists every conflicting key, in
    key order, resolved ones included (their ``resolution`` is set)."""

    lakefs_message = "conflict found"

    def __init__(self, message: str, conflicts: list[KeyConflict] | None = None) -> None:
        super().__init__(message)
        self.conflicts = conflicts or []

    @property
    def unresolved(self) -> list[KeyConflict]:
        return [c for c in self.conflicts if c.resolution is None]


class PreconditionFailed(GravelerError):
    """A conditional request (If-None-Match: *) found the object already there."""

    lakefs_message = "precondition failed"


class HookAborted(PreconditionFailed):
    """lakeFS's HookAbortError: "<event> hook aborted, run id '<id>': <errors>"; its web UI and lakectl read the
    run id and the failing hook run id out of this very wording, so the message is the whole text."""

    lakefs_message = ""

    def __init__(self, message: str, run_id: str = "", failed: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.run_id = run_id
        # The hook run ids that failed, in run order.
        self.failed = failed


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


class ImportNotFound(NotFound):
    """No import with this id on this repository and branch."""


class ImportCanceled(Conflict):
    """The import was canceled; the step that noticed stopped before its side effect."""


class ImportFinished(Conflict):
    """The import already ended (completed or failed): there is nothing left to cancel."""


class ImportNotAllowed(Forbidden):
    """The import names a source outside the deployment's allowed import locations (the message names the
    setting that lists them)."""


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


class DataMissing(GravelerError):
    """A range or metarange a commit names is not in the store: written before the commit, so never "not yet",
    but lost (or restored without it). Permanent (500, no Retry-After), where StorageError says retry."""


class Unsupported(GravelerError):
    """An operation of lakeFS's API that lakeFS OSS answers 501 Not Implemented, and so does Lakelet."""

    lakefs_message = "Not Implemented"


class WorkflowFailed(GravelerError):
    """A workflow step failed for a reason that is not the user's (HTTP 500); the message says which."""


class StillRunning(Exception):
    """Not an error: the commit or merge goes on as workflow execution ``task_id`` after the caller's wait
    ended. The API answers 202 with the task id; the status endpoints say how it ended."""

    def __init__(self, task_id: str) -> None:
        super().__init__(f"still running as task {task_id}")
        self.task_id = task_id


def _subclasses(cls: type[GravelerError]) -> list[type[GravelerError]]:
    found: list[type[GravelerError]] = []
    for sub in cls.__subclasses__():
        found.extend([sub, *_subclasses(sub)])
    return found


def error_names() -> dict[str, type[GravelerError]]:
    """Every error of the tree (and of the leaves other packages hang under it) by its class name: the name a
    Step Functions execution fails with when a task raises it (the Lambda's errorType). Derived, not listed, so
    a new class never falls through to a 500."""
    tree: list[type[GravelerError]] = [GravelerError, *_subclasses(GravelerError)]
    return {cls.__name__: cls for cls in tree}
