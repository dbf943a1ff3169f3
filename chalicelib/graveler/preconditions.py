"""If-Match on an upload (a conditional overwrite): which object value the header names, and the staged row the
conditional write must still find (staging.stage_if makes the check and the write one)."""

from __future__ import annotations

from . import errors
from .committed import CommittedManager
from .ports import StagingStore
from .records import Branch, Entry, Key, MetaRangeID, StagedEntry


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
