"""Dropping uncommitted changes of a branch: one object, everything under a prefix, or all of them.

A change staged in the branch's current token is simply forgotten, so the committed value shows again and the
branch is clean. A change in a sealed token (a commit is in progress) cannot be edited, so it is hidden instead:
the committed value, or a tombstone where nothing is committed, is staged over it, as lakeFS does. Whether a
commit racing the reset includes the change is up to which one comes first, as in lakeFS.
"""

from __future__ import annotations

from collections.abc import Callable

from ..identity import entry_identity
from ..ports import StagingStore
from ..records import Branch, Entry, Key, StagedEntry
from .staging import branch_tokens, staged_changes

__all__ = [
    "reset_key",
    "reset_prefix",
]

# key -> its committed entry at the branch head, or None.
Committed = Callable[[Key], Entry | None]


def reset_key(staging: StagingStore, branch: Branch, key: Key, committed: Committed) -> None:
    """Drops the uncommitted change of ``key`` (nothing happens when there is none)."""
    staging.delete(branch.staging_token, key)
    hidden = next((s for t in branch.sealed_tokens if (s := staging.get(t, key)) is not None), None)
    if hidden is None:
        return
    value = committed(key)
    if hidden.value is None and value is None:
        return
    if hidden.value is not None and value is not None and entry_identity(hidden.value) == entry_identity(value):
        return
    staging.set(branch.staging_token, StagedEntry(key, value))


def reset_prefix(staging: StagingStore, branch: Branch, prefix: str, committed: Committed) -> int:
    """Drops every uncommitted change of a key under ``prefix``; returns how many keys had one."""
    keys: list[Key] = []
    for staged in staged_changes(staging, branch_tokens(branch), prefix):
        if not staged.key.startswith(prefix):
            break
        keys.append(staged.key)
    for key in keys:
        reset_key(staging, branch, key, committed)
    return len(keys)
