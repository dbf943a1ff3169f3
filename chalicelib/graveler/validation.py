"""Name rules for repositories, branches, tags, refs and object paths (lakeFS's)."""

from __future__ import annotations

import re

from .errors import Invalid, InvalidName

_REPOSITORY = re.compile(r"[a-z0-9][a-z0-9-]{2,62}")
_BRANCH = re.compile(r"\w[-\w]*")
_REF = re.compile(r"[^\s]+")
_TAG_FORBIDDEN_CHARS = set("^:?*[\\ ~") | {chr(c) for c in range(32)} | {"\x7f"}
_NAMESPACE = re.compile(r"s3://[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](/.*)?")


def validate_repository_id(repo_id: str) -> None:
    if not _REPOSITORY.fullmatch(repo_id):
        raise InvalidName(f"repository name {repo_id!r} must match ^[a-z0-9][a-z0-9-]{{2,62}}$")


def validate_branch_id(branch_id: str) -> None:
    if not _BRANCH.fullmatch(branch_id):
        raise InvalidName(f"branch name {branch_id!r} must match ^\\w[-\\w]*$")


def validate_tag_id(tag_id: str) -> None:
    """git ref-name rules, as lakeFS applies them to tags."""
    bad = (
        not tag_id
        or tag_id == "@"
        or ".." in tag_id
        or "/" in tag_id
        or "@{" in tag_id
        or tag_id.endswith(".")
        or tag_id.endswith(".lock")
        or tag_id.startswith(".")
        or any(c in _TAG_FORBIDDEN_CHARS for c in tag_id)
    )
    if bad:
        raise InvalidName(f"tag name {tag_id!r} is not a valid git ref name")


def validate_ref(ref: str) -> None:
    if not _REF.fullmatch(ref):
        raise InvalidName(f"ref {ref!r} must be non-empty with no whitespace")


def validate_path(path: str) -> None:
    if not path:
        raise Invalid("path is required")
    if "\x00" in path:
        raise Invalid("path must not contain NUL")
    if len(path.encode()) > 1024:
        # DynamoDB sort keys hold at most 1024 bytes: staging is keyed by path.
        raise Invalid("path is longer than 1024 bytes")


def validate_storage_namespace(namespace: str) -> None:
    """s3://bucket/prefix: a prefix (never the bucket's root) of non-empty segments, none ``.`` or ``..``, without
    ``?`` or ``#`` (which would end the key of an s3:// URL); one trailing ``/`` is allowed and ignored."""
    if not _NAMESPACE.fullmatch(namespace):
        raise Invalid(f"storage namespace {namespace!r} must look like s3://bucket/prefix")
    if "?" in namespace or "#" in namespace or any(ord(c) < 0x20 or c == "\x7f" for c in namespace):
        raise Invalid(f"storage namespace {namespace!r} must not hold '?', '#' or control characters")
    path = namespace.partition("://")[2].partition("/")[2].removesuffix("/")
    if not path:
        raise Invalid(f"storage namespace {namespace!r} is a bucket's root: give a prefix, s3://bucket/prefix")
    if any(segment in ("", ".", "..") for segment in path.split("/")):
        raise Invalid(f"storage namespace {namespace!r} has an empty, '.' or '..' segment")
