"""History: the log (history.py walks it), a branch's uncommitted changes, two refs compared (two-dot or
three-dot), their merge base, and the merge preview (what a merge would do, without writing)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from .. import errors
from ..committed import CommittedManager, compare
from ..committed.compare import MergeChange
from ..identity import entry_identity
from ..merge.base import require_merge_base
from ..merge.policy import MergePreview, MergeSummary, conflict_policy
from ..ports import RefStore, StagingStore
from ..reads.history import LogFilter, log_page
from ..reads.listing import clamp_amount, paginate
from ..reads.shared import CommitOf
from ..records import (
    Branch,
    BranchID,
    Commit,
    Diff,
    DiffType,
    Key,
    Page,
    Repository,
    ResolvedRef,
)
from ..writes.staging import branch_tokens, is_dirty, staged_changes

__all__ = ["THREE_DOT", "TWO_DOT", "History", "HistoryParts"]

# Diff types between refs (lakeFS's names).
TWO_DOT = "two_dot"
THREE_DOT = "three_dot"


@dataclass(frozen=True, slots=True)
class HistoryParts:
    """What the log and diff use cases use: the ref and staging stores, the committed ranges, and three
    of the shared reads."""

    refs: RefStore
    staging: StagingStore
    committed: CommittedManager
    get_repository: Callable[[str], Repository]
    resolve: Callable[[str, str], ResolvedRef]
    commit_of: CommitOf


class History:
    """The log and diff use cases."""

    def __init__(self, parts: HistoryParts) -> None:
        self._parts = parts

    def diff_uncommitted(
        self,
        repo_id: str,
        branch_id: str,
        prefix: str = "",
        delimiter: str = "",
        after: str = "",
        amount: int | None = 100,
    ) -> Page[Diff]:
        """Staged changes against the branch head: same identity and tombstones of uncommitted keys are skipped."""
        repo = self._parts.get_repository(repo_id)
        branch = self._parts.refs.get_branch(repo.id, BranchID(branch_id))
        head = self._parts.refs.get_commit(repo.id, branch.commit_id)
        tokens = branch_tokens(branch)

        def view(start: str) -> Iterator[Diff]:
            for staged in staged_changes(self._parts.staging, tokens, start, clamp_amount(amount) + 1):
                base = self._parts.committed.get(repo.storage_namespace, head.meta_range_id, staged.key)
                if staged.value is None:
                    if base is not None:
                        yield Diff(staged.key, DiffType.REMOVED, None)
                elif base is None:
                    yield Diff(staged.key, DiffType.ADDED, staged.value)
                elif entry_identity(base) != entry_identity(staged.value):
                    yield Diff(staged.key, DiffType.CHANGED, staged.value)

        return paginate(
            view, lambda common: Diff(Key(common), DiffType.PREFIX_CHANGED, None), prefix, delimiter, after, amount
        )

    def is_dirty(self, repo_id: str, branch_id: str) -> bool:
        repo = self._parts.get_repository(repo_id)
        return is_dirty(self._parts.staging, self._parts.refs.get_branch(repo.id, BranchID(branch_id)))

    def diff_refs(
        self,
        repo_id: str,
        left_ref: str,
        right_ref: str,
        diff_type: str = THREE_DOT,
        prefix: str = "",
        delimiter: str = "",
        after: str = "",
        amount: int | None = 100,
    ) -> Page[Diff]:
        """Committed differences between two refs (staging is ignored). ``three_dot``: what ``right`` changed
        since the merge base that ``left`` lacks, and the conflicts (type conflict, the right side's entry);
        ``two_dot``: ``left`` against ``right`` directly. Ranges equal on both sides are never read."""
        repo = self._parts.get_repository(repo_id)
        # One read of a branch both refs name (main~1..main): both sides of one state of it.
        branches: dict[BranchID, Branch] = {}
        left = self._parts.commit_of(repo.id, left_ref, branches)
        right = self._parts.commit_of(repo.id, right_ref, branches)
        ns = repo.storage_namespace
        view: Callable[[str], Iterator[Diff]]
        if diff_type == TWO_DOT:

            def view(start: str) -> Iterator[Diff]:
                for row in compare.diff(self._parts.committed, ns, left.meta_range_id, right.meta_range_id, start):
                    yield Diff(row.key, row.type, row.right_entry())

        elif diff_type == THREE_DOT:
            base = require_merge_base(self._parts.refs, repo.id, left.id, right.id)

            def view(start: str) -> Iterator[Diff]:
                for change in compare.merge_changes(
                    self._parts.committed, ns, base.meta_range_id, right.meta_range_id, left.meta_range_id, None, start
                ):
                    yield Diff(change.key, change.type, change.entry)

        else:
            raise errors.Invalid(f"diff type must be {TWO_DOT} or {THREE_DOT}, got {diff_type!r}")
        return paginate(
            view, lambda common: Diff(Key(common), DiffType.PREFIX_CHANGED, None), prefix, delimiter, after, amount
        )

    def find_merge_base(self, repo_id: str, source_ref: str, destination_ref: str) -> tuple[Commit, Commit, Commit]:
        """(source, destination, merge base) commits. Raises NoMergeBase (400) when they share no ancestor."""
        repo = self._parts.get_repository(repo_id)
        source = self._parts.commit_of(repo.id, source_ref)
        destination = self._parts.commit_of(repo.id, destination_ref)
        return source, destination, require_merge_base(self._parts.refs, repo.id, source.id, destination.id)

    def preview_merge(
        self,
        repo_id: str,
        source_ref: str,
        destination_branch: str,
        strategy: str | None = None,
        path_strategies: Sequence[tuple[str, str]] = (),
        prefix: str = "",
        after: str = "",
        amount: int | None = 100,
        only_conflicts: bool = False,
    ) -> MergePreview:
        """What merging would do, without writing anything: the counts over the whole merge and one page (in key
        order, from ``after``) of the changes it makes in the destination and of the conflicts, each conflict
        with what each side did and how the strategies settle it (None: the merge would fail)."""
        policy = conflict_policy(strategy, path_strategies)
        repo = self._parts.get_repository(repo_id)
        dest = self._parts.commit_of(
            repo.id, self._parts.refs.get_branch(repo.id, BranchID(destination_branch)).commit_id
        )
        source = self._parts.commit_of(repo.id, source_ref)
        base = require_merge_base(self._parts.refs, repo.id, source.id, dest.id)
        ns = repo.storage_namespace

        def changes(start: str) -> Iterator[MergeChange]:
            return compare.merge_changes(
                self._parts.committed,
                ns,
                base.meta_range_id,
                source.meta_range_id,
                dest.meta_range_id,
                policy.resolve,
                start,
            )

        def view(start: str) -> Iterator[MergeChange]:
            return (c for c in changes(start) if c.conflict is not None) if only_conflicts else changes(start)

        counts: dict[DiffType, int] = dict.fromkeys(DiffType, 0)
        unresolved = 0
        for change in changes(""):
            counts[change.type] += 1
            unresolved += change.conflict is not None and change.conflict.resolution is None
        summary = MergeSummary(
            counts[DiffType.ADDED],
            counts[DiffType.REMOVED],
            counts[DiffType.CHANGED],
            counts[DiffType.CONFLICT],
            unresolved,
        )
        page = paginate(
            view, lambda common: MergeChange(Key(common), DiffType.PREFIX_CHANGED, None), prefix, "", after, amount
        )
        return MergePreview(source, dest, base, summary, page)

    def log(
        self,
        repo_id: str,
        ref: str,
        after: str = "",
        amount: int | None = 100,
        *,
        objects: Sequence[str] = (),
        prefixes: Sequence[str] = (),
        since: int | None = None,
        stop_at: str | None = None,
        limit: bool = False,
        first_parent: bool = False,
    ) -> Page[Commit]:
        """History from ``ref``, newest first; ``after`` is the last commit id already seen. Filters: see
        history.LogFilter (``stop_at`` is any ref expression)."""
        repo = self._parts.get_repository(repo_id)
        options = LogFilter(
            objects=tuple(objects),
            prefixes=tuple(prefixes),
            since=since,
            stop_at=self._parts.resolve(repo.id, stop_at).commit_id if stop_at else None,
            limit=limit,
            first_parent=first_parent,
        )
        ns = repo.storage_namespace

        def first_difference(parent: Commit, commit: Commit, start: str) -> str | None:
            row = next(compare.diff(self._parts.committed, ns, parent.meta_range_id, commit.meta_range_id, start), None)
            return None if row is None else row.key

        start = self._parts.resolve(repo.id, ref).commit_id
        return log_page(self._parts.refs, repo.id, start, options, after, clamp_amount(amount), first_difference)
