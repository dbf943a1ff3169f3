"""What no import reads, whatever LAKELET_IMPORT_ALLOWED_LOCATIONS says: a repository's storage namespace (its
data and its ``_lakefs/`` metadata: imported, they would hand a user with rights on one repository another's
committed and staged objects) and the deployment's own files (``_lakelet/`` at the root of its bucket).

Checked at the start of an import, three ways, then once more while it lists:

- by text: a source under ``_lakelet/``, holding a ``_lakefs`` segment, or (in the deployment's bucket) covering
  ``_lakelet/`` or the whole bucket;
- against the repositories' records: a source inside any repository's namespace, or a prefix containing one;
- against the namespace markers (``<namespace>/_lakefs/dummy``, namespaces.py), which stay when a repository is
  deleted (its data stays too): a source inside a namespace that has, or had, a repository;
- while listing (listing.py): a key with a ``_lakefs`` segment fails the import. Every namespace holds its marker
  there, so a prefix that contains a namespace unknown to the records (a deleted repository's) fails on it, and
  no slice's entries land: the import commits only after every slice was listed.

Buckets are compared without case (S3 bucket names are lowercase; a legacy name in another case must not pass
for another bucket). Other spellings cannot reach here: request.check_locations refuses empty, ``.`` and ``..``
segments, ``//`` and percent escapes before this runs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ..records import Repository
from ..validation import INTERNAL_PREFIX, METADATA_DIRECTORY
from .errors import ImportNotAllowed
from .request import COMMON_PREFIX, ImportLocation

__all__ = ["check_not_internal", "internal_key"]

_MARKER = f"/{METADATA_DIRECTORY}/dummy"
# Each directory of a source key is looked up for a marker: a deeper key is refused rather than looked up further.
MAX_DEPTH = 64


def internal_key(key: str) -> bool:
    """Whether a listed source key is Lakelet's own: under ``_lakelet/`` or inside a ``_lakefs/`` directory."""
    segments = key.split("/")
    return (segments[0] == INTERNAL_PREFIX and len(segments) > 1) or METADATA_DIRECTORY in segments[:-1]


def _refuse(loc: ImportLocation, why: str) -> ImportNotAllowed:
    return ImportNotAllowed(f"import from {loc.path} is not allowed: {why}; no setting allows it")


def _overlaps(loc: ImportLocation, inside: str) -> bool:
    """Whether the source reads any key under ``inside`` (a key prefix ending in "/") of its bucket."""
    if loc.key.startswith(inside):
        return True
    return loc.type == COMMON_PREFIX and inside.startswith(loc.key)


def _directories(key: str) -> list[str]:
    """``a/b/c`` -> [``a``, ``a/b``]: the directories a key lies in."""
    segments = key.split("/")
    return ["/".join(segments[:i]) for i in range(1, len(segments))]


def check_not_internal(
    locations: Iterable[ImportLocation],
    repositories: Iterable[Repository],
    own_bucket: str | None,
    marker_exists: Callable[[str], bool],
) -> None:
    """ImportNotAllowed (403) for a source that reads a repository's namespace or the deployment's own files.
    ``own_bucket``: the deployment's bucket (None: repositories may live in any bucket). ``marker_exists(address)``:
    whether a namespace marker is stored at that s3:// address."""
    locations = tuple(locations)
    for loc in locations:
        bucket = loc.bucket.lower()
        if internal_key(loc.key) or loc.key.startswith(f"{INTERNAL_PREFIX}/"):
            raise _refuse(loc, "it lies in Lakelet's own files (_lakelet/ or a _lakefs/ directory)")
        if own_bucket is not None and bucket == own_bucket.lower():
            if not loc.key:
                raise _refuse(loc, "it is the whole of the deployment's bucket, where repositories keep their data")
            if _overlaps(loc, f"{INTERNAL_PREFIX}/"):
                raise _refuse(loc, f"it covers {INTERNAL_PREFIX}/, where the deployment keeps its own files")
    for repo in repositories:
        ns_bucket, _, ns_key = repo.storage_namespace.removeprefix("s3://").partition("/")
        for loc in locations:
            if loc.bucket.lower() == ns_bucket.lower() and _overlaps(loc, ns_key.rstrip("/") + "/"):
                raise _refuse(loc, "it reads the storage namespace of a repository")
    for loc in locations:
        if own_bucket is not None and loc.bucket.lower() != own_bucket.lower():
            continue  # namespaces live in the deployment's bucket only: no marker elsewhere
        directories = _directories(loc.key)
        if len(directories) > MAX_DEPTH:
            raise _refuse(loc, f"its key is more than {MAX_DEPTH} directories deep")
        bucket = own_bucket or loc.bucket
        for directory in directories:
            if marker_exists(f"s3://{bucket}/{directory}{_MARKER}"):
                raise _refuse(loc, "it lies inside the storage namespace of a repository (current or deleted)")
