"""Preconditions of a staged write (If-Match: a conditional overwrite; If-None-Match: *, create-only): whether the
branch's value satisfies them, and the staged row the conditional write must still find (staging.stage_checked
makes the check and the write one); the limits of a write of
several such rows as one (StagingStore.set_if_all)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .. import errors
from ..committed import CommittedManager
from ..ports import StagingStore
from ..records import ABSENT, Branch, Entry, Key, MetaRangeID, StagedEntry, StagedExpectation

__all__ = [
    "CREATE_ONLY",
    "MAX_ATOMIC_BYTES",
    "MAX_ATOMIC_CHANGES",
    "Precondition",
    "check_atomic_changes",
    "etag_matches",
    "expectations",
]


def etag_matches(if_match: str, etag: str) -> bool:
    """Whether an If-Match value (``*``, or a comma-separated list of ETags, quoted or not, weak or strong)
    names ``etag``. The client's ETag is the object's checksum, which stat, the object's ETag header and S3 give."""
    for candidate in if_match.split(","):
        value = candidate.strip()
        if value == "*":
            return True
        if value.removeprefix("W/").strip('"') == etag:
            return True
    return False


@dataclass(frozen=True, slots=True)
class Precondition:
    """A write's precondition on its path: ``if_match`` an If-Match value (``*``: any object), ``if_absent``
    If-None-Match: * (never both); with neither, the row the branch's token holds for the path as it was read
    (an atomic upload's plain object: a write of the path in between refuses it)."""

    if_match: str | None = None
    if_absent: bool = False


CREATE_ONLY = Precondition(if_absent=True)


def expectations(
    staging: StagingStore,
    committed: CommittedManager,
    namespace: str,
    metarange: Callable[[Branch], MetaRangeID],
    branch: Branch,
    wanted: Sequence[tuple[Key, Precondition]],
) -> list[StagedExpectation]:
    """For each (key, precondition), after checking it against what the branch shows now (its current token, then
    its sealed tokens newest first, then its head's tree: ``metarange(branch)``), the row the conditional write
    to the current token must still find there (StagingStore.set_if). Raises PreconditionFailed when a
    precondition does not hold.

    If-None-Match: ABSENT (no row, or a tombstone) when nothing shows; an object in an older layer fails at once.
    If-Match: the token's row when the value shown comes from it, else None (no row: a write of the key since
    shows). Either way the write is also guarded by the branch's token (staging.stage_checked): a seal in between
    makes it evaluate again, so the older layers checked here cannot have changed under it."""
    keys = [key for key, _ in wanted]
    if len(keys) == 1:
        row = staging.get(branch.staging_token, keys[0])
        in_token = {keys[0]: row} if row is not None else {}
    else:
        in_token = staging.get_many(branch.staging_token, keys)
    found: list[StagedExpectation] = []
    for key, precondition in wanted:
        row = in_token.get(key)
        if not precondition.if_absent and precondition.if_match is None:
            found.append(row)
            continue
        shown = row.value if row is not None else _older(staging, committed, namespace, metarange, branch, key)
        if precondition.if_absent:
            if shown is not None:
                raise errors.PreconditionFailed(f"object {key} already exists")
            found.append(ABSENT)
            continue
        if shown is None:
            raise errors.PreconditionFailed(f"object {key} does not exist (If-Match)")
        if not etag_matches(precondition.if_match or "", shown.etag):
            raise errors.PreconditionFailed(f"object {key} has another ETag (If-Match)")
        found.append(row)
    return found


def _older(
    staging: StagingStore,
    committed: CommittedManager,
    namespace: str,
    metarange: Callable[[Branch], MetaRangeID],
    branch: Branch,
    key: Key,
) -> Entry | None:
    """What the branch shows at a key its current token has no row for: the newest sealed token's row, else the
    head's tree (None: nothing, or a tombstone)."""
    for token in branch.sealed_tokens:
        staged = staging.get(token, key)
        if staged is not None:
            return staged.value
    return committed.get(namespace, metarange(branch), key)


# DynamoDB's limits on one TransactWriteItems: 100 items and 4 MB in all. Both twins refuse more the same way, so
# a caller learns the limit from the memory twin as from AWS.
MAX_ATOMIC_CHANGES = 100
MAX_ATOMIC_BYTES = 4_000_000
# What a staged row carries besides its key and entry fields (attribute names, the token, the type bytes): a generous
# allowance, so that the estimate errs on the side of refusing.
_ROW_OVERHEAD_BYTES = 512


def check_atomic_changes(changes: Sequence[tuple[StagedEntry, StagedExpectation]]) -> None:
    """Raises Invalid for what one atomic conditional write cannot take (StagingStore.set_if_all): no change, more
    than MAX_ATOMIC_CHANGES, a key named twice, or rows estimated over MAX_ATOMIC_BYTES."""
    if not changes:
        raise errors.Invalid("an atomic write needs at least one change")
    if len(changes) > MAX_ATOMIC_CHANGES:
        raise errors.Invalid(f"at most {MAX_ATOMIC_CHANGES} changes are written atomically, not {len(changes)}")
    keys = [staged.key for staged, _ in changes]
    if len(set(keys)) != len(keys):
        raise errors.Invalid("an atomic write names each key once")
    size = sum(_row_bytes(staged) for staged, _ in changes)
    if size > MAX_ATOMIC_BYTES:
        raise errors.Invalid(f"the changes take about {size} bytes; at most {MAX_ATOMIC_BYTES} are written atomically")


def _row_bytes(staged: StagedEntry) -> int:
    size = _ROW_OVERHEAD_BYTES + len(staged.key.encode("utf-8", "surrogatepass"))
    entry = staged.value
    if entry is not None:
        texts = [entry.physical_address, entry.etag, entry.content_type]
        texts += [text for pair in entry.user_metadata.items() for text in pair]
        size += sum(len(text.encode("utf-8", "surrogatepass")) for text in texts)
    return size
