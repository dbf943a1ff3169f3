"""Every change of a branch record, through one compare-and-swap loop (lakeFS's ``retryBranchUpdate``).

A move is a function of the branch as it is now that returns the branch as it should be. ``update_branch`` reads
the record, applies the move and swaps it in on the condition that nobody changed it meanwhile; when somebody
did, it backs off (capped exponential, with jitter so racing writers do not retry in lockstep) and applies the
move again to the fresh record. Seals, resets, hard resets, reverts, cherry-picks and the inline merge all go
through it, with one try limit.

The one swap that is not retried here is the workflow's ``finish`` (``finish_move``): its move was planned on a
sealed state, and when the branch left that state the plan is stale, so the workflow plans again instead.

Tokens a move releases are recorded in the new record's ``retired_tokens`` in the same swap, stamped with the
time of the move, and stay readable for ``RETIRED_GRACE_SECONDS`` after it (lakeFS drops its staging tokens
asynchronously for the same reason). A reader reads the branch record first and the staging rows after: one that
read the record just before a commit's swap still looks for the committed changes in the sealed tokens, not in
the new head. Dropping them at once made such reads miss acknowledged objects (a listing without them, a 404);
keeping them for longer than any read can hold a record (a read is one request: API Gateway cuts the API at 29 s
and the S3 gateway's Lambda runs at most 300 s) makes every such read whole, with no extra read on the read path
(re-reading the branch after every listing page would cost one per page, and under a commit every 0.2 s a
listing that takes longer would never settle).

Expired tokens are dropped by ``release_expired``, never by a move: not inside a seal's compare-and-swap loop,
and not after a commit's swap either, where a large drop (a million rows is minutes of one DynamoDB partition's
writes) would make that commit, or the next one on the branch after a drop that failed, pay for it. The scheduled
sweep (``engine.collection.release_retired``, run every few minutes by the ``drop_retired`` function) calls it with a
deadline: it drops in pieces (deferred_drop.py) and strikes a token from the record by a swap of its own once
none of its rows is left; a drop that fails or runs out of time leaves the token listed for the next run.
"""

from __future__ import annotations

import logging
import random
import time
import uuid
from collections.abc import Callable, Sequence

from .. import errors
from ..ports import RefStore, StagingStore
from ..records import Branch, BranchID, Commit, RepositoryID, StagingToken
from ..writes.deferred_drop import Clock, drop_within
from ..writes.staging import drop_tokens
from ..writes.staging_shards import ESTIMATE_SAMPLE, choose_shards, one_shard_for, shard_count, with_shards

_log = logging.getLogger(__name__)

Sleep = Callable[[float], None]
Move = Callable[[Branch], "Branch | None"]

MOVE_TRIES = 10
BACKOFF_BASE_SECONDS = 0.05
BACKOFF_CAP_SECONDS = 5.0
# The finish of a workflow that lost its swap replans; a short pause keeps racing workflows out of lockstep.
REPLAN_PAUSE_SECONDS = (0.01, 0.1)
# How long a released token stays readable: longer than any read can hold the branch record from before the move
# (the S3 gateway's Lambda timeout, 300 s, is the longest), with room for clock skew between containers.
RETIRED_GRACE_SECONDS = 600.0
# A retired entry is "<token>|<unix seconds of the move>"; entries from before the stamp read as long expired.
_STAMP = "|"


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


def retire(branch: Branch, released: Sequence[StagingToken], now: float | None = None) -> tuple[StagingToken, ...]:
    """The retired entries of ``branch`` after a move at ``now`` releases ``released``: each stays readable until
    ``RETIRED_GRACE_SECONDS`` after the move, then ``release_expired`` drops it."""
    at = time.time() if now is None else now
    return (*branch.retired_tokens, *(StagingToken(f"{token}{_STAMP}{at:.3f}") for token in released))


def retired_token(entry: StagingToken) -> tuple[StagingToken, float]:
    """The token of a retired entry and the time it was retired (0 for an entry from before the stamp)."""
    token, sep, stamp = entry.rpartition(_STAMP)
    if sep:
        try:
            return StagingToken(token), float(stamp)
        except ValueError:
            pass
    return entry, 0.0


def retired_tokens(branch: Branch) -> list[StagingToken]:
    """The staging tokens behind the branch's retired entries (what deleting the branch must drop)."""
    return [retired_token(entry)[0] for entry in branch.retired_tokens]


def release_expired(
    refs: RefStore,
    staging: StagingStore,
    repo_id: RepositoryID,
    branch_id: BranchID,
    branch: Branch | None = None,
    now: float | None = None,
    deadline: float | None = None,
    clock: Clock = time.time,
) -> tuple[StagingToken, ...]:
    """Drops the tokens the branch retired more than ``RETIRED_GRACE_SECONDS`` ago and strikes them from the
    record; the entries still retired. ``branch``: a record of the branch the caller read or wrote (what is due on
    it is still listed or already dropped), saving a read. ``deadline`` (by ``clock``): stop dropping then, leaving
    the rest of a token listed for the next call (the sweep's budget); None drops every due token whole. Never
    raises for a failed drop or a lost swap: what is left is retried by the next call."""
    try:
        current = branch if branch is not None else refs.get_branch(repo_id, branch_id)
        at = time.time() if now is None else now
        live = {current.staging_token, *current.sealed_tokens}  # never drop what the branch still reads
        due = [
            e
            for e in current.retired_tokens
            if retired_token(e)[1] + RETIRED_GRACE_SECONDS <= at and retired_token(e)[0] not in live
        ]
        if not due:
            return current.retired_tokens
        if deadline is None:
            failed = set(drop_tokens(staging, [retired_token(e)[0] for e in due]))
            dropped = {e for e in due if retired_token(e)[0] not in failed}
        else:
            dropped = set()
            for entry in due:
                if clock() >= deadline:
                    break
                try:
                    if drop_within(staging, retired_token(entry)[0], deadline, clock):
                        dropped.add(entry)
                except errors.GravelerError:
                    _log.warning("dropping retired token %s failed; retried later", entry, exc_info=True)
        if not dropped:
            return current.retired_tokens

        def strike(b: Branch) -> Branch | None:
            if not dropped.intersection(b.retired_tokens):
                return None
            kept = tuple(e for e in b.retired_tokens if e not in dropped)
            return Branch(b.id, b.commit_id, b.staging_token, b.sealed_tokens, kept, b.hidden)

        _, new = update_branch(
            refs, repo_id, branch_id, strike, f"branch {branch_id} kept moving", first=current, tries=3
        )
        return new.retired_tokens
    except errors.GravelerError:
        # Dropped tokens left listed are dropped again (idempotent) by the next call; nothing is lost.
        _log.warning("releasing the retired tokens of branch %s failed; retried later", branch_id, exc_info=True)
        return ()


def sealed(staging: StagingStore, branch: Branch, token: StagingToken, rows_at_most: int | None = None) -> Branch:
    """The branch with its staging token sealed and ``token`` staging from now on (retired tokens untouched: their
    drop runs after a move, never inside this swap's loop).

    The new token's shard count is chosen here, once (staging_shards.choose_shards): from the rows the sealed token
    holds, as its sketch estimates them in one bounded read, and its rate over its age. Its age: the newest retired
    entry's stamp is the last move that released tokens, which came right after the seal that installed it (no
    such entry: older than the grace, or never moved, and the size alone decides). A branch that staged little
    keeps one shard.

    ``rows_at_most``: what the caller counted staged on this very record (all its tokens), when it counted them
    all: few enough (staging_shards.one_shard_for) and the next token takes one shard without the sample's read."""
    if one_shard_for(rows_at_most):
        shards = 1
    else:
        estimate = staging.sample(branch.staging_token, ESTIMATE_SAMPLE).estimated_rows
        stamps = [at for _, at in map(retired_token, branch.retired_tokens) if at > 0]
        age = time.time() - max(stamps) if stamps else None
        shards = choose_shards(estimate, shard_count(branch.staging_token), age)
    return Branch(
        branch.id,
        branch.commit_id,
        with_shards(token, shards),
        (branch.staging_token, *branch.sealed_tokens),
        branch.retired_tokens,
    )


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
    """Stores ``build(branch)`` and moves the branch to it, its sealed tokens retired (the sweep drops them once
    their grace is over, never this move). A lost swap rebuilds the commit from the branch as it now is."""
    built: list[Commit] = []

    def move(branch: Branch) -> Branch:
        commit = build(branch)
        refs.add_commit(repo_id, commit)
        built.append(commit)
        return Branch(branch.id, commit.id, branch.staging_token, (), retire(branch, branch.sealed_tokens))

    update_branch(refs, repo_id, branch_id, move, f"branch {branch_id} kept moving during the {what}", sleep)
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
    "RETIRED_GRACE_SECONDS",
    "finish_move",
    "move_to_commit",
    "new_staging_token",
    "release_expired",
    "retire",
    "retired_token",
    "retired_tokens",
    "seal",
    "seal_failure",
    "sealed",
    "update_branch",
]
