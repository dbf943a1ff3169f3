"""A branch's staging area: the write path that survives a concurrent seal, and the merged read view.

A branch stages into its current token; a commit seals that token (moves it to the front of sealed_tokens) and
installs a fresh one. Reads consult the token, then sealed tokens newest first, then the committed data.
"""

from __future__ import annotations

import heapq
import logging
from collections.abc import Callable, Iterable, Iterator, Sequence

from . import errors
from .ports import RefStore, StagingStore
from .records import Branch, BranchID, Key, RepositoryID, StagedEntry, StagingToken

WRITE_TRIES = 3

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
) -> None:
    """Stages a change so that it is never lost to a concurrent commit.

    After writing, the branch is read again: if a commit sealed the token in between, the seal may have been
    read by the commit before or after our write, so the change is written again to the new token. A change that
    lands in both is committed once and stays staged with the same identity, which reads as no change.

    ``branch``: the branch as the caller read it in this request, saving the read before the write: any seal
    since that read is caught by the re-check after the write, exactly as one since a fresh read would be.
    """
    _stage_surviving_seals(refs, repo_id, branch_id, lambda token: staging.set(token, staged), repr(staged.key), branch)


def stage_many(
    refs: RefStore,
    staging: StagingStore,
    repo_id: RepositoryID,
    branch_id: BranchID,
    changes: Sequence[StagedEntry],
    branch: Branch | None = None,
) -> None:
    """Stages several changes as :func:`stage` does one, with the store's batch writes: all of them are written
    again to the new token when a commit sealed the old one meanwhile."""
    _stage_surviving_seals(
        refs, repo_id, branch_id, lambda token: staging.set_many(token, changes), f"{len(changes)} changes", branch
    )


def _stage_surviving_seals(
    refs: RefStore,
    repo_id: RepositoryID,
    branch_id: BranchID,
    write: Callable[[StagingToken], None],
    what: str,
    branch: Branch | None,
) -> None:
    current = branch if branch is not None else refs.get_branch(repo_id, branch_id)
    for _ in range(WRITE_TRIES):
        written_to = current.staging_token
        write(written_to)
        # The re-check, always a fresh read: it is what guarantees the change survives a concurrent seal. When
        # the token moved, this same read gives the token to write again to (no second read).
        current = refs.get_branch(repo_id, branch_id)
        if current.staging_token == written_to:
            return
    raise errors.TooManyTries(f"branch {branch_id} kept changing while writing {what}")


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


def delete_keys(staging: StagingStore, tokens: Iterable[StagingToken], keys: Sequence[Key]) -> tuple[StagingToken, ...]:
    """As :func:`drop_tokens`, for tokens whose every key the caller knows: deletes those keys, with no listing."""
    failed: list[StagingToken] = []
    for token in tokens:
        try:
            staging.delete_many(token, keys)
        except errors.GravelerError:
            _log.warning(
                "deleting the keys of staging token %s failed; the next seal of the branch drops it",
                token,
                exc_info=True,
            )
            failed.append(token)
    return tuple(failed)


def token_is_empty(staging: StagingStore, token: StagingToken) -> bool:
    return next(iter(staging.iterate(token, first_page=1)), None) is None


def is_dirty(staging: StagingStore, branch: Branch) -> bool:
    return any(True for _ in staged_changes(staging, branch_tokens(branch)))
