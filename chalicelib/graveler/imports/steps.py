"""An import as idempotent steps, for running it as a workflow (one Lambda per step, slices in parallel) or
inline, through the same code:

- ``plan``: moves (or creates, hidden) the branch ``_<branch>_imported`` to the branch's head, cuts the
  destination key space into slices at the sources' top "directories", never across a base range, and writes
  the slices to a manifest under ``<namespace>/_lakefs/imports/`` (named by its content), which the workflow's
  Distributed Map reads.
- ``build_slice``: lists the sources inside the slice page by page, maps them to destination keys and applies
  them onto the base ranges inside it (everything under a destination that the source no longer holds is
  removed), with graveler's range writer; stores the slice as a metarange of its own. Re-running writes the same
  content-addressed objects.
- ``commit``: concatenates the slices into one metarange and commits it on the import branch, whose head must
  still be the planned base (a compare-and-swap; a retry after the swap finds its own commit there). The commit
  has one parent, the branch's head, and lakeFS's import metadata (``.lakefs.merge.strategy: source-wins``).
- ``merge`` (the landing): moves the branch to that very commit, as lakeFS's import commits onto the branch with
  its head as the only parent (graveler.Import), between pre-commit and post-commit hooks as lakeFS runs them.
  A retry finds the commit on the branch. When the branch moved since the plan (a commit landed meanwhile), the
  import commit no longer sits on its head: it is merged instead, squashed (one parent, the new head) with the
  source-wins strategy lakeFS's import applies, through the engine's one merge entry (inline, or as the merge
  workflow above its threshold: the step records its task id and raises StillRunning, and its retries follow
  that task instead of merging again).

Why the import branch at all, when lakeFS commits straight onto the branch: the slices are built, in parallel and
possibly for minutes, on the head the plan saw; the commit is stored on the hidden ``_<branch>_imported`` first,
so a retried step finds it by its branch, and the branch itself moves in one compare-and-swap at the end.

Each step checks the cancel mark first, and ``build_slice`` after every listing page, so a cancel stops the import
before its next side effect; the branch moves only in ``merge``, which first records that the import is merging
(ImportRecords.decide): a cancel recorded before that wins and nothing lands on the branch; a cancel after it is
refused (409, as lakeFS refuses to cancel a completed import) and the import completes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from .. import errors
from ..actions import EventType, HookEvent
from ..branches.branch_moves import finish_move, new_staging_token, update_branch
from ..branches.move_checks import prepare_move, refuse_dirty
from ..committed import CommittedManager
from ..committed.apply import apply_changes
from ..committed.params import params_for_format
from ..committed.writer import RangeWriter
from ..identity import new_commit
from ..merge.policy import STRATEGY_METADATA_KEY, Strategy
from ..ports import BlockStore, RefStore, StagingStore
from ..reads.shared import RepositoryForWrite, RunPreHooks
from ..records import Branch, BranchID, Commit, CommitID, MetaRangeID, Repository, RepositoryID
from ..runs.slicing import DEFAULT_MAX_SLICES, join_slices, spread_bounds
from ..usecases.merges import Merges
from .errors import ImportCanceled
from .listing import slice_changes
from .plan import (
    ImportCommitted,
    ImportedSlice,
    ImportFailed,
    ImportMerged,
    ImportPlan,
    ImportSlice,
    manifest_address,
    manifest_bytes,
)
from .ports import ImportRecords, SourceLister
from .request import COMMON_PREFIX, ImportRequest
from .status import CANCELED_MESSAGE, MERGING, ImportRecord

# How many top "directories" of each source the plan reads to place slice bounds.
PREFIX_CANDIDATES = 1000
# How far back along the branch's first parents a retried merge looks for the merge it already made.
MERGED_LOOKBACK = 50


@dataclass(frozen=True, slots=True)
class ImporterParts:
    """What the import uses of the engine: the stores, the committed-data manager, the clock and sleep, where
    repositories may live, and the shared reads and hook calls (built by build_engine)."""

    refs: RefStore
    staging: StagingStore
    blocks: BlockStore
    committed: CommittedManager
    clock: Callable[[], float]
    sleep: Callable[[float], None]
    namespace_prefix: str | None
    get_repository: Callable[[str], Repository]
    repository_for_write: RepositoryForWrite
    run_pre_hooks: RunPreHooks
    run_post_hooks: Callable[[HookEvent], None]


class ImportSteps:
    """The steps over what the import uses of the engine (``ImporterParts``: its refs, blocks, clock, sleep,
    CommittedManager with its caches and RangeParams, and the hook calls), its one merge entry, the source lister
    and the status records."""

    def __init__(self, parts: ImporterParts, merges: Merges, lister: SourceLister, records: ImportRecords) -> None:
        self.refs = parts.refs
        self._blocks = parts.blocks
        self._merges = merges
        self.committed: CommittedManager = parts.committed
        self.storage = self.committed.storage
        self.params = self.committed.params  # the current format's; a repository's own come with its plan
        self.lister = lister
        self.records = records
        self._clock = parts.clock
        self._sleep = parts.sleep
        self._staging = parts.staging
        self._run_pre_hooks = parts.run_pre_hooks  # the hook calls around the landing
        self._run_post_hooks = parts.run_post_hooks

    def _namespace(self, repository: str) -> str:
        return self.refs.get_repository(RepositoryID(repository)).storage_namespace

    def refuse_canceled(self, namespace: str, import_id: str) -> None:
        if self.records.canceled(namespace, import_id):
            raise ImportCanceled(CANCELED_MESSAGE)

    # ---- plan -----------------------------------------------------------------------------------------------

    def plan(self, request: ImportRequest, max_slices: int = DEFAULT_MAX_SLICES) -> ImportPlan:
        repo_id = RepositoryID(request.repository)
        repo = self.refs.get_repository(repo_id)
        if repo.read_only and not request.force:
            raise errors.ReadOnlyRepository(repo_id)
        params_for_format(repo.range_format, self.params)  # a format this release cannot cut fails before any write
        self.refuse_canceled(repo.storage_namespace, request.import_id)
        head = self.refs.get_commit(repo_id, self.refs.get_branch(repo_id, BranchID(request.branch)).commit_id)
        self._move_import_branch(request, head.id, repo.generation)
        base = self.storage.metarange(repo.storage_namespace, head.meta_range_id).ranges
        candidates: set[str] = set()
        for loc in request.locations:
            if loc.type == COMMON_PREFIX:
                for found in self.lister.common_prefixes(loc.bucket, loc.key, PREFIX_CANDIDATES):
                    candidates.add(loc.destination_key(found))
            candidates.add(loc.destination)
        candidates.update(r.min_key for r in base)
        bounds = spread_bounds(sorted(candidates), [base], max_slices)
        slices = tuple(
            ImportSlice(
                request.import_id,
                repo.storage_namespace,
                head.meta_range_id,
                request.locations,
                lo,
                hi,
                f"{index:05d}",
                repo.range_format,
            )
            for index, (lo, hi) in enumerate(bounds)
        )
        # The workflow's Distributed Map reads the slices from here; a retry writes the same bytes to the same file.
        content = manifest_bytes(slices)
        manifest = manifest_address(repo.storage_namespace, request.import_id, content)
        self._blocks.put(manifest, content)
        return ImportPlan(
            head.id,
            head.generation,
            repo.storage_namespace,
            head.meta_range_id,
            manifest,
            len(slices),
            slices,
            repo.range_format,
        )

    def _move_import_branch(self, request: ImportRequest, head: CommitID, generation: str) -> None:
        """The import branch at ``head``: created hidden if missing, moved there if it points elsewhere (what an
        earlier import left there is on the branch already, or was left unmerged on purpose by a cancel)."""
        repo_id, name = RepositoryID(request.repository), BranchID(request.import_branch)
        try:
            self.refs.create_branch(
                repo_id,
                Branch(name, head, new_staging_token(request.repository, name), hidden=True),
                generation=generation,
            )
            return
        except errors.BranchExists:
            pass

        def move(branch: Branch) -> Branch | None:
            if branch.commit_id == head:
                return None
            return Branch(
                branch.id, head, branch.staging_token, branch.sealed_tokens, branch.retired_tokens, branch.hidden
            )

        update_branch(self.refs, repo_id, name, move, f"branch {name} kept moving", self._sleep)

    # ---- build ----------------------------------------------------------------------------------------------

    def build_slice(self, item: ImportSlice) -> ImportedSlice:
        """The slice's metarange (base ranges inside it with the sources applied) and its counts."""
        namespace, lo, hi = item.namespace, item.lo, item.hi
        self.refuse_canceled(namespace, item.import_id)
        base_id = MetaRangeID(item.base_metarange)
        base = self.storage.metarange(namespace, base_id).ranges
        inside = [r for r in base if r.min_key >= lo and (hi is None or r.min_key < hi)]
        listed = [0]

        def on_page(count: int) -> None:
            listed[0] += count
            self.records.report_progress(namespace, item.import_id, item.part, listed[0])
            self.refuse_canceled(namespace, item.import_id)

        def base_keys(start: str) -> Iterator[str]:
            return (record.key for record in self.committed.iterate(namespace, base_id, start))

        params = params_for_format(item.range_format, self.params)
        writer = RangeWriter(self.storage, namespace, params, known_ranges={r.id for r in inside})
        changes = slice_changes(self.lister, base_keys, item.locations, lo, hi, on_page)
        ranges, added, changed, removed = apply_changes(
            inside, changes, writer, lambda rid: self.storage.range(namespace, rid), params
        )
        return ImportedSlice(self.storage.write_metarange(namespace, ranges), added, changed, removed, listed[0])

    # ---- commit ---------------------------------------------------------------------------------------------

    def commit(self, request: ImportRequest, plan: ImportPlan, built: Sequence[ImportedSlice]) -> ImportCommitted:
        """Commits the import on the import branch: its commit, metarange, objects ingested and changes."""
        repo_id = RepositoryID(request.repository)
        namespace = plan.namespace
        self.refuse_canceled(namespace, request.import_id)
        params = params_for_format(plan.range_format, self.params)
        metarange = join_slices(self.storage, namespace, params, (b.metarange for b in built))
        commit = new_commit(
            request.committer,
            request.message,
            metarange,
            request.date,
            # lakeFS's import records its strategy: the imported prefixes replace what the branch held there.
            {**request.metadata, STRATEGY_METADATA_KEY: Strategy.SOURCE_WINS.value},
            (CommitID(plan.base_commit),),
            plan.base_generation + 1,
        )
        if finish_move(self.refs, repo_id, BranchID(request.import_branch), commit, (), self._sleep) is None:
            raise errors.Conflict(
                f"branch {request.import_branch} moved during the import: another import into "
                f"{request.branch} is running"
            )
        return ImportCommitted(commit.id, metarange, sum(b.ingested for b in built), sum(b.changes for b in built))

    # ---- merge ----------------------------------------------------------------------------------------------

    def merge(self, request: ImportRequest, committed: ImportCommitted) -> ImportMerged:
        """Lands the import commit on the branch (or, when the branch moved since the plan, a squashed source-wins
        merge of it) and completes the record: the id of the commit that landed."""
        repo_id = RepositoryID(request.repository)
        namespace = self._namespace(request.repository)
        record = self.records.get(namespace, request.import_id)
        if record.ended and record.commit_id:
            return ImportMerged(record.commit_id)  # a retry after the record was completed
        self.refuse_canceled(namespace, request.import_id)
        # The linearization point with a cancel: from here the branch may move, and a cancel answers that the
        # import is finishing; a cancel recorded first stops the import with the branch untouched.
        if self.records.decide(namespace, request.import_id, MERGING) != MERGING:
            raise ImportCanceled(CANCELED_MESSAGE)
        imported = CommitID(committed.commit_id)
        merged = self._landed_already(repo_id, BranchID(request.branch), imported)
        if merged is None and not record.merge_task:
            merged = self._land(request, imported)
        if merged is None:
            merged = self._merge(request, namespace, record)
        self.records.save(
            namespace,
            self.records.get(namespace, request.import_id).completed(
                merged, committed.metarange_id, committed.ingested, self._clock()
            ),
        )
        return ImportMerged(merged)

    def _merge(self, request: ImportRequest, namespace: str, record: ImportRecord) -> CommitID:
        """The merge commit, through the one merge entry; a merge that goes on as a workflow is followed by its task
        id (recorded), never started twice. Raises StillRunning while it runs, and what the merge raised."""
        g = self._merges
        if record.merge_task:
            status = g.merge_status(request.repository, request.branch, record.merge_task)
            if not status.completed:
                raise errors.StillRunning(record.merge_task)
            if status.error is not None:
                raise status.error
            assert status.result is not None
            return status.result.id
        try:
            found = g.merge(
                request.repository,
                request.import_branch,
                request.branch,
                request.committer,
                request.message,
                dict(request.metadata),
                strategy=Strategy.SOURCE_WINS.value,
                squash_merge=True,
                allow_empty=True,
                force=request.force,
            )
        except errors.StillRunning as running:
            self.records.save(namespace, dataclasses.replace(record, merge_task=running.task_id))
            raise
        return found.id

    def _land(self, request: ImportRequest, imported: CommitID) -> CommitID | None:
        """Moves the branch to the import commit when its head is still the commit's parent, between the
        pre-commit and post-commit hooks (lakeFS's import runs those); None when the branch moved meanwhile.
        Raises DirtyBranch for uncommitted changes (as lakeFS's import), HookAborted."""
        repo_id, branch_id = RepositoryID(request.repository), BranchID(request.branch)
        commit = self.refs.get_commit(repo_id, imported)
        if self.refs.get_branch(repo_id, branch_id).commit_id != commit.parents[0]:
            return None
        repo = self.refs.get_repository(repo_id)
        if repo.read_only and not request.force:
            raise errors.ReadOnlyRepository(repo_id)
        # As lakeFS: uncommitted changes refuse the import before any hook runs; a refusing hook leaves the branch
        # as it was, nothing sealed.
        before = self.refs.get_branch(repo_id, branch_id)
        refuse_dirty(self.refs, self._staging, self.committed, repo, before, [before.staging_token])
        pre_run_id = "" if repo.read_only else self._run_pre_hooks(self._event(request, commit))
        # Seals what is staged (refusing what became dirty meanwhile), so no entry staged before the move turns into
        # a change against the imported tree; a write after the seal lands in the fresh token and survives.
        prepare_move(self.refs, self._staging, self.committed, repo, branch_id, self._sleep)
        branch = self.refs.get_branch(repo_id, branch_id)
        landed = finish_move(self.refs, repo_id, branch_id, commit, tuple(branch.sealed_tokens), self._sleep, branch)
        if landed is None:
            return None
        if not repo.read_only:
            self._run_post_hooks(
                dataclasses.replace(
                    self._event(request, commit),
                    event_type=EventType.POST_COMMIT,
                    actions_ref=commit.id,
                    source_ref=commit.id,
                    commit_id=commit.id,
                    pre_run_id=pre_run_id,
                )
            )
        return commit.id

    @staticmethod
    def _event(request: ImportRequest, commit: Commit) -> HookEvent:
        """lakeFS's pre-commit record of an import: the branch, the commit's message, committer and metadata."""
        return HookEvent(
            EventType.PRE_COMMIT,
            request.repository,
            request.branch,
            branch_id=request.branch,
            source_ref=request.branch,
            commit_message=commit.message,
            committer=commit.committer,
            commit_metadata=dict(commit.metadata),
            idempotency_key="",
        )

    def _landed_already(self, repo_id: RepositoryID, branch_id: BranchID, imported: CommitID) -> CommitID | None:
        """The import commit itself when it is on the branch's recent first-parent line (a retry after the
        landing), or the merge that took it there under an earlier release (its second parent)."""
        current: CommitID | None = self.refs.get_branch(repo_id, branch_id).commit_id
        for _ in range(MERGED_LOOKBACK):
            if current is None:
                return None
            if current == imported:
                return current
            commit = self.refs.get_commit(repo_id, current)
            if imported in commit.parents[1:]:
                return commit.id
            current = commit.parents[0] if commit.parents else None
        return None

    # ---- failure --------------------------------------------------------------------------------------------

    def fail(self, request: ImportRequest, message: str) -> ImportFailed:
        """Records the failure (unless the record already ended: a cancel recorded itself)."""
        namespace = self._namespace(request.repository)
        record = self.records.get(namespace, request.import_id)
        if not record.ended:
            self.records.save(namespace, record.failed(message, self._clock()))
        return ImportFailed(message)

    # ---- all of it in one process ---------------------------------------------------------------------------

    def run(self, request: ImportRequest, max_slices: int = 1, merge_polls: int = 600) -> ImportMerged:
        """Every step in order, as the state machine runs them (the inline path, and the reference for tests).
        A merge that goes on as a workflow is followed as the state machine's retries follow it."""
        planned = self.plan(request, max_slices)
        built = [self.build_slice(item) for item in planned.slices]
        committed = self.commit(request, planned, built)
        for _ in range(merge_polls):
            try:
                return self.merge(request, committed)
            except errors.StillRunning:
                self._sleep(1.0)
        raise errors.TooManyTries(f"the merge of import {request.import_id} did not end")


__all__ = ["DEFAULT_MAX_SLICES", "ImportSteps", "ImporterParts"]
