"""A commit as idempotent steps, for running it as a workflow (one Lambda per step, slices in parallel).

The steps, each safe to re-run after a crash before or after its side effect:

- ``seal``: moves the staging token to the sealed tokens with a compare-and-swap, installing a token derived from
  the request id, so a retry recognises its own seal instead of sealing again.
- ``plan``: reads the branch and cuts the key space into slices along the base metarange's range boundaries;
  when the base has too few ranges (a first commit has none), at staged keys sampled between them from the sealed
  tokens' sketches (graveler/writes/staging_shards.py: a bounded read, whatever the number of staged rows). Each slice
  is a small JSON record (bounds, base metarange, sealed tokens).
- ``build_slice``: applies the slice's staged changes to the base ranges inside it and stores the result as a
  (content-addressed) metarange of its own: re-running writes the same objects under the same ids.
- ``finish``: concatenates the slices' ranges into one metarange, stores the commit (its id is a content hash,
  so storing it again is a no-op) and compare-and-swaps the branch from the sealed state it planned on. If the
  branch moved meanwhile it answers "replan" (the workflow goes back to ``plan``); if the branch already points
  at this commit (a retry after the swap) it answers as the first run did.
The tokens a commit released stay readable for readers that read the branch before its swap; no step of a commit
drops anything: the scheduled sweep drops retired tokens once their grace is over (branch_moves.release_expired,
deferred_drop.py), so neither this commit nor the next pays for a drop.

Content-defined cuts: a slice starts at a base range boundary, so its ranges are exactly those a single pass
would write from there, as long as the single pass is between ranges at that point. When it is not (the slice
before ended with a range that its writer closed only because the slice ended), ``finish`` streams that range
and the next slice's ranges through a writer until a cut falls on one of the next slice's own boundaries; from
there the two agree. So the metarange is the same, with the same id, as ``engine.commits.commit`` would write.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

from .. import errors
from ..branches.branch_moves import finish_move, retired_tokens, seal_failure, sealed, update_branch
from ..branches.protection import BranchProtection, NoProtection
from ..committed.apply import apply_changes
from ..committed.params import RangeParams, params_for_format
from ..committed.storage import CommittedStorage
from ..committed.writer import RangeWriter
from ..identity import new_commit
from ..ports import BlockStore, RefStore, StagingStore
from ..records import (
    Branch,
    BranchID,
    Commit,
    CommitID,
    MetaRangeID,
    RepositoryID,
    StagedEntry,
    StagingToken,
)
from ..runs import slicing
from ..runs.slicing import DEFAULT_MAX_SLICES, slice_bounds, spread_bounds
from ..writes.staging import staged_changes, token_is_empty
from ..writes.staging_shards import sample_union, unsharded
from ..writes.staging_snapshot import SHARED_ROWS, SnapshotStaging, shared_read
from .plan import COMMITTED, REPLAN, BuiltSlice, CommitBase, CommitPlan, Finish, Sealed, SliceSpec
from .request import CommitRequest, request_token


class CommitSteps:
    """The steps over the ports. ``params`` are the current range format's (those of the engine's
    CommittedManager); each repository's writes cut with its own format's (its plan carries the format)."""

    def __init__(
        self,
        refs: RefStore,
        staging: StagingStore,
        blocks: BlockStore,
        params: RangeParams,
        *,
        storage: CommittedStorage | None = None,
        cache_size: int = 64,
        cache_bytes: int = 64 * 2**20,
        sleep: Any = None,
        guard: BranchProtection | NoProtection | None = None,
    ) -> None:
        self.refs = refs
        self.staging = staging
        self.params = params
        self.storage = storage or CommittedStorage(blocks, cache_size, cache_bytes)
        self._sleep = sleep
        self.guard = guard or NoProtection()

    # ---- seal -----------------------------------------------------------------------------------------------

    def seal(self, request: CommitRequest) -> Sealed:
        """Seals the branch's staging token; returns the token this request sealed."""
        return Sealed(self._seal(request)[0])

    def _seal(
        self,
        request: CommitRequest,
        read: Branch | None = None,
        staged_seen: bool = False,
        staged_rows: int | None = None,
    ) -> tuple[str, Branch]:
        """The token this request sealed, and the branch record after the seal. ``read``: the branch as this
        request already read it (the swap is conditional on it, so it saves a read and risks nothing);
        ``staged_seen``: the caller saw changes staged on ``read``, so sealing it needs no emptiness check (a
        reset emptying it meanwhile makes the commit "no changes" at its finish instead); ``staged_rows``: how many
        changes it counted on ``read`` when it counted them all (None otherwise), so a small token's seal needs no
        sample to size the next one (branch_moves.sealed)."""
        repo_id, branch_id = RepositoryID(request.repository), BranchID(request.branch)
        repo = self.refs.get_repository(repo_id)
        if repo.read_only and not request.force:
            raise errors.ReadOnlyRepository(repo_id)
        params_for_format(repo.range_format, self.params)  # a format this release cannot cut fails before the seal
        # The first step of every commit, inline or in the workflow: a protected branch takes merges only.
        self.guard.refuse_commit(repo, branch_id)
        mine = request_token(request.repository, request.branch, request.request_id)
        found: list[str] = []

        def move(branch: Branch) -> Branch | None:
            found.clear()
            # The token we install carries a shard count chosen at the seal (staging_shards): compare names
            # without it.
            if unsharded(branch.staging_token) == mine:
                # Our seal already happened (a retry after the swap): the token it moved away is the newest
                # sealed one, or nothing is sealed because that token was committed since.
                found.append(branch.sealed_tokens[0] if branch.sealed_tokens else "")
                return None
            if mine in [unsharded(t) for t in retired_tokens(branch)]:
                # Sealed, then committed by now (a seal retried long after its swap): sealing it again would
                # make a retired token, due to be dropped, the staging token.
                found.append("")
                return None
            names = [unsharded(t) for t in branch.sealed_tokens]
            if mine in names:
                # A later seal sealed our token too: the one we sealed comes right after it.
                rest = branch.sealed_tokens[names.index(mine) + 1 :]
                found.append(rest[0] if rest else "")
                return None
            if not (staged_seen and branch is read) and not request.allow_empty and _is_empty(self.staging, branch):
                raise errors.NoChanges(f"no changes to commit on branch {branch_id}")
            found.append(branch.staging_token)
            return sealed(self.staging, branch, mine, staged_rows if branch is read else None)

        _, now = update_branch(self.refs, repo_id, branch_id, move, seal_failure(branch_id), self._sleep, first=read)
        return found[0], now

    # ---- plan -----------------------------------------------------------------------------------------------

    def plan(
        self,
        request: CommitRequest,
        sealed_token: str,
        max_slices: int = DEFAULT_MAX_SLICES,
        branch: Branch | None = None,
    ) -> CommitPlan:
        """The slices to build, or a plan that is ``done`` when our own finish committed our sealed token already
        (a retry). Raises NoChanges when a racing commit took our sealed token: its answer is its own.

        ``branch``: the record this very request just wrote (its seal), planned on without a read; a plan on a
        record that moved since is caught by the finish's compare-and-swap, which then plans again from a read."""
        repo_id, branch_id = RepositoryID(request.repository), BranchID(request.branch)
        repo = self.refs.get_repository(repo_id)
        if branch is None:
            branch = self.refs.get_branch(repo_id, branch_id)
        if sealed_token not in branch.sealed_tokens:
            # Committed already: by this very request (its finish swapped, then a retry planned again), or by a
            # racing commit that took every sealed token, ours too. That commit answers its own request only.
            own = _own_commit(self.refs, repo_id, branch.commit_id, request)
            if own is None:
                raise errors.NoChanges(f"no changes to commit on branch {branch_id}: a concurrent commit took them")
            return CommitPlan(True, head=own)
        head = self.refs.get_commit(repo_id, branch.commit_id)
        ranges = self.storage.metarange(repo.storage_namespace, head.meta_range_id).ranges
        tokens = tuple(branch.sealed_tokens)
        bounds = slice_bounds(ranges, max_slices)
        if len(bounds) < max_slices:
            # Too few base ranges to keep the Map busy (a first commit has none): cut where the staged keys
            # are, at keys between the base ranges. The keys come from each sealed token's sketch, a bounded read
            # whatever the tokens hold (staging_shards), not from a pass over the staged rows.
            keys = sample_union(self.staging.sample(token, slicing.SAMPLES) for token in tokens)
            sampled = spread_bounds(keys, [ranges], max_slices)
            bounds = sampled if len(sampled) > len(bounds) else bounds
        slices = tuple(
            SliceSpec(repo.storage_namespace, head.meta_range_id, tokens, lo, hi, repo.range_format)
            for lo, hi in bounds
        )
        base = CommitBase(
            head.id, head.generation, branch.staging_token, tokens, repo.storage_namespace, repo.range_format
        )
        return CommitPlan(False, base, slices)

    # ---- build ----------------------------------------------------------------------------------------------

    def build_slice(self, item: SliceSpec) -> BuiltSlice:
        """Applies the slice's staged changes to its base ranges; returns the slice's metarange id and counts."""
        namespace, lo, hi = item.namespace, item.lo, item.hi
        base = self.storage.metarange(namespace, MetaRangeID(item.base_metarange)).ranges
        inside = [r for r in base if r.min_key >= lo and (hi is None or r.min_key < hi)]
        params = params_for_format(item.range_format, self.params)
        writer = RangeWriter(self.storage, namespace, params, known_ranges={r.id for r in inside})
        changes = _bounded(staged_changes(self.staging, [StagingToken(t) for t in item.tokens], lo), hi)
        ranges, added, changed, removed = apply_changes(
            inside, changes, writer, lambda rid: self.storage.range(namespace, rid), params
        )
        # Stored as a metarange of its own: the output stays a few bytes in the workflow state however many
        # ranges the slice has, and writing it again (a retry) puts the same bytes under the same id.
        return BuiltSlice(self.storage.write_metarange(namespace, ranges), added, changed, removed)

    # ---- finish ---------------------------------------------------------------------------------------------

    def finish(
        self, request: CommitRequest, plan: CommitPlan, built: Sequence[BuiltSlice], planned: Branch | None = None
    ) -> Finish:
        """Writes the metarange and the commit and swaps the branch from the planned sealed state.

        Returns COMMITTED with the commit's id and the tokens it released (also on a retry after the swap), or
        REPLAN when the branch moved meanwhile (another commit or seal): plan again. ``planned``: the branch
        record the plan was made on, when this process holds it (finish_move).
        """
        return self._finish(request, plan, built, planned)[0]

    def _finish(
        self, request: CommitRequest, plan: CommitPlan, built: Sequence[BuiltSlice], planned: Branch | None
    ) -> tuple[Finish, Commit]:
        """The finish, and the commit it wrote: the inline path answers with it as built, with no read."""
        repo_id, branch_id = RepositoryID(request.repository), BranchID(request.branch)
        base = plan.base
        assert base is not None, "a done plan has nothing to finish"
        namespace = base.namespace
        params = params_for_format(base.range_format, self.params)
        metarange = slicing.join_slices(self.storage, namespace, params, (b.metarange for b in built))
        if sum(b.changes for b in built) == 0 and not request.allow_empty:
            raise errors.NoChanges(f"no changes to commit on branch {branch_id}")
        commit = new_commit(
            request.committer,
            request.message,
            metarange,
            request.date,
            request.metadata,
            (CommitID(base.commit_id),),
            base.generation + 1,
        )
        tokens = tuple(StagingToken(t) for t in base.tokens)
        return swap_branch(self.refs, repo_id, branch_id, commit, tokens, self._sleep, planned), commit

    # ---- all of it in one process ---------------------------------------------------------------------------

    def run(
        self,
        request: CommitRequest,
        max_slices: int = DEFAULT_MAX_SLICES,
        max_rounds: int = 10,
        branch: Branch | None = None,
        staged_seen: bool = False,
        pre_hooks: Callable[[Branch], None] | None = None,
        staged_rows: int | None = None,
    ) -> Commit:
        """Every step in order, as the state machine runs them (the inline path, and the reference for tests): the
        commit it made, as built (or, when a retry finds its own commit landed already, as read).

        ``branch``: the branch as the caller read it in this request. In one process the record each step leaves
        is handed to the next instead of read again: every write is a compare-and-swap on that record, so one
        that moved meanwhile costs a lost swap (then a read), never a wrong result. ``pre_hooks``: run on the
        sealed record before the plan (raises HookAborted to refuse the commit)."""
        sealed, known = self._seal(request, branch, staged_seen, staged_rows)
        shareable = staged_rows is not None and staged_rows <= SHARED_ROWS and isinstance(self.staging, SnapshotStaging)
        if pre_hooks is None or not shareable:
            return self._run_sealed(request, sealed, known, max_slices, max_rounds, pre_hooks)
        # A small token (its rows counted exactly before the seal, few enough to hold) is read once, right after the
        # seal: the hooks judge exactly those rows and the commit takes exactly them (staging_snapshot.py). A larger
        # one is read by the hooks (their prefix) and the build as before: a read that could not be kept costs more.
        with shared_read(self.staging, StagingToken(sealed)):
            return self._run_sealed(request, sealed, known, max_slices, max_rounds, pre_hooks)

    def _run_sealed(
        self,
        request: CommitRequest,
        sealed: str,
        known: Branch,
        max_slices: int,
        max_rounds: int,
        pre_hooks: Callable[[Branch], None] | None,
    ) -> Commit:
        if pre_hooks is not None:
            # After the seal and before the plan: the hooks see the sealed changes, and the plan commits exactly
            # the tokens sealed by then (writes while they run go to the new token, for the next commit).
            pre_hooks(known)
        current: Branch | None = known
        for _ in range(max_rounds):
            planned = self.plan(request, sealed, max_slices, current)
            if planned.done:
                return self.refs.get_commit(RepositoryID(request.repository), CommitID(planned.head))
            built = [self.build_slice(item) for item in planned.slices]
            finished, commit = self._finish(request, planned, built, current)
            if finished.status == COMMITTED:
                return commit
            current = None  # the branch moved: the next round reads it
        raise errors.TooManyTries(f"branch {request.branch} kept moving during the commit")


def swap_branch(
    refs: RefStore,
    repo_id: RepositoryID,
    branch_id: BranchID,
    commit: Commit,
    tokens: tuple[StagingToken, ...],
    sleep: Any = None,
    planned: Branch | None = None,
) -> Finish:
    """The last step of ``finish`` (branch_moves.finish_move): COMMITTED with the commit's id and the tokens, also
    when the branch already points at the commit (a retry after the swap); REPLAN when the branch left the planned
    state."""
    if finish_move(refs, repo_id, branch_id, commit, tokens, sleep, planned) is None:
        return Finish(REPLAN)
    return Finish(COMMITTED, commit.id, tuple(tokens))


# How far back from the head a commit that finds its sealed token committed looks for its own commit (a retry after
# its own swap): commits that landed on the branch since then.
OWN_COMMIT_DEPTH = 32


def find_recent_commit(
    refs: RefStore, repo_id: RepositoryID, head: CommitID, matches: Callable[[Commit], bool]
) -> str | None:
    """The id of the first commit ``matches`` accepts, walking first parents from ``head`` over at most
    OWN_COMMIT_DEPTH commits: how a retried commit or merge finds the commit it made itself."""
    current: CommitID | None = head
    for _ in range(OWN_COMMIT_DEPTH):
        if current is None:
            return None
        commit = refs.get_commit(repo_id, current)
        if matches(commit):
            return commit.id
        current = commit.parents[0] if commit.parents else None
    return None


def _own_commit(refs: RefStore, repo_id: RepositoryID, head: CommitID, request: CommitRequest) -> str | None:
    """The commit this request made, among the branch's last commits: the one with its committer, message,
    metadata and date (the fields it fixed once). None when another request made the commit that took its token."""
    return find_recent_commit(
        refs,
        repo_id,
        head,
        lambda commit: (
            commit.committer == request.committer
            and commit.message == request.message
            and dict(commit.metadata) == request.metadata
            and int(commit.creation_date) == int(request.date)
        ),
    )


def landed_commit(refs: RefStore, request: CommitRequest) -> str | None:
    """The id of the commit this request made, if it is on its branch (among the last OWN_COMMIT_DEPTH commits):
    what a status answers for an execution that failed after its branch moved."""
    try:
        branch = refs.get_branch(RepositoryID(request.repository), BranchID(request.branch))
        return _own_commit(refs, RepositoryID(request.repository), branch.commit_id, request)
    except errors.NotFound:
        return None


def _bounded(changes: Iterator[StagedEntry], hi: str | None) -> Iterator[StagedEntry]:
    for staged in changes:
        if hi is not None and staged.key >= hi:
            return
        yield staged


def _is_empty(staging: StagingStore, branch: Branch) -> bool:
    """Nothing in the current token and nothing sealed: a commit would have no changes."""
    return not branch.sealed_tokens and token_is_empty(staging, branch.staging_token)


__all__ = [
    "OWN_COMMIT_DEPTH",
    "CommitSteps",
    "find_recent_commit",
    "landed_commit",
    "swap_branch",
]
