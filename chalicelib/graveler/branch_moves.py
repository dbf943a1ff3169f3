"""Every change of a branch record, through one compare-and-swap loop (lakeFS's ``retryBranchUpdate``).

A move is a function of the branch as it is now that returns the branch as it should be. ``update_branch`` reads
the record, applies the move and swaps it in on the condition that nobody changed it meanwhile; when somebody
did, it backs off (capped exponential, with jitter so racing writers do not retry in lockstep) and applies the
move again to the fresh record. Seals, resets, hard resets, reverts, cherry-picks and the inline merge all go
through it, with one try limit.

The one swap that is not retried here is the workflow's ``finish`` (``finish_move``): its move was planned on a
sealed state, and when the branch left that state the plan is stale, so the workflow plans again instead.

Tokens a move releases are recorded in the new record's ``retired_tokens`` in the same swap and dropped right
after it; a drop that fails is retried by the next seal, which drops the retired tokens first.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable, Sequence

from . import errors
from .ports import RefStore, StagingStore
from .records import Branch, BranchID, Commit, RepositoryID, StagingToken
from .staging import drop_tokens

Sleep = Callable[[float], None]
Move = Callable[[Branch], "Branch | None"]

MOVE_TRIES = 10
BACKOFF_BASE_SECONDS = 0.05
BACKOFF_CAP_SECONDS = 5.0
# The finish of a workflow that lost its swap replans; a short pause keeps racing workflows out of lockstep.
REPLAN_PAUSE_SECONDS = (0.01, 0.1)


def new_staging_token(repo_id: str, branch_id: str) -> StagingToken:
    return StagingToken(f"{repo_id}-{branch_id}:{uuid.uuid4()}")


def backoff(sleep: Sleep | None, attempt: int) -> None:
    """Waits before try ``attempt + 1`` (no wait without a ``sleep``: the workflow steps' own retries pace them)."""
    if sleep is not None:
        sleep(min(BACKOFF_CAP_SECONDS, BACKOFF_BASE_SECONDS * 2**attempt) * random.uniform(0.5, 1.0))


def update_branch(
    refs: RefStore,
    repo_id: RepositoryID,
    branch_id: BranchID,
    move: Move,
    failure: str,
    sleep: Sleep | None = None,
    tries: int = MOVE_TRIES,
    first: Branch | None = None,
) -> tuple[Branch, Branch]:
    """Replaces the branch by ``move(branch)`` with a compare-and-swap, applying ``move`` again to the fresh record
    whenever the branch changed meanwhile; (old, new). ``move`` returns None when the branch needs no write (then
    old is new). Raises what ``move`` raises, BranchNotFound, and TooManyTries(``failure``) after ``tries`` lost
    swaps.

    ``first``: the branch as the caller read it earlier in this request, used for the first try instead of a
    read: the swap is conditional on the record being exactly that, so a stale one only costs a lost swap. A move
    that refuses that record (NoChanges, say) is believed only once a read shows the record unchanged."""
    for attempt in range(tries):
        unverified = attempt == 0 and first is not None
        branch = first if unverified and first is not None else refs.get_branch(repo_id, branch_id)
        try:
            changed = move(branch)
        except errors.GravelerError:
            if unverified and refs.get_branch(repo_id, branch_id) != branch:
                continue  # decided on a record that has moved since: decide again on the current one
            raise
        if changed is None:
            return branch, branch
        try:
            refs.set_branch(repo_id, changed, expected=branch)
        except errors.Conflict:
            backoff(sleep, attempt)
            continue
        return branch, changed
    raise errors.TooManyTries(failure)


def retire(branch: Branch, released: Sequence[StagingToken]) -> tuple[StagingToken, ...]:
    """The retired tokens of ``branch`` after a move releases ``released`` (dropped right after the move; kept
    listed so that a failed drop is retried by the next seal)."""
    return (*branch.retired_tokens, *released)


def sealed(staging: StagingStore, branch: Branch, token: StagingToken) -> Branch:
    """The branch with its staging token sealed and ``token`` staging from now on. The tokens earlier moves
    retired are dropped first (their drop had failed): only those still failing stay retired."""
    retired = drop_tokens(staging, branch.retired_tokens)
    return Branch(branch.id, branch.commit_id, token, (branch.staging_token, *branch.sealed_tokens), retired)


def seal_failure(branch_id: str) -> str:
    return f"branch {branch_id} kept changing while sealing its staging area"


def seal(
    refs: RefStore, staging: StagingStore, repo_id: RepositoryID, branch_id: BranchID, sleep: Sleep | None = None
) -> Branch:
    """Seals the branch's staging token under a fresh one (what lakeFS does before a head moves); the new record."""
    _, new = update_branch(
        refs,
        repo_id,
        branch_id,
        lambda b: sealed(staging, b, new_staging_token(repo_id, branch_id)),
        seal_failure(branch_id),
        sleep,
    )
    return new


def move_to_commit(
    refs: RefStore,
    staging: StagingStore,
    repo_id: RepositoryID,
    branch_id: BranchID,
    build: Callable[[Branch], Commit],
    what: str,
    sleep: Sleep | None = None,
) -> Commit:
    """Stores ``build(branch)`` and moves the branch to it, its sealed tokens released (then dropped). A lost swap
    rebuilds the commit from the branch as it now is."""
    built: list[Commit] = []

    def move(branch: Branch) -> Branch:
        commit = build(branch)
        refs.add_commit(repo_id, commit)
        built.append(commit)
        return Branch(branch.id, commit.id, branch.staging_token, (), retire(branch, branch.sealed_tokens))

    old, _ = update_branch(refs, repo_id, branch_id, move, f"branch {branch_id} kept moving during the {what}", sleep)
    drop_tokens(staging, old.sealed_tokens)
    return built[-1]


def finish_move(
    refs: RefStore,
    repo_id: RepositoryID,
    branch_id: BranchID,
    commit: Commit,
    tokens: tuple[StagingToken, ...],
    sleep: Sleep | None = None,
    planned: Branch | None = None,
) -> bool | None:
    """The last step of a workflow: stores ``commit`` and swaps the branch to it from the state it was planned on
    (its head the commit's first parent, ``tokens`` sealed), keeping the staging token and retiring ``tokens``.

    True when the branch now points at the commit (also when it already did: a retry after the swap); None when
    the branch left the planned state (plan again).

    ``planned``: the branch record the plan was made on, when the caller holds it (an inline commit): the swap is
    tried from it without reading the branch first; when the record changed since, the swap loses and the
    branch is read to tell a retry after our own swap from a replan.
    """
    if planned is not None and planned.commit_id == commit.parents[0] and planned.sealed_tokens == tokens:
        refs.add_commit(repo_id, commit)
        moved = Branch(planned.id, commit.id, planned.staging_token, (), retire(planned, tokens))
        try:
            refs.set_branch(repo_id, moved, expected=planned)
            return True
        except errors.Conflict:
            pass  # the branch changed since the plan: read it and decide below
    branch = refs.get_branch(repo_id, branch_id)
    if branch.commit_id == commit.id:
        return True
    if branch.commit_id != commit.parents[0] or branch.sealed_tokens != tokens:
        return None
    refs.add_commit(repo_id, commit)
    moved = Branch(branch.id, commit.id, branch.staging_token, (), retire(branch, tokens))
    try:
        refs.set_branch(repo_id, moved, expected=branch)
    except errors.Conflict:
        # A seal or a commit moved the branch between our read and our swap (writes never change the record).
        if sleep is not None:
            sleep(random.uniform(*REPLAN_PAUSE_SECONDS))
        return None
    return True


__all__ = [
    "MOVE_TRIES",
    "finish_move",
    "move_to_commit",
    "new_staging_token",
    "retire",
    "seal",
    "sealed",
    "update_branch",
]
