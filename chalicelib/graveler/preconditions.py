"""If-Match on an upload (a conditional overwrite): which object value the header names, and the staged row the
conditional write must still find (staging.stage_if makes the check and the write one); the limits of a write of
several such rows as one (StagingStore.set_if_all)."""

from __future__ import annotations

from collections.abc import Sequence

from . import errors
from .committed import CommittedManager
from .ports import StagingStore
from .records import Branch, Entry, Key, MetaRangeID, StagedEntry

__all__ = [
    "MAX_ATOMIC_BYTES",
    "MAX_ATOMIC_CHANGES",
    "check_atomic_changes",
    "etag_matches",
    "expected_row",
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


def expected_row(
    staging: StagingStore,
    committed: CommittedManager,
    namespace: str,
    metarange: MetaRangeID,
    branch: Branch,
    key: Key,
    if_match: str,
) -> StagedEntry | None:
    """The key's row in the branch's current token (None when the value the branch shows comes from a sealed
    token or the committed tree), after checking that the branch shows an object whose ETag the header names.
    Raises PreconditionFailed when it shows none (missing or deleted) or another one."""
    in_token = staging.get(branch.staging_token, key)
    staged = in_token
    for token in branch.sealed_tokens:
        if staged is not None:
            break
        staged = staging.get(token, key)
    current: Entry | None = staged.value if staged is not None else committed.get(namespace, metarange, key)
    if current is None:
        raise errors.PreconditionFailed(f"object {key} does not exist (If-Match)")
    if not etag_matches(if_match, current.etag):
        raise errors.PreconditionFailed(f"object {key} has another ETag (If-Match)")
    return in_token


# DynamoDB's limits on one TransactWriteItems: 100 items and 4 MB in all. Both twins refuse more the same way, so
# a caller learns the limit from the memory twin as from AWS.
MAX_ATOMIC_CHANGES = 100
MAX_ATOMIC_BYTES = 4_000_000
# What a staged row carries besides its key and entry fields (attribute names, the token, the type bytes): a generous
# allowance, so that the estimate errs on the side of refusing.
_ROW_OVERHEAD_BYTES = 512


def check_atomic_changes(changes: Sequence[tuple[StagedEntry, StagedEntry | None]]) -> None:
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
