"""A branch's staging area: the write path that survives a concurrent seal, and the merged read view.

A branch stages into its current token; a commit seals that token (moves it to the front of sealed_tokens) and
installs a fresh one. Reads consult the token, then sealed tokens newest first, then the committed data.
"""

from __future__ import annotations

import heapq
import logging
from collections.abc import Callable, Iterable, Iterator, Sequence

from .. import errors
from ..ports import RefStore, StagingStore
from ..records import Branch, BranchID, BranchKey, Key, RepositoryID, StagedEntry, StagedExpectation, StagingToken
from .preconditions import check_atomic_changes

__all__ = [
    "branch_tokens",
    "drop_tokens",
    "is_dirty",
    "read_staged",
    "stage",
    "stage_many",
    "staged_changes",
    "token_is_empty",
]

WRITE_TRIES = 3
# A conditional write evaluates its precondition again after each seal that refused it (stage_checked).
CONDITIONAL_TRIES = 5

_log = logging.getLogger(__name__)


def branch_tokens(branch: Branch) -> list:  # type: ignore[type-arg]
    """The branch's tokens, newest first: the one writes go to, then the sealed ones."""
    return [branch.staging_token, *branch.sealed_tokens]


def stage(
    refs: RefStore,
    staging: StagingStore,
    repo_id: RepositoryID,
    branch_id: BranchID,
    staged: StagedEntry,
    branch: Branch | None = None,
) -> Branch:
    """Stages a change so that it is never lost to a concurrent commit; answers the branch as the re-check after
    the write read it (the change is staged in its token).

    After writing, the branch is read again: if a commit sealed the token in between, the seal may have been
    read by the commit before or after our write, so the change is written again to the new token. A change that
    lands in both is committed once and stays staged with the same identity, which reads as no change.

    ``branch``: the branch as the caller read it in this request, saving the read before the write: any seal
    since that read is caught by the re-check after the write, exactly as one since a fresh read would be.
    Raises TooManyTries when the branch kept moving, with the change withdrawn (see ``_withdraw``).

    The caller's ``branch`` may be older than this request, as long as it is recent: a write to a token sealed
    since is caught by the re-check and written again, and one to a token a move retired since is dropped with it
    by the sweep (branch_moves.RETIRED_GRACE_SECONDS).
    """
    return _stage_surviving_seals(refs, staging, repo_id, branch_id, [staged], repr(staged.key), branch)


def stage_checked(
    refs: RefStore,
    staging: StagingStore,
    repo_id: RepositoryID,
    branch: Branch,
    changes: Sequence[StagedEntry],
    expect: Callable[[Branch], Sequence[StagedExpectation]],
    first: Sequence[StagedExpectation] | None = None,
) -> None:
    """Stages the changes (one, or several atomically) as ONE conditional write to the branch's current token:
    each key's row there must still be what ``expect(branch)`` said (it raises PreconditionFailed when the
    caller's precondition fails on the branch as it is: preconditions.expectations), and the branch's staging
    token must still be the token written to (StagingStore.set_if's ``current_of``), both checked by the store
    in the write itself. ``first``: the expectations the caller already evaluated on ``branch``.

    A write that lands did so while its token was current, so the commit that seals it reads it, and no writer
    that reads the branch after it can miss it: of concurrent create-only writers of one path exactly one wins,
    and of If-Match writers expecting one value at most one. A refused write changed nothing, and the
    precondition is evaluated again on the branch as it now is: PreconditionFailed when it no longer holds, or
    when a row the write expected changed in a token still current; else the write is made again, to the new
    token when a seal moved it (never to a sealed one, where a writer that already checked it could have missed
    it). TooManyTries after CONDITIONAL_TRIES; Invalid beyond the limits of one atomic write
    (preconditions.check_atomic_changes)."""
    expected = list(first) if first is not None else list(expect(branch))
    if len(changes) > 1:
        check_atomic_changes(list(zip(changes, expected, strict=True)))
    for _ in range(CONDITIONAL_TRIES):
        token = branch.staging_token
        guard = BranchKey(repo_id, branch.id)
        if len(changes) == 1:
            written = staging.set_if(token, changes[0], expected[0], guard)
        else:
            written = staging.set_if_all(token, list(zip(changes, expected, strict=True)), guard)
        if written:
            return
        branch = refs.get_branch(repo_id, branch.id)
        again = list(expect(branch))  # raises PreconditionFailed when a precondition no longer holds
        if branch.staging_token == token and again != expected:
            what = f"object {changes[0].key}" if len(changes) == 1 else f"one of {len(changes)} objects"
            raise errors.PreconditionFailed(f"{what} changed since it was read; nothing was written")
        # A seal moved the token, or nothing the write expected changed (DynamoDB cancels a transaction that
        # meets another write of one of its items, such as a commit's swap of the branch): write again.
        expected = again
    raise errors.TooManyTries(f"branch {branch.id} kept sealing its staging token during a conditional write")


def stage_many(
    refs: RefStore,
    staging: StagingStore,
    repo_id: RepositoryID,
    branch_id: BranchID,
    changes: Sequence[StagedEntry],
    branch: Branch | None = None,
) -> Branch:
    """Stages several changes as :func:`stage` does one, with the store's batch writes: all of them are written
    again to the new token when a commit sealed the old one meanwhile."""
    return _stage_surviving_seals(refs, staging, repo_id, branch_id, changes, f"{len(changes)} changes", branch)


def _stage_surviving_seals(
    refs: RefStore,
    staging: StagingStore,
    repo_id: RepositoryID,
    branch_id: BranchID,
    changes: Sequence[StagedEntry],
    what: str,
    branch: Branch | None,
) -> Branch:
    current = branch if branch is not None else refs.get_branch(repo_id, branch_id)
    # What each write replaced, per token: a refused write puts it back (``_withdraw``).
    replaced: list[tuple[StagingToken, dict[Key, StagedEntry]]] = []
    for _ in range(WRITE_TRIES):
        written_to = current.staging_token
        if len(changes) == 1:
            old = staging.set(written_to, changes[0])
            replaced.append((written_to, {changes[0].key: old} if old is not None else {}))
        else:
            replaced.append((written_to, staging.get_many(written_to, [c.key for c in changes])))
            staging.set_many(written_to, changes)
        # The re-check, always what a consistent read returns now (the ref cache answers it only where a witness says
        # the branch table is unchanged since it read it): it guarantees the change survives a concurrent seal. When
        # the token moved, this same read gives the token to write again to (no second read).
        try:
            current = refs.get_branch(repo_id, branch_id)
        except errors.BranchNotFound:
            _withdraw(staging, replaced, changes)  # deleted meanwhile: leave nothing in the tokens it had
            raise
        if current.staging_token == written_to:
            return current
    _withdraw(staging, replaced, changes)
    raise errors.TooManyTries(f"branch {branch_id} kept changing while writing {what}; nothing was written")


def _withdraw(
    staging: StagingStore,
    replaced: Sequence[tuple[StagingToken, dict[Key, StagedEntry]]],
    changes: Sequence[StagedEntry],
) -> None:
    """Takes a refused write back out of the tokens it was written to (all sealed by now), newest first, putting
    back what it replaced there: left in place, the next commit of those tokens would publish a change answered
    429. A row is touched only while it is still exactly this change (an object's entry names its own new
    physical address); a commit that already read a token keeps what it read, the window this cannot close."""
    latest = {change.key: change for change in changes}
    for token, earlier in reversed(replaced):
        for key, change in latest.items():
            if staging.get(token, key) != change:
                continue  # replaced since by another write, or never written here
            previous = earlier.get(key)
            if previous is None:
                staging.delete(token, key)
            else:
                staging.set(token, previous)


def read_staged(staging: StagingStore, branch: Branch, key: Key) -> StagedEntry | None:
    """The newest staged change of the key across the branch's tokens, or None when nothing is staged."""
    for token in branch_tokens(branch):
        found = staging.get(token, key)
        if found is not None:
            return found
    return None


def staged_changes(
    staging: StagingStore,
    tokens: list[StagingToken],
    from_key: str = "",
    first_page: int | None = None,
) -> Iterator[StagedEntry]:
    """The merged changes of several tokens (newest first in ``tokens``) in key order: the newest wins a key."""
    streams = [
        ((staged.key, rank, staged) for staged in staging.iterate(token, from_key, first_page))
        for rank, token in enumerate(tokens)
    ]
    last: str | None = None
    for key, _, staged in heapq.merge(*streams, key=lambda item: (item[0], item[1])):
        if key != last:
            last = key
            yield staged


def drop_tokens(staging: StagingStore, tokens: Iterable[StagingToken]) -> tuple[StagingToken, ...]:
    """Drops the tokens' staged rows; returns the tokens whose drop failed, for a later retry (drops are
    idempotent). Used after a branch moved: the move is what the caller was promised, so a failing drop must not
    turn it into an error."""
    failed: list[StagingToken] = []
    for token in tokens:
        try:
            staging.drop(token)
        except errors.GravelerError:
            _log.warning(
                "dropping staging token %s failed; the next seal of the branch retries it", token, exc_info=True
            )
            failed.append(token)
    return tuple(failed)


def token_is_empty(staging: StagingStore, token: StagingToken) -> bool:
    return next(iter(staging.iterate(token, first_page=1)), None) is None


def is_dirty(staging: StagingStore, branch: Branch) -> bool:
    return any(True for _ in staged_changes(staging, branch_tokens(branch)))
