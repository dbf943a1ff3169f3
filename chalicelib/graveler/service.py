"""The Graveler facade: one object whose public methods are the engine's use cases, for the API, the S3 gateway,
GC and the local stack. It is a composition, not a class hierarchy: each use case is an object of its own module
(repositories.py, branches_and_tags.py, objects.py, action_files.py, presigned_multipart.py, staged_objects.py,
conditional_delete.py, conditional_uploads.py, diffs.py, history.py, rewrites.py, namespace_files.py,
collection_inputs.py, commit_records.py, commit_and_merge.py and imports/service.py) built from the one frozen
record of the engine's parts (parts.py), the shared reads (reads.py) and, for imports, their own ports
(``ImportParts``). ``Graveler`` builds them and routes each public method to the use case that owns it, with no
logic of its own; no use case imports it back. Commit, merge and import go inline or as workflows through one
decision, workflow_runner.py.
"""

from __future__ import annotations

from .action_files import ActionFiles
from .actions import HookRunner
from .actions.files_cache import ActionFilesCache
from .branches_and_tags import BranchesAndTags
from .caches import TTLCache
from .collected import CollectedCheck
from .collection_inputs import CollectionInputs
from .commit import CommitSteps
from .commit_and_merge import CommitsAndMerges
from .commit_records import CommitRecords
from .committed import CommittedManager, RangeParams
from .conditional_delete import ConditionalDelete
from .conditional_uploads import ConditionalUploads
from .diffs import Diffs
from .history import History
from .imports import Importer, ImportParts
from .merge import MergeSteps
from .namespace_files import NamespaceStorage
from .objects import Objects
from .parts import EngineParts, Workflows, engine_parts
from .ports import BlockStore, RefStore, StagingStore
from .presigned_multipart import PresignedMultipart
from .protection import BranchProtection, NoProtection
from .reads import Reads
from .repositories import Repositories
from .rewrites import Rewrites
from .staged_objects import StagedObjects
from .workflow_runner import Runner

# The committed-data manager and its range parameters, and the engine's parts, are named here for wiring, which
# builds the engine: committed/ itself is internal to graveler.
__all__ = ["CommittedManager", "EngineParts", "Graveler", "RangeParams", "engine_parts"]


class Graveler:
    """The versioning engine's use cases, built from its parts. Nothing is set after construction: an engine with
    other parts (a clock, hooks, workflows) is another ``Graveler(dataclasses.replace(parts, ...))``."""

    # Slots: assigning a name the facade does not route (say, a clock meant for its use cases) fails loudly.
    __slots__ = (
        "abort_presigned_multipart",
        "action_files",
        "all_commits",
        "branch_heads",
        "cancel_import",
        "check_upload_branch",
        "cherry_pick",
        "commit",
        "commit_status",
        "commit_steps",
        "committed_for",
        "complete_presigned_multipart",
        "copy_object",
        "copy_part",
        "create_bare_repository",
        "create_branch",
        "create_commit_record",
        "create_repository",
        "create_tag",
        "delete_branch",
        "delete_object",
        "delete_object_if",
        "delete_objects",
        "delete_repository",
        "delete_tag",
        "diff_refs",
        "diff_uncommitted",
        "find_merge_base",
        "get_branch",
        "get_commit",
        "get_repository",
        "get_tag",
        "hard_reset",
        "import_parts",
        "import_status",
        "importer",
        "is_dirty",
        "iterate_repositories",
        "link_object",
        "link_upload",
        "list_branches",
        "list_objects",
        "list_repositories",
        "list_tags",
        "log",
        "merge",
        "merge_status",
        "merge_steps",
        "metadata_file",
        "namespace_files",
        "new_physical_address",
        "now",
        "parts",
        "prepare_move",
        "presign_metadata_file",
        "presign_object",
        "presign_part",
        "presign_upload",
        "preview_merge",
        "read_metadata_file",
        "read_object",
        "refuse_dirty",
        "refuse_existing_repository",
        "release_retired",
        "repository_for_write",
        "reset_branch",
        "resolve",
        "revert",
        "run_post_hooks",
        "run_pre_hooks",
        "stage_object",
        "staged_addresses",
        "start_import",
        "start_presigned_multipart",
        "stat_object",
        "stat_readable",
        "storage_class",
        "update_user_metadata",
        "upload_object",
        "upload_objects",
        "upload_objects_if",
    )

    def __init__(self, parts: EngineParts, imports: ImportParts | None = None) -> None:
        """``imports``: the import's own ports and allowed locations (None: every import answers Unsupported)."""
        self.parts = parts
        self.import_parts = imports
        reads = Reads(parts)
        # The commit and merge as steps over these ports: what ``commit`` and ``merge`` run inline, and the
        # workflows' tasks.
        self.commit_steps = CommitSteps(
            parts.refs,
            parts.staging,
            parts.blocks,
            parts.committed.params,
            storage=parts.committed.storage,
            sleep=parts.sleep,
            guard=parts.guard,
        )
        self.merge_steps = MergeSteps(parts.refs, parts.staging, parts.blocks, parts.committed, sleep=parts.sleep)
        repositories = Repositories(parts, reads)
        branches_and_tags = BranchesAndTags(parts, reads)
        objects = Objects(parts, reads)
        action_files_reader = ActionFiles(parts, reads)
        presigned_multipart = PresignedMultipart(parts, reads, objects)
        staged_objects = StagedObjects(parts, reads)
        conditional_delete = ConditionalDelete(parts, reads)
        conditional_uploads = ConditionalUploads(parts, reads)
        diffs = Diffs(parts, reads)
        history = History(parts, reads)
        rewrites = Rewrites(parts, reads)
        namespace_storage = NamespaceStorage(parts, reads)
        collection_inputs = CollectionInputs(parts)
        commit_records = CommitRecords(parts, reads)
        runner = Runner(parts, reads, self.commit_steps, self.merge_steps)
        commits_and_merges = CommitsAndMerges(parts, reads, runner)
        # The import use case, launched through the same runner and merged through the same merge entry; its
        # object is public for the import workflow's tasks (its steps) and tests.
        self.importer = Importer(parts, reads, imports, commits_and_merges, runner)
        # The shared reads and checks
        self.run_pre_hooks = reads.run_pre_hooks
        self.run_post_hooks = reads.run_post_hooks
        self.now = reads.now
        self.resolve = reads.resolve
        self.get_commit = reads.get_commit
        self.get_repository = reads.get_repository
        self.get_branch = reads.get_branch
        self.committed_for = reads.committed_for
        self.repository_for_write = reads.repository_for_write
        self.refuse_dirty = reads.refuse_dirty
        self.prepare_move = reads.prepare_move
        # Repositories
        self.create_repository = repositories.create_repository
        self.create_bare_repository = repositories.create_bare_repository
        self.refuse_existing_repository = repositories.refuse_existing_repository
        self.list_repositories = repositories.list_repositories
        self.delete_repository = repositories.delete_repository
        # BranchesAndTags
        self.create_branch = branches_and_tags.create_branch
        self.list_branches = branches_and_tags.list_branches
        self.delete_branch = branches_and_tags.delete_branch
        self.create_tag = branches_and_tags.create_tag
        self.get_tag = branches_and_tags.get_tag
        self.list_tags = branches_and_tags.list_tags
        self.delete_tag = branches_and_tags.delete_tag
        # Objects
        self.stat_object = objects.stat_object
        self.storage_class = objects.storage_class
        self.stat_readable = objects.stat_readable
        self.read_object = objects.read_object
        self.presign_object = objects.presign_object
        self.list_objects = objects.list_objects
        self.upload_object = objects.upload_object
        self.upload_objects = objects.upload_objects
        self.check_upload_branch = objects.check_upload_branch
        self.new_physical_address = objects.new_physical_address
        self.link_object = objects.link_object
        self.link_upload = objects.link_upload
        self.copy_object = objects.copy_object
        self.update_user_metadata = objects.update_user_metadata
        self.delete_object = objects.delete_object
        self.delete_objects = objects.delete_objects
        # ActionFiles
        self.action_files = action_files_reader.action_files
        # PresignedMultipart
        self.start_presigned_multipart = presigned_multipart.start_presigned_multipart
        self.presign_part = presigned_multipart.presign_part
        self.copy_part = presigned_multipart.copy_part
        self.complete_presigned_multipart = presigned_multipart.complete_presigned_multipart
        self.abort_presigned_multipart = presigned_multipart.abort_presigned_multipart
        # StagedObjects
        self.stage_object = staged_objects.stage_object
        # ConditionalDelete
        self.delete_object_if = conditional_delete.delete_object_if
        # ConditionalUploads
        self.upload_objects_if = conditional_uploads.upload_objects_if
        # Diffs
        self.diff_uncommitted = diffs.diff_uncommitted
        self.is_dirty = diffs.is_dirty
        self.diff_refs = diffs.diff_refs
        self.find_merge_base = diffs.find_merge_base
        self.preview_merge = diffs.preview_merge
        # History
        self.log = history.log
        # Rewrites
        self.revert = rewrites.revert
        self.cherry_pick = rewrites.cherry_pick
        self.reset_branch = rewrites.reset_branch
        self.hard_reset = rewrites.hard_reset
        # NamespaceStorage
        self.namespace_files = namespace_storage.namespace_files
        self.metadata_file = namespace_storage.metadata_file
        self.presign_metadata_file = namespace_storage.presign_metadata_file
        self.read_metadata_file = namespace_storage.read_metadata_file
        self.presign_upload = namespace_storage.presign_upload
        # CollectionInputs
        self.iterate_repositories = collection_inputs.iterate_repositories
        self.staged_addresses = collection_inputs.staged_addresses
        self.release_retired = collection_inputs.release_retired
        self.branch_heads = collection_inputs.branch_heads
        self.all_commits = collection_inputs.all_commits
        # CommitRecords
        self.create_commit_record = commit_records.create_commit_record
        # CommitsAndMerges
        self.commit = commits_and_merges.commit
        self.commit_status = commits_and_merges.commit_status
        self.merge = commits_and_merges.merge
        self.merge_status = commits_and_merges.merge_status
        # Importer
        self.start_import = self.importer.submit
        self.import_status = self.importer.status
        self.cancel_import = self.importer.cancel

    # The parts callers read (tests, wiring, GC's status): read-only, as the use cases hold the same ones.

    @property
    def refs(self) -> RefStore:
        return self.parts.refs

    @property
    def staging(self) -> StagingStore:
        return self.parts.staging

    @property
    def blocks(self) -> BlockStore:
        return self.parts.blocks

    @property
    def committed(self) -> CommittedManager:
        return self.parts.committed

    @property
    def workflows(self) -> Workflows:
        return self.parts.workflows

    @property
    def protection(self) -> BranchProtection | None:
        return self.parts.protection

    @property
    def guard(self) -> BranchProtection | NoProtection:
        return self.parts.guard

    @property
    def collected(self) -> CollectedCheck:
        return self.parts.collected

    @property
    def hooks(self) -> HookRunner | None:
        return self.parts.hooks

    @property
    def action_files_cache(self) -> ActionFilesCache:
        return self.parts.action_files_cache

    @property
    def upload_branches(self) -> TTLCache[tuple[str, str], bool]:
        return self.parts.upload_branches

    @property
    def namespace_prefix(self) -> str | None:
        return self.parts.namespace_prefix
