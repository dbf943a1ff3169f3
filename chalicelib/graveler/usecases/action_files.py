"""The action files on a ref: what the hooks of actions read before and after every guarded operation (the
files directly under ``_lakefs_actions/``, staged ones included on a branch), through the per-container cache of
actions/files_cache.py; reading them needs no hooks, so the hook runner is built over them before the engine is.
And the hooks run around an operation by code that runs its steps itself (the workflows' tasks)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from itertools import islice
from typing import TYPE_CHECKING

from ..actions.files_cache import ActionFilesCache, check_action_file_sizes, direct_children, seeking_children
from ..actions.spec import ACTIONS_PREFIX, MAX_ACTION_FILES
from ..committed import CommittedManager
from ..ports import BlockStore, RefStore, StagingStore
from ..reads.listing import overlay, prefix_end
from ..reads.shared import RunPreHooks
from ..records import Branch, Entry, EntryRecord, Key, MetaRangeID, Repository, ResolvedRef
from ..writes.staging import branch_tokens, staged_changes
from .objects import read_data

if TYPE_CHECKING:
    from ..actions import HookEvent

__all__ = ["ActionParts", "Actions"]


@dataclass(frozen=True, slots=True)
class ActionParts:
    """What the action-file use cases use: the stores, the action files cache, and the shared reads and
    hook calls."""

    refs: RefStore
    staging: StagingStore
    blocks: BlockStore
    committed: CommittedManager
    action_files_cache: ActionFilesCache
    get_repository: Callable[[str], Repository]
    resolve: Callable[[str, str], ResolvedRef]
    run_pre_hooks: RunPreHooks
    run_post_hooks: Callable[[HookEvent], None]


class Actions:
    """The actions use cases: the action files on a ref, and the hooks run around an operation that runs them
    itself (the workflows' steps)."""

    def __init__(self, parts: ActionParts) -> None:
        self._parts = parts

    def run_pre_hooks(self, event: HookEvent, branch: Branch | None = None) -> str:
        """Raises HookAborted (412) when a hook fails; answers the run's id, the post-event's ``pre_run_id``
        (reads.py)."""
        return self._parts.run_pre_hooks(event, branch)

    def run_post_hooks(self, event: HookEvent) -> None:
        """Failures are recorded in the run, never raised."""
        self._parts.run_post_hooks(event)

    def action_files(
        self, repo_id: str, ref: str, branch: Branch | None = None, limit: int = MAX_ACTION_FILES
    ) -> list[tuple[str, bytes]]:
        """(path, bytes) of the files under _lakefs_actions/ on the ref (its direct children, as lakeFS), staged
        ones included when the ref is a branch. ``branch``: the ref's branch record as this request read it.

        The committed side and the files' bytes come from the per-container cache, keyed by immutable ids
        (actions/files_cache.py); a branch's staged side is read every time. Raises InvalidActionFile, before any
        file is read, for more than ``limit`` files, a file over MAX_ACTION_FILE_BYTES or more than
        MAX_ACTION_FILES_BYTES in all (the entries' sizes say so): an operation never silently skips a guard."""
        repo = self._parts.get_repository(repo_id)
        if branch is None:
            resolved = self._parts.resolve(repo.id, ref)
            commit_id, staged_on = resolved.commit_id, resolved.branch if resolved.include_staging else None
        else:
            commit_id, staged_on = branch.commit_id, branch
        ns, metarange = repo.storage_namespace, self._parts.refs.get_commit(repo.id, commit_id).meta_range_id
        files: Iterable[tuple[str, Entry]] = self._parts.action_files_cache.tree(
            ns, metarange, lambda: self._committed(ns, metarange)
        )
        if staged_on is not None:
            tokens = branch_tokens(staged_on)
            staged = seeking_children(
                lambda start: staged_changes(self._parts.staging, tokens, start, limit + 1), lambda c: str(c.key)
            )
            files = direct_children(overlay(staged, (EntryRecord(Key(path), entry) for path, entry in files)))
        found = list(islice(files, limit + 1))
        check_action_file_sizes(found, limit)
        return [(path, self._data(repo_id, entry)) for path, entry in found]

    def _data(self, repo_id: str, entry: Entry) -> bytes:
        return self._parts.action_files_cache.data(
            entry.physical_address, lambda: read_data(self._parts.blocks, repo_id, entry)
        )

    def _committed(self, namespace: str, metarange: MetaRangeID) -> tuple[tuple[str, Entry], ...]:
        # Most metaranges have no key under the prefix: their range bounds say so without reading a range.
        end = prefix_end(ACTIONS_PREFIX)
        if not any(
            r.min_key < end and r.max_key >= ACTIONS_PREFIX for r in self._parts.committed.ranges(namespace, metarange)
        ):
            return ()
        found = seeking_children(
            lambda start: self._parts.committed.iterate(namespace, metarange, start), lambda r: str(r.key)
        )
        return tuple((str(record.key), record.entry) for record in found)
