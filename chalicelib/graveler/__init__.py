"""graveler: the versioning engine, pure Python.

It knows repositories, branches, tags, commits, staging areas and committed ranges, and reaches storage only
through the ports in ``ports.py``. It never imports boto3, pynamodb or chalice (a test enforces it); the third-party
imports allowed are pyarrow, inside the range format package ``committed/``, and cachetools, inside
``storage/caches.py``.

The root keeps the domain; the rest lives in rooms named for what they are (docs/architecture.md draws them)::

    records, errors, refs, identity, validation   the domain: records, the error tree, ref expressions, ids, names
    ports, parts                                  the ports storage is reached through, and the record of them
    engine                                        the Engine record of use cases, built by build_engine alone
    usecases/   one object per use case (objects, branches_and_tags, repositories, diffs, commits, merges, ...)
    writes/     a branch's staging area and every staged write (preconditions, batch uploads, linking)
    reads/      the shared reads and checks, listings, history, GC's collected check and retention
    branches/   branch moves (one compare-and-swap loop), the checks before a head moves, branch protection
    commit/, merge/, imports/   the long operations as steps; runs/ decides inline or workflow
    dumps/      refs dump and restore; storage/ caches and storage namespaces
    committed/  the range format (pyarrow), internal; actions/ hooks and action files

What code outside graveler imports from the package itself: the error tree ``errors`` and the records that name
the domain (below). Everything else it imports from the module that defines it (``graveler.engine.Engine``,
``graveler.writes.staging.stage``, ...), each module's ``__all__`` saying what it offers; a module whose name
starts with an underscore is private to its package.
"""

from . import errors
from .records import (
    Branch,
    BranchID,
    Commit,
    CommitID,
    Entry,
    Key,
    MetaRangeID,
    Repository,
    RepositoryID,
    StagedEntry,
    StagingToken,
    Tag,
)

__all__ = [
    "Branch",
    "BranchID",
    "Commit",
    "CommitID",
    "Entry",
    "Key",
    "MetaRangeID",
    "Repository",
    "RepositoryID",
    "StagedEntry",
    "StagingToken",
    "Tag",
    "errors",
]
