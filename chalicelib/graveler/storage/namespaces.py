"""One repository per storage namespace: the claim a repository makes on its namespace, and what it refuses.

Two repositories that share a namespace, or where one's namespace lies inside the other's, share GC rules and
multipart records, and GC of one deletes the other's data. So creating a repository:

- refuses a malformed namespace and one outside the prefix this deployment uses (its bucket) with a 400 that
  names the prefix; validation.normalize_storage_namespace folds the spellings of one namespace (``s3://b//x``,
  ``s3://b/x/``) into ``s3://b/x``, and only that spelling reaches the claim and the nesting checks below;
- claims ``<namespace>/_lakefs/dummy`` with a conditional create (S3 ``If-None-Match: *``): of any number of
  concurrent creations on one namespace exactly one wins, the others get 400 "already in use" as in lakeFS.
  The marker lives with the data it protects, so it also holds across deployments sharing a bucket, and it
  stays when the repository is deleted (its data stays too);
- then, with its own claim visible, refuses (and releases the claim) if a marker exists at an ancestor of the
  namespace (nested inside another repository) or under it (containing one). Each of two racing creations
  checks after its own claim, so at least one of them sees the other: never both succeed.

The containing check lists the namespace's keys, at most CONTAINING_SCAN_LIMIT of them: a fresh namespace
holds none, and a prefix holding more data than that is not one a repository should be created on anyway.
"""

from __future__ import annotations

from collections.abc import Iterable

from .. import errors
from ..errors import NamespaceInUse
from ..ports import BlockStore
from ..writes.addressing import metadata_address

__all__ = [
    "CONTAINING_SCAN_LIMIT",
    "MARKER_CONTENT",
    "NAMESPACE_MARKER",
    "check_allowed",
    "claim",
    "mark",
    "marker_address",
    "overlap",
    "refuse_live_overlap",
    "release",
]

# lakeFS's name for the marker; its content says what it is to anyone browsing the bucket.
NAMESPACE_MARKER = "dummy"
MARKER_CONTENT = b"this namespace belongs to a Lakelet repository: do not create another one on it or inside it\n"
CONTAINING_SCAN_LIMIT = 10_000
_MARKER_SUFFIX = "/_lakefs/" + NAMESPACE_MARKER


def marker_address(namespace: str) -> str:
    return metadata_address(namespace, NAMESPACE_MARKER)


def check_allowed(namespace: str, allowed_prefix: str | None) -> None:
    """Refuses a namespace outside the deployment's prefix (``s3://<bucket>/``); None allows any bucket."""
    if allowed_prefix is not None and not namespace.startswith(allowed_prefix):
        raise errors.Invalid(
            f"storage namespace {namespace!r} is outside this deployment's storage: use a namespace under "
            f"{allowed_prefix}"
        )


def _ancestors(namespace: str) -> list[str]:
    """``s3://b/x/y/z`` -> [``s3://b/x``, ``s3://b/x/y``]: every shorter namespace that contains it."""
    bucket_end = namespace.find("/", namespace.find("://") + 3)
    if bucket_end < 0:
        return []
    root, segments = namespace[:bucket_end], namespace[bucket_end + 1 :].split("/")
    return [root + "/" + "/".join(segments[:i]) for i in range(1, len(segments))]


def claim(blocks: BlockStore, namespace: str) -> None:
    """Claims ``namespace`` for a new repository. Raises NamespaceInUse; on a refusal nothing stays claimed."""
    marker = marker_address(namespace)
    if not blocks.put_if_absent(marker, MARKER_CONTENT):
        raise NamespaceInUse(f"storage namespace {namespace} already in use")
    try:
        for ancestor in _ancestors(namespace):
            if blocks.exists(marker_address(ancestor)):
                raise NamespaceInUse(
                    f"storage namespace {namespace} lies inside the namespace of another repository ({ancestor})"
                )
        for seen, (address, _) in enumerate(blocks.list_blobs(namespace + "/")):
            if seen >= CONTAINING_SCAN_LIMIT:
                break
            if address.endswith(_MARKER_SUFFIX) and address != marker:
                inner = address.removesuffix(_MARKER_SUFFIX)
                raise NamespaceInUse(
                    f"storage namespace {namespace} contains the namespace of another repository ({inner})"
                )
    except BaseException:
        release(blocks, namespace)
        raise


def overlap(namespace: str, other: str) -> str | None:
    """How ``other`` meets ``namespace`` (both normalized, as repository records hold them): "is", "contains"
    (``other`` lies inside ``namespace``), "lies inside", or None when they are apart."""
    if namespace == other:
        return "is"
    if other.startswith(namespace + "/"):
        return "contains"
    if namespace.startswith(other + "/"):
        return "lies inside"
    return None


def refuse_live_overlap(
    namespace: str, repositories: Iterable[tuple[str, str]], *, allow_same: bool = False, skip: str = ""
) -> None:
    """Raises NamespaceInUse when ``namespace`` is (unless ``allow_same``), contains or lies inside the namespace
    of one of ``repositories`` ((id, namespace) of the repositories that exist; ``skip``: an id left out). The
    records' check, beside the markers': a bare repository made before bare ones put a marker has none."""
    for repo_id, other in repositories:
        if repo_id == skip:
            continue
        how = overlap(namespace, other.rstrip("/"))
        if how is None or (how == "is" and allow_same):
            continue
        if how == "is":
            raise NamespaceInUse(f"storage namespace {namespace} already in use by repository {repo_id}")
        raise NamespaceInUse(f"storage namespace {namespace} {how} the namespace of repository {repo_id} ({other})")


def mark(blocks: BlockStore, namespace: str) -> None:
    """Puts the marker unless one is there (a bare repository's namespace: often a deleted repository's, whose
    marker stayed), so that no repository can be created on it, inside it or around it from now on."""
    blocks.put_if_absent(marker_address(namespace), MARKER_CONTENT)


def release(blocks: BlockStore, namespace: str) -> None:
    """Gives up a claim this process made (a creation that failed after claiming)."""
    blocks.delete(marker_address(namespace))
