"""Identifiers taken from the URL path, checked with graveler's name rules before any lookup.

lakeFS answers 400 for a malformed name even on reads (its catalog validates every argument), rather than a
404 for something that could never exist.
"""

from __future__ import annotations

from chalicelib.graveler import errors
from chalicelib.graveler.validation import validate_branch_id, validate_ref, validate_repository_id, validate_tag_id


def repository(value: str) -> str:
    validate_repository_id(value)
    return value


def branch(value: str) -> str:
    validate_branch_id(value)
    return value


def tag(value: str) -> str:
    validate_tag_id(value)
    return value


def ref(value: str) -> str:
    """Any ref expression (``main``, ``v1``, ``main~2^1``, ``main@``, a commit id); its syntax is checked again
    when it is resolved."""
    try:
        validate_ref(value)
    except errors.InvalidName as e:
        raise errors.InvalidRef(str(e)) from e
    return value
