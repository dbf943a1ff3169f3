"""The three-way merge table, key by key: what the merge of one key gives, from its identity on each side.

An identity is ``identity.entry_identity`` of the key's entry, or None where the key does not exist. Two entries
with the same identity are the same object (the same content re-uploaded elsewhere is unchanged).

    base      source     destination   result
    --------  ---------  ------------  ------------------------------------------------------------
    any       X          X             X          unchanged, changed identically, deleted on both
    B         X != B     B             source     changed or deleted on the source only
    B         B          X != B        dest       changed or deleted on the destination only
    absent    X          absent        source     added on the source only
    absent    absent     X             dest       added on the destination only
    B         X != B     Y != B, X     conflict   changed differently, or changed on one and deleted
    absent    X          Y != X        conflict   added on both with different content
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from ..records import Entry, Key

__all__ = ["Action", "Decision", "KeyConflict"]


class Decision(enum.Enum):
    """Which side's value a key takes. TAKE_SOURCE and TAKE_DEST may mean "absent" (a deletion)."""

    TAKE_SOURCE = "source"
    TAKE_DEST = "dest"
    CONFLICT = "conflict"


class Action(enum.StrEnum):
    """What one side did to a key since the merge base."""

    UNCHANGED = "unchanged"
    ADDED = "added"
    CHANGED = "changed"
    DELETED = "deleted"


def decide(base: bytes | None, source: bytes | None, dest: bytes | None) -> Decision:
    """The table above. Equal identities on both sides take the source's entry, as lakeFS does."""
    if source == dest or dest == base:
        return Decision.TAKE_SOURCE
    if source == base:
        return Decision.TAKE_DEST
    return Decision.CONFLICT


def action(base: bytes | None, side: bytes | None) -> Action:
    if side == base:
        return Action.UNCHANGED
    if base is None:
        return Action.ADDED
    if side is None:
        return Action.DELETED
    return Action.CHANGED


@dataclass(frozen=True, slots=True)
class KeyConflict:
    """A key the merge could not resolve (or resolved by a strategy: then ``resolution`` names the side). Here, with
    the table, rather than beside the merge walk: the error tree (errors.MergeConflicts) carries these records."""

    key: Key
    source: Action
    destination: Action
    source_entry: Entry | None
    dest_entry: Entry | None
    resolution: Decision | None = None
