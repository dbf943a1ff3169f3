"""What the engine's use cases are built from: one frozen record of the ports, the guard, the hooks, the clock and
sleep, and the per-container caches, made once (``engine_parts``) and never changed after. ``build_engine``
(engine.py) builds every use case from it: each takes a record of its own with only the fields (and shared reads)
it uses, never this one whole (the import use case and the runner still do).

Nothing here is set after construction: the hooks of actions are in the record the engine is built from
(engine.build_hook_runner builds them first from the same ports, since reading action files needs no hooks).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from .actions import HookRunner
from .actions.files_cache import ActionFilesCache
from .branches.protection import BranchProtection, NoProtection
from .committed import CommittedManager
from .ports import BlockStore, RefStore, StagingStore, WorkflowRunner
from .reads.collected import CollectedCheck
from .records import Branch
from .storage.caches import TTLCache
from .writes.staging_snapshot import SnapshotStaging

__all__ = ["UPLOAD_BRANCH_TTL_SECONDS", "EngineParts", "Workflows", "engine_parts"]

# How long a branch record an upload read (or one an upload address was issued for) is used without reading it
# again: an upload stages into its token (a seal since is caught by the write's re-check; usecases/objects.py).
UPLOAD_BRANCH_TTL_SECONDS = 2.0


@dataclass(frozen=True, slots=True)
class Workflows:
    """Where large commits, merges, imports, dumps and restores go: a runner per workflow (None: always inline), the
    sizes above which they go there, and how long a caller waits for a commit's or merge's execution by default
    (nobody waits for an import's, a dump's or a restore's: their status records tell how they go).
    ``import_threshold`` counts the sources' objects; ``import_max_slices`` bounds the import workflow's parallel
    slices. ``dump_threshold`` counts a repository's commits, ``restore_threshold`` a dump's commit records."""

    commit: WorkflowRunner | None = None
    merge: WorkflowRunner | None = None
    commit_threshold: int = 25_000
    merge_threshold: int = 50_000
    wait_seconds: float = 25.0
    imports: WorkflowRunner | None = None
    import_threshold: int = 5_000
    import_max_slices: int = 16
    dump: WorkflowRunner | None = None
    restore: WorkflowRunner | None = None
    dump_threshold: int = 5_000
    restore_threshold: int = 5_000


@dataclass(frozen=True, slots=True)
class EngineParts:
    """The engine's ports and what its use cases share, fixed at construction.

    ``protection``: the branch protection rules (None: an engine without a rules store), ``guard`` what the write
    paths ask (NoProtection then). ``collected``: which entries' data garbage collection deleted. ``hooks``: the
    actions' hook runner (None: an engine that runs none). ``namespace_prefix``: where repositories may live
    (``s3://<bucket>/``; None: anywhere). ``action_files_cache``: the action files every guarded operation looks
    up twice; ``upload_branches``: the records of branches uploads went to lately, as last read (objects.py)."""

    refs: RefStore
    staging: StagingStore
    blocks: BlockStore
    committed: CommittedManager
    clock: Callable[[], float]
    sleep: Callable[[float], None]
    protection: BranchProtection | None
    guard: BranchProtection | NoProtection
    collected: CollectedCheck
    namespace_prefix: str | None
    workflows: Workflows
    hooks: HookRunner | None
    action_files_cache: ActionFilesCache
    upload_branches: TTLCache[tuple[str, str], Branch]


def engine_parts(
    refs: RefStore,
    staging: StagingStore,
    blocks: BlockStore,
    committed: CommittedManager,
    *,
    clock: Callable[[], float] = time.time,
    sleep: Callable[[float], None] = time.sleep,
    protection: BranchProtection | None = None,
    collected: CollectedCheck | None = None,
    namespace_prefix: str | None = None,
    workflows: Workflows | None = None,
    hooks: HookRunner | None = None,
    action_files_cache: ActionFilesCache | None = None,
) -> EngineParts:
    """The record with the defaults of an engine that is given only its stores: always inline, nothing protected,
    no hooks, repositories anywhere, fresh caches."""
    return EngineParts(
        refs,
        # A commit shares its one read of the token it sealed with its pre-commit hooks (staging_snapshot.py).
        staging if isinstance(staging, SnapshotStaging) else SnapshotStaging(staging),
        blocks,
        committed,
        clock,
        sleep,
        protection,
        protection or NoProtection(),
        collected or CollectedCheck(blocks),
        namespace_prefix,
        workflows or Workflows(),
        hooks,
        action_files_cache or ActionFilesCache(),
        TTLCache(UPLOAD_BRANCH_TTL_SECONDS),
    )
