"""The catalog's errors, in one tree under graveler's families, so that api/errors.py maps them to HTTP statuses
with its one table and names them with the Iceberg REST spec's exception types (``IcebergErrorResponse.type``).

    GravelerError (graveler/errors.py)
    ├── NotFound ........................ 404
    │   ├── NoSuchNamespace ............. NoSuchNamespaceException
    │   └── NoSuchTable ................. NoSuchTableException
    ├── AlreadyExists ................... 409
    │   ├── NamespaceAlreadyExists ...... AlreadyExistsException
    │   └── TableAlreadyExists .......... AlreadyExistsException
    ├── Conflict ........................ 409
    │   ├── CommitFailed ................ CommitFailedException (a requirement failed, or a lost race)
    │   └── NamespaceNotEmpty ........... NamespaceNotEmptyException
    ├── Invalid ......................... 400
    │   ├── BadRequest .................. BadRequestException
    │   └── NotABranch .................. BadRequestException (a write to a tag, a commit, ``main@``)
    └── Unsupported ..................... 406 UnsupportedOperationException (views, token exchange)
"""

from __future__ import annotations

from chalicelib.graveler import errors

__all__ = [
    "BadRequest",
    "CommitFailed",
    "NamespaceAlreadyExists",
    "NamespaceNotEmpty",
    "NoSuchNamespace",
    "NoSuchTable",
    "NotABranch",
    "TableAlreadyExists",
    "UnsupportedOperation",
]


class NoSuchNamespace(errors.NotFound):
    """The namespace (a repository, a ref, or a namespace under a ref) does not exist."""


class NoSuchTable(errors.NotFound):
    """No table of that name in the namespace (at that ref)."""


class NamespaceAlreadyExists(errors.AlreadyExists):
    pass


class TableAlreadyExists(errors.AlreadyExists):
    pass


class CommitFailed(errors.Conflict):
    """A commit's requirement does not hold against the table's current pointer, or another commit moved the pointer
    since it was read (the client refreshes and retries)."""


class NamespaceNotEmpty(errors.Conflict):
    pass


class BadRequest(errors.Invalid):
    """A request the spec's schemas refuse: a malformed identifier, body or update."""


class NotABranch(errors.Invalid):
    """A write at a ref that is not a branch: tables are read at any ref and written on branches only."""


class UnsupportedOperation(errors.Unsupported):
    """What the catalog does not serve (views, token exchange)."""
