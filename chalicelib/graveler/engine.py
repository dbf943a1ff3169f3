"""The engine: one frozen record whose fields are the use cases, built by ``build_engine`` alone.

Faces (the API, the S3 gateway, the Iceberg catalog, the workflows' tasks, GC, the local stack) call a use case
directly, ``engine.objects.upload_object(...)``: nothing routes or binds names here. Each use case is an object of
its own module, built from a frozen record of only what it uses (``ObjectParts``, ``BranchParts``, ...), which
``build_engine`` fills from the one record of the engine's ports (parts.py) and the shared reads
(reads/shared.py); commit, merge, import, dump and restore go inline or as workflows through one decision
(runs/workflow_runner.py). ``build_hook_runner`` builds the hooks over the same ports (before the engine: its
ports carry them); wiring.py only chooses adapters.

    build_engine(ports, imports, pull_requests)
        reads  = Reads(ports)
        runner = Runner(ports, reads, CommitSteps(...), MergeSteps(...))
        Engine(ports, Repositories(RepositoryParts(...)), BranchesAndTags(BranchParts(...)),
               Objects(ObjectParts(...)), ..., CollectionInputs(CollectionPorts(...)))
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from .actions import HookInvoker, HookRunner, RunStore
from .actions.spec import Decoder
from .commit import CommitSteps
from .committed import CommittedManager, RangeParams
from .dumps.refs_dump import RefsDumpParts
from .imports import Importer, ImporterParts, ImportParts
from .merge import MergeSteps
from .parts import EngineParts, engine_parts
from .ports import PullRequestStore
from .reads.shared import Reads
from .runs.workflow_runner import Runner
from .usecases.action_files import ActionParts, Actions
from .usecases.branches_and_tags import BranchesAndTags, BranchParts
from .usecases.collection_inputs import CollectionInputs, CollectionPorts
from .usecases.commit_records import CommitRecordParts, CommitRecords
from .usecases.commits import CommitParts, Commits
from .usecases.conditional_delete import ConditionalDelete, ConditionalDeleteParts
from .usecases.conditional_uploads import ConditionalUploadParts, ConditionalUploads
from .usecases.diffs import History, HistoryParts
from .usecases.dump_tasks import DumpTasks
from .usecases.merges import MergeParts, Merges
from .usecases.objects import ObjectParts, Objects
from .usecases.presigned_multipart import MultipartParts, PresignedMultipart
from .usecases.pull_requests import PullRequestParts, PullRequests
from .usecases.repositories import Repositories, RepositoryParts
from .usecases.rewrites import RewriteParts, Rewrites
from .usecases.staged_objects import StagedObjectParts, StagedObjects
from .usecases.staged_writes import StagedWrites

# The committed-data manager and its range parameters, and the engine's ports, are named here for wiring, which
# builds the engine: committed/ itself is internal to graveler.
__all__ = [
    "CommittedManager",
    "Engine",
    "EngineParts",
    "RangeParams",
    "build_engine",
    "build_hook_runner",
    "engine_parts",
]


@dataclass(frozen=True, slots=True)
class Engine:
    """The versioning engine's use cases, built from its ports (``ports``: read by tests, GC's status and the
    workflows). Nothing is set after construction: an engine with other ports (a clock, hooks, workflows) is
    another ``build_engine(dataclasses.replace(engine.ports, ...))``."""

    ports: EngineParts
    repositories: Repositories  # create, list, delete (pull requests with it), the storage namespace
    branches: BranchesAndTags
    objects: Objects
    multipart: PresignedMultipart
    staged: StagedWrites  # conditional uploads and deletes, stage by address
    commits: Commits  # commit (inline or workflow), its status, refs resolved, commit records
    merges: Merges
    history: History  # log, diffs, merge base and preview
    rewrites: Rewrites  # revert, cherry-pick, reset
    imports: Importer
    dumps: DumpTasks  # refs dump and restore, inline or as workflows
    pulls: PullRequests
    actions: Actions  # action files and the hooks around a workflow's steps
    collection: CollectionInputs  # what garbage collection reads and releases


def build_engine(
    ports: EngineParts, imports: ImportParts | None = None, pull_requests: PullRequestStore | None = None
) -> Engine:
    """The one place the engine is built. ``imports``: the import's own ports and allowed locations (None: every
    import answers Unsupported); ``pull_requests``: their store (None: every pull request call answers
    Unsupported)."""
    reads = Reads(ports)
    # The commit and merge as steps over these ports: what ``commits`` and ``merges`` run inline, and the
    # workflows' tasks.
    commit_steps = CommitSteps(
        ports.refs,
        ports.staging,
        ports.blocks,
        ports.committed.params,
        storage=ports.committed.storage,
        sleep=ports.sleep,
        guard=ports.guard,
    )
    merge_steps = MergeSteps(ports.refs, ports.staging, ports.blocks, ports.committed, sleep=ports.sleep)
    runner = Runner(ports, reads, commit_steps, merge_steps)
    merges = Merges(
        MergeParts(
            ports.refs,
            runner,
            merge_steps,
            ports.workflows.wait_seconds,
            get_repository=reads.get_repository,
            commit_of=reads.commit_of,
            now=reads.now,
        )
    )

    def check_branch(repo_id: str, branch_id: str) -> None:
        reads.get_branch(repo_id, branch_id)

    pulls = PullRequests(
        PullRequestParts(
            pull_requests, reads.get_repository, check_branch, merges.merge, reads.now, merges.merge_status
        )
    )
    dumps = DumpTasks(
        RefsDumpParts(
            ports.refs, ports.blocks, reads.get_repository, reads.repository_for_write, reads.now, ports.staging
        ),
        ports.workflows,
        runner.launch_task,
    )
    p, r = ports, reads
    objects = Objects(
        ObjectParts(
            p.refs,
            p.staging,
            p.blocks,
            p.committed,
            p.clock,
            p.guard,
            p.collected,
            p.upload_branches,
            get_repository=r.get_repository,
            resolve=r.resolve,
            repository_for_write=r.repository_for_write,
        )
    )
    repositories = RepositoryParts(
        p.refs,
        p.staging,
        p.blocks,
        p.committed,
        p.clock,
        p.namespace_prefix,
        get_repository=r.get_repository,
        repository_for_write=r.repository_for_write,
        forget=pulls.drop_repository,
    )
    branches = BranchParts(
        p.refs,
        p.staging,
        p.guard,
        p.upload_branches,
        p.hooks,
        get_repository=r.get_repository,
        get_branch=r.get_branch,
        resolve=r.resolve,
        repository_for_write=r.repository_for_write,
        run_pre_hooks=r.run_pre_hooks,
        run_post_hooks=r.run_post_hooks,
    )
    history = HistoryParts(
        p.refs, p.staging, p.committed, get_repository=r.get_repository, resolve=r.resolve, commit_of=r.commit_of
    )
    multipart = MultipartParts(
        p.refs, p.blocks, p.clock, p.guard, objects=objects, repository_for_write=r.repository_for_write
    )
    staged = StagedWrites(
        ConditionalUploads(
            ConditionalUploadParts(
                p.refs, p.staging, p.blocks, p.committed, p.clock, p.guard, repository_for_write=r.repository_for_write
            )
        ),
        ConditionalDelete(
            ConditionalDeleteParts(p.refs, p.staging, p.committed, p.guard, repository_for_write=r.repository_for_write)
        ),
        StagedObjects(
            StagedObjectParts(
                p.refs, p.staging, p.blocks, p.guard, p.namespace_prefix, repository_for_write=r.repository_for_write
            )
        ),
    )
    records = CommitRecords(CommitRecordParts(p.refs, p.blocks, repository_for_write=r.repository_for_write))
    rewrites = RewriteParts(
        p.refs,
        p.staging,
        p.committed,
        p.clock,
        p.sleep,
        p.guard,
        resolve=r.resolve,
        repository_for_write=r.repository_for_write,
        run_pre_hooks=r.run_pre_hooks,
        run_post_hooks=r.run_post_hooks,
        commit_of=r.commit_of,
        committed_for=r.committed_for,
        refuse_dirty=r.refuse_dirty,
        prepare_move=r.prepare_move,
    )
    return Engine(
        ports,
        Repositories(repositories),
        BranchesAndTags(branches),
        objects,
        PresignedMultipart(multipart),
        staged,
        Commits(
            CommitParts(
                runner,
                commit_steps,
                records,
                ports.workflows.wait_seconds,
                resolve=r.resolve,
                get_commit=r.get_commit,
                now=r.now,
            )
        ),
        merges,
        History(history),
        Rewrites(rewrites),
        Importer(
            ImporterParts(
                p.refs,
                p.staging,
                p.blocks,
                p.committed,
                p.clock,
                p.sleep,
                p.namespace_prefix,
                get_repository=r.get_repository,
                repository_for_write=r.repository_for_write,
                run_pre_hooks=r.run_pre_hooks,
                run_post_hooks=r.run_post_hooks,
            ),
            imports,
            merges,
            runner,
        ),
        dumps,
        pulls,
        Actions(_action_parts(ports, reads)),
        CollectionInputs(CollectionPorts(ports.refs, ports.staging, ports.clock)),
    )


def _action_parts(p: EngineParts, r: Reads) -> ActionParts:
    return ActionParts(
        p.refs,
        p.staging,
        p.blocks,
        p.committed,
        p.action_files_cache,
        get_repository=r.get_repository,
        resolve=r.resolve,
        run_pre_hooks=r.run_pre_hooks,
        run_post_hooks=r.run_post_hooks,
    )


def build_hook_runner(
    ports: EngineParts,
    invokers: Mapping[str, HookInvoker],
    decode: Decoder,
    *,
    max_hook_seconds: float = 25.0,
    max_run_seconds: float = 25.0,
) -> HookRunner:
    """The hooks of actions over an engine's ports, built before the engine (its ports then carry them): runs kept
    in each repository's namespace through the block store, action files read by the action-file use case over
    reads of their own (reading action files runs no hooks). The caller chooses the adapters: the invokers and the
    YAML decoder."""
    reads = Reads(ports)
    return HookRunner(
        invokers,
        RunStore(ports.blocks),
        Actions(_action_parts(ports, reads)).action_files,
        decode,
        lambda repo_id: reads.get_repository(repo_id).storage_namespace,
        max_hook_seconds=max_hook_seconds,
        max_run_seconds=max_run_seconds,
        cache=ports.action_files_cache,
    )
