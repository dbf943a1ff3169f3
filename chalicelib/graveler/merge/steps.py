"""A merge as idempotent steps, for running it as a workflow (one Lambda per step, slices in parallel).

- ``plan``: what ``engine.merges.merge`` checks first (a writable repository, a clean destination, a merge base, a
  source with changes), the seal of the destination's staging token (lakeFS seals before it moves a head, so
  entries that change nothing cannot turn into changes against the new head), then the slices. A slice bound
  is a key where no range of the base, the source or the destination straddles: each slice then holds whole
  ranges of all three, and its merge is exactly that part of a single pass's merge. Merges that need no range
  read (one side is the base) get no slice and carry the resulting metarange in the plan.
- ``build_slice``: the three-way merge of the slice's ranges through the same walk as ``engine.merges.merge``,
  stored as a (content-addressed) metarange of its own; re-running writes the same objects under the same ids.
  A slice with conflicts no strategy settles writes them to a JSON file under ``_lakefs/`` and returns their
  count instead of a metarange.
- ``finish``: fails with MergeConflicts when any slice had some (the first ``CONFLICTS_KEPT`` of them are kept in
  one file, ``conflicts_address``); otherwise concatenates the slices' ranges (re-cutting the seams, as the
  commit workflow does), stores the merge commit (a content hash: storing it again is a no-op) and
  compare-and-swaps the branch from the head it planned on. If the branch moved meanwhile it answers "replan";
  if the branch already points at this commit (a retry after the swap) it answers as the first run did.
- no step drops the sealed tokens: the scheduled sweep does, after their grace (see the commit's steps).

The request fixes the source commit and the date, so every retry computes the same commit id.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence

from .. import errors
from ..branches.move_checks import prepare_move, refuse_dirty, repository_for_write
from ..commit import COMMITTED, Finish, find_recent_commit, swap_branch
from ..committed import CommittedManager
from ..committed.compare import trivial_merge
from ..committed.merge import KeyConflict, merge_ranges
from ..committed.mergetable import Action, Decision
from ..committed.params import params_for_format
from ..committed.writer import RangeWriter
from ..errors import MergeConflicts
from ..identity import commit_id
from ..ports import BlockStore, RefStore, StagingStore
from ..records import BranchID, Commit, CommitID, MetaRangeID, RangeInfo, RepositoryID, StagingToken
from ..runs.slicing import DEFAULT_MAX_SLICES, concatenate, spread_bounds
from ..writes.addressing import metadata_address
from .base import require_merge_base
from .plan import MergedSlice, MergeFixed, MergePlan, MergeSliceSpec
from .policy import conflict_policy, source_holds_changes
from .request import MergeRequest

# The conflicts a failed merge keeps for its answer (a 409 shows at most one page of 1,000).
CONFLICTS_KEPT = 1000


def conflicts_address(namespace: str, request_id: str) -> str:
    """Where a merge that failed on conflicts keeps the first of them, in key order."""
    return metadata_address(namespace, f"workflows/merge/{request_id}/conflicts.json")


def read_conflicts(data: bytes) -> list[KeyConflict]:
    return [
        KeyConflict(
            c["path"],
            Action(c["source"]),
            Action(c["destination"]),
            None,
            None,
            Decision(c["resolution"]) if c.get("resolution") else None,
        )
        for c in json.loads(data)["conflicts"]
    ]


def _conflicts_json(conflicts: list[KeyConflict]) -> bytes:
    rows = [
        {"path": c.key, "source": str(c.source), "destination": str(c.destination)}
        | ({"resolution": c.resolution.value} if c.resolution is not None else {})
        for c in conflicts
    ]
    return json.dumps({"conflicts": rows}, separators=(",", ":")).encode()


def kept_conflicts(conflicts: list[KeyConflict]) -> list[KeyConflict]:
    """What a failed merge keeps of its conflicts (in key order): the first CONFLICTS_KEPT left unresolved and
    the first CONFLICTS_KEPT a strategy settled."""
    unresolved = [c for c in conflicts if c.resolution is None][:CONFLICTS_KEPT]
    resolved = [c for c in conflicts if c.resolution is not None][:CONFLICTS_KEPT]
    return sorted(unresolved + resolved, key=lambda c: c.key)


def _conflicts_error(request: MergeRequest, unresolved: int, conflicts: list[KeyConflict]) -> MergeConflicts:
    return MergeConflicts(
        f"conflict found: {unresolved} conflicting path(s) in the merge of {request.source_ref} into "
        f"{request.destination}",
        kept_conflicts(conflicts),
    )


class MergeSteps:
    """The steps over the ports (as CommitSteps): the checks before the move are move_checks.py's."""

    def __init__(
        self,
        refs: RefStore,
        staging: StagingStore,
        blocks: BlockStore,
        committed: CommittedManager,
        *,
        sleep: Callable[[float], None] | None = None,
    ) -> None:
        self.refs = refs
        self.staging = staging
        self.blocks = blocks
        self.committed = committed
        self.params = committed.params  # the current format's; a repository's own come with its plan
        self.storage = committed.storage
        self._sleep = sleep

    def _ranges(self, namespace: str, metarange: str) -> list[RangeInfo]:
        return self.storage.metarange(namespace, MetaRangeID(metarange)).ranges

    # ---- plan -----------------------------------------------------------------------------------------------

    def plan(self, request: MergeRequest, max_slices: int = DEFAULT_MAX_SLICES) -> MergePlan:
        """The merge's fixed points (destination head, base, sealed tokens), its slices and its size (the entries
        of the source's and the destination's ranges that the merge base does not share); raises what
        engine.merges.merge raises before it writes (DirtyBranch, NoChanges, NoMergeBase, ReadOnlyRepository...)."""
        refs = self.refs
        repo = repository_for_write(refs, request.repository, request.force)
        params_for_format(repo.range_format, self.params)  # a format this release cannot cut fails before the seal
        bid = BranchID(request.destination)
        prepare_move(refs, self.staging, self.committed, repo, bid, self._sleep)
        branch = refs.get_branch(repo.id, bid)
        refuse_dirty(refs, self.staging, self.committed, repo, branch, branch.sealed_tokens)
        dest = refs.get_commit(repo.id, branch.commit_id)
        source = refs.get_commit(repo.id, CommitID(request.source_commit))
        base = require_merge_base(refs, repo.id, source.id, dest.id)
        if not (request.allow_empty or request.force) and not source_holds_changes(base, source):
            raise errors.NoChanges(f"{request.destination} already holds every change of {request.source_ref}")
        ns = repo.storage_namespace
        tokens = tuple(branch.sealed_tokens)
        sides = (base.meta_range_id, source.meta_range_id, dest.meta_range_id)
        listings = [self._ranges(ns, m) for m in sides]
        base_ids = {r.id for r in listings[0]}
        # The entries of the ranges the merge may read: what decides between inline and the workflow.
        size = sum(r.count for listing in listings[1:] for r in listing if r.id not in base_ids)
        trivial = trivial_merge(base.meta_range_id, source.meta_range_id, dest.meta_range_id)
        fixed = MergeFixed(ns, dest.id, dest.generation, source.generation, tokens, trivial, repo.range_format)
        if trivial is not None:
            return MergePlan(fixed, (), size)
        slices = tuple(
            MergeSliceSpec(
                ns, *sides, request.strategy, request.path_strategies, request.request_id, lo, hi, repo.range_format
            )
            for lo, hi in spread_bounds([r.min_key for r in listings[2][1:]], listings, max_slices)
        )
        return MergePlan(fixed, slices, size)

    # ---- build ----------------------------------------------------------------------------------------------

    def build_slice(self, item: MergeSliceSpec) -> MergedSlice:
        """The merge of the slice: its metarange, or (None) the count of unresolved conflicts and their file."""
        namespace = item.namespace
        ranges, conflicts = self._merge_slice(item)
        if ranges is None:
            address = metadata_address(
                namespace, f"workflows/merge/{item.request_id}/{item.dest}-{_slice_name(item.lo)}.json"
            )
            self.blocks.put(address, _conflicts_json(kept_conflicts(conflicts)))
            return MergedSlice(None, sum(1 for c in conflicts if c.resolution is None), address)
        return MergedSlice(self.storage.write_metarange(namespace, ranges))

    def _merge_slice(self, item: MergeSliceSpec) -> tuple[list[RangeInfo] | None, list[KeyConflict]]:
        """The slice's merged ranges (None when a conflict stays unresolved) and its conflicts."""
        namespace, lo, hi = item.namespace, item.lo, item.hi

        def inside(metarange: str) -> list[RangeInfo]:
            return [r for r in self._ranges(namespace, metarange) if r.min_key >= lo and (hi is None or r.min_key < hi)]

        base, source, dest = inside(item.base), inside(item.source), inside(item.dest)
        policy = conflict_policy(item.strategy, item.path_strategies)
        known = {r.id for r in base} | {r.id for r in source} | {r.id for r in dest}
        params = params_for_format(item.range_format, self.params)
        writer = RangeWriter(self.storage, namespace, params, known_ranges=known)
        walk = merge_ranges(
            base, source, dest, lambda rid: self.storage.range(namespace, rid), writer, params, policy.resolve
        )
        return walk.ranges, walk.conflicts

    # ---- finish ---------------------------------------------------------------------------------------------

    def finish(self, request: MergeRequest, plan: MergePlan, built: Sequence[MergedSlice]) -> Finish:
        """Writes the merged metarange and the merge commit and swaps the branch from the planned head.

        Returns COMMITTED with the commit's id and the tokens it released (also on a retry after the swap), or
        REPLAN when the branch moved meanwhile. Raises MergeConflicts when a slice had conflicts.
        """
        return self._finish(request, plan, built)[0]

    def _finish(self, request: MergeRequest, plan: MergePlan, built: Sequence[MergedSlice]) -> tuple[Finish, Commit]:
        """The finish, and the merge commit it wrote: the inline path answers with it as built, with no read."""
        repo_id, branch_id = RepositoryID(request.repository), BranchID(request.destination)
        fixed = plan.fixed
        namespace = fixed.namespace
        unresolved = sum(b.unresolved for b in built)
        if unresolved:
            found: list[KeyConflict] = []
            for b in built:
                if b.unresolved:
                    found.extend(read_conflicts(self.blocks.get(b.conflicts)))
            error = _conflicts_error(request, unresolved, found)
            self.blocks.put(conflicts_address(namespace, request.request_id), _conflicts_json(error.conflicts))
            raise error
        if fixed.metarange is not None:
            metarange = MetaRangeID(fixed.metarange)
        else:
            parts = [self._ranges(namespace, str(b.metarange)) for b in built]
            ranges = concatenate(self.storage, namespace, params_for_format(fixed.range_format, self.params), parts)
            metarange = self.storage.write_metarange(namespace, ranges)
        dest, source = CommitID(fixed.dest_commit), CommitID(request.source_commit)
        parents = (dest,) if request.squash_merge else (dest, source)
        generations = [fixed.dest_generation] + ([] if request.squash_merge else [fixed.source_generation])
        policy = conflict_policy(request.strategy, request.path_strategies)
        metadata = {**request.metadata, **policy.metadata()}
        cid = commit_id(request.committer, request.text, metarange, request.date, metadata, parents)
        commit = Commit(
            cid, request.committer, request.text, request.date, metarange, metadata, parents, max(generations) + 1
        )
        tokens = tuple(StagingToken(t) for t in fixed.tokens)
        return swap_branch(self.refs, repo_id, branch_id, commit, tokens, self._sleep), commit

    # ---- all of it in one process ---------------------------------------------------------------------------

    def run(
        self,
        request: MergeRequest,
        max_slices: int = DEFAULT_MAX_SLICES,
        max_rounds: int = 10,
        planned: MergePlan | None = None,
    ) -> Commit:
        """Every step in order, as the state machine runs them (the inline path), from ``planned`` if the caller
        planned already: the merge commit, as built. Conflicts stay in memory: the files under _lakefs/ are for the
        workflow's answer only."""
        for _ in range(max_rounds):
            planned = planned or self.plan(request, max_slices)
            merged = [self._merge_slice(item) for item in planned.slices]
            if any(ranges is None for ranges, _ in merged):
                conflicts = [c for _, found in merged for c in found]
                raise _conflicts_error(request, sum(1 for c in conflicts if c.resolution is None), conflicts)
            namespace = planned.fixed.namespace
            built = [MergedSlice(self.storage.write_metarange(namespace, ranges or [])) for ranges, _ in merged]
            finished, commit = self._finish(request, planned, built)
            if finished.status == COMMITTED:
                return commit
            planned = None
        raise errors.TooManyTries(f"branch {request.destination} kept moving during the merge")


def landed_merge(refs: RefStore, request: MergeRequest) -> str | None:
    """The id of the merge commit this request made, if it is on its destination (among the last
    OWN_COMMIT_DEPTH commits): what a status answers for an execution that failed after its branch moved. The
    request fixed the committer, message, date and source, so its commit is told from any other by them."""
    repo_id = RepositoryID(request.repository)
    try:
        head = refs.get_branch(repo_id, BranchID(request.destination)).commit_id
        return find_recent_commit(
            refs,
            repo_id,
            head,
            lambda commit: (
                commit.committer == request.committer
                and commit.message == request.text
                and int(commit.creation_date) == int(request.date)
                and request.metadata.items() <= dict(commit.metadata).items()
                and (request.squash_merge or commit.parents[1:] == (CommitID(request.source_commit),))
            ),
        )
    except errors.NotFound:
        return None


def _slice_name(lo: str) -> str:
    """A file-name-safe name of a slice's lower bound (keys may hold any character and be long)."""
    return hashlib.sha256(lo.encode()).hexdigest()[:32]


__all__ = [
    "CONFLICTS_KEPT",
    "MergeSteps",
    "conflicts_address",
    "landed_merge",
    "read_conflicts",
]
