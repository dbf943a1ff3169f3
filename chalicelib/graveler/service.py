"""The Graveler service: repositories, branches, tags, commits, objects, diff, merge and history operations,
tied together over the ports.

Every public method is one use case the API (or the S3 gateway) calls. It receives its parts through the
constructor and never touches a driver.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from . import errors
from . import move_checks, namespaces
from .addressing import new_data_address
from .branch_moves import MOVE_TRIES, move_to_commit, new_staging_token, retire, update_branch
from .batch_upload import NewObject, check_batch, write_objects
from .collected import CollectedCheck
from .commit import CommitRequest, CommitSteps
from .committed import CommittedManager, compare
from .committed.compare import MergeChange
from .committed.merge import Resolver
from .committed.mergetable import Action, Decision
from .history import LogFilter, log_page
from .identity import commit_id, entry_identity
from .listing import clamp_amount, overlay, paginate
from .errors import MergeConflicts
from .merge import MergeRequest, MergeSteps
from .merge.base import require_merge_base
from .merge.policy import MergePreview, MergeSummary, conflict_policy
from .ports import BlockStore, RefStore, StagingStore
from .linking import check_claim
from .object_fields import validate_entry, validate_headers, validate_user_metadata
from .protection import BranchProtection, NoProtection
from .records import (
    EMPTY_METARANGE,
    Branch,
    BranchID,
    Commit,
    CommitID,
    Diff,
    DiffType,
    Entry,
    EntryRecord,
    Key,
    ListedObject,
    MetaRangeID,
    Page,
    RefKind,
    Repository,
    RepositoryID,
    RepositoryState,
    ResolvedRef,
    StagedEntry,
    StagingToken,
    Tag,
    TagID,
)
from .refs import resolve_ref
from .reset import reset_key, reset_prefix
from .staging import (
    branch_tokens,
    drop_tokens,
    is_dirty,
    read_staged,
    stage,
    stage_many,
    staged_changes,
)
from .validation import (
    normalize_storage_namespace,
    validate_branch_id,
    validate_path,
    validate_repository_id,
    validate_tag_id,
)

INITIAL_COMMIT_MESSAGE = "Repository created"
COMMIT_TRIES = MOVE_TRIES
MAX_DELETE_PATHS = 1000
# Diff types between refs, and what a branch reset drops (lakeFS's names).
TWO_DOT = "two_dot"
THREE_DOT = "three_dot"
RESET_ALL = "reset"
RESET_OBJECT = "object"
RESET_PREFIX = "common_prefix"


class Graveler:
    """The versioning engine's use cases."""

    def __init__(
        self,
        refs: RefStore,
        staging: StagingStore,
        blocks: BlockStore,
        committed: CommittedManager,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
        protection: BranchProtection | None = None,
        collected: CollectedCheck | None = None,
        namespace_prefix: str | None = None,
    ) -> None:
        """``namespace_prefix``: where repositories may live (``s3://<bucket>/`` of the deployment); None: any."""
        self.refs = refs
        self.namespace_prefix = namespace_prefix
        self.staging = staging
        self.blocks = blocks
        self.committed = committed
        self._clock = clock
        self._sleep = sleep
        # The branch protection rules (None: an engine without a rules store, where nothing is protected).
        self.protection = protection
        self.guard: BranchProtection | NoProtection = protection or NoProtection()
        # Which entries' data garbage collection deleted, for the reads that do not touch the data themselves.
        self.collected = collected or CollectedCheck(blocks)

    @functools.cached_property
    def commit_steps(self) -> CommitSteps:
        """The commit as steps over these ports (what ``commit`` runs, and the commit workflow's tasks)."""
        return CommitSteps(self.refs, self.staging, self.blocks, self.committed.params, storage=self.committed.storage,
                           sleep=self._sleep, guard=self.guard)

    @functools.cached_property
    def merge_steps(self) -> MergeSteps:
        """The merge as steps over these ports (what ``merge`` runs, and the merge workflow's tasks)."""
        return MergeSteps(self.refs, self.staging, self.blocks, self.committed, sleep=self._sleep)

    def now(self) -> float:
        """The time commits are dated with (unix seconds, sub-second kept: the log orders by it) when the caller
        gives none."""
        return self._clock()

    # ---- repositories ---------------------------------------------------------------------------------------

    def create_repository(
        self, repo_id: str, storage_namespace: str, default_branch: str = "main", read_only: bool = False
    ) -> Repository:
        validate_repository_id(repo_id)
        validate_branch_id(default_branch)
        namespace = normalize_storage_namespace(storage_namespace)
        namespaces.check_allowed(namespace + "/", self.namespace_prefix)
        rid = RepositoryID(repo_id)
        self.refuse_existing_repository(repo_id)
        namespaces.claim(self.blocks, namespace)
        try:
            return self._create_repository_records(rid, namespace, default_branch, read_only)
        except errors.RepositoryExists:
            # Another creation of this id won: the namespace was claimed for nothing.
            namespaces.release(self.blocks, namespace)
            raise

    def _create_repository_records(
        self, rid: RepositoryID, namespace: str, default_branch: str, read_only: bool
    ) -> Repository:
        repo_id = str(rid)
        now = self._clock()
        # As lakeFS does: the initial commit and the default branch first, the repository record last, so a
        # repository that exists is always complete.
        initial = self._make_commit("", INITIAL_COMMIT_MESSAGE, EMPTY_METARANGE, now, {}, (), 1)
        self.refs.add_commit(rid, initial)
        try:
            self.refs.create_branch(
                rid, Branch(BranchID(default_branch), initial.id, new_staging_token(repo_id, default_branch))
            )
        except errors.BranchExists as e:
            raise errors.RepositoryExists(f"repository {repo_id} is being created concurrently") from e
        repo = Repository(rid, namespace, BranchID(default_branch), int(now), RepositoryState.ACTIVE, read_only,
                          uuid.uuid4().hex)
        self.refs.create_repository(repo)
        return repo

    def refuse_existing_repository(self, repo_id: str) -> None:
        """Raises RepositoryExists when the id is taken (also by a repository being deleted). An id that is not
        a valid repository id cannot be taken: creation refuses it later."""
        try:
            validate_repository_id(repo_id)
        except errors.Invalid:
            return
        try:
            self.refs.get_repository(RepositoryID(repo_id))
        except errors.RepositoryNotFound:
            return
        raise errors.RepositoryExists(repo_id)

    def get_repository(self, repo_id: str) -> Repository:
        return move_checks.live_repository(self.refs, repo_id)

    def list_repositories(self, prefix: str = "", after: str = "", amount: int | None = 100) -> Page[Repository]:
        return self._page_by_id(lambda a, n: self.refs.list_repositories(a, n), prefix, after, amount)

    def delete_repository(self, repo_id: str) -> None:
        rid = RepositoryID(repo_id)
        self.refs.get_repository(rid)
        branches = self.refs.list_branches(rid, "", 1_000_000)
        self.refs.delete_repository(rid)
        for branch in branches:
            drop_tokens(self.staging, [*branch_tokens(branch), *branch.retired_tokens])

    # ---- branches -------------------------------------------------------------------------------------------

    def create_branch(self, repo_id: str, branch_id: str, source_ref: str, hidden: bool = False) -> Branch:
        validate_branch_id(branch_id)
        repo = self.get_repository(repo_id)
        source = self.resolve(repo.id, source_ref)
        branch = Branch(BranchID(branch_id), source.commit_id, new_staging_token(repo_id, branch_id), hidden=hidden)
        # Tied to this generation of the repository: a delete (and re-creation) meanwhile makes it a 404.
        self.refs.create_branch(repo.id, branch, generation=repo.generation)
        return branch

    def get_branch(self, repo_id: str, branch_id: str) -> Branch:
        repo = self.get_repository(repo_id)
        return self.refs.get_branch(repo.id, BranchID(branch_id))

    def list_branches(
        self, repo_id: str, prefix: str = "", after: str = "", amount: int | None = 100, show_hidden: bool = False
    ) -> Page[Branch]:
        """Branches by id; hidden ones only with ``show_hidden`` (as lakeFS)."""
        repo = self.get_repository(repo_id)
        return self._page_by_id(lambda a, n: self.refs.list_branches(repo.id, a, n), prefix, after, amount,
                                keep=None if show_hidden else lambda branch: not branch.hidden)

    def delete_branch(self, repo_id: str, branch_id: str) -> None:
        repo = self._writable_repository(repo_id)
        if branch_id == repo.default_branch_id:
            raise errors.Forbidden(f"cannot delete repository default branch: {branch_id}")
        self.guard.refuse_delete(repo, branch_id)
        branch = self.refs.get_branch(repo.id, BranchID(branch_id))
        self.refs.delete_branch(repo.id, branch.id)
        drop_tokens(self.staging, [*branch_tokens(branch), *branch.retired_tokens])

    # ---- tags -----------------------------------------------------------------------------------------------

    def create_tag(self, repo_id: str, tag_id: str, ref: str) -> Tag:
        validate_tag_id(tag_id)
        repo = self._writable_repository(repo_id)
        tag = Tag(TagID(tag_id), self.resolve(repo.id, ref).commit_id)
        self.refs.create_tag(repo.id, tag, generation=repo.generation)
        return tag

    def get_tag(self, repo_id: str, tag_id: str) -> Tag:
        repo = self.get_repository(repo_id)
        return self.refs.get_tag(repo.id, TagID(tag_id))

    def list_tags(self, repo_id: str, prefix: str = "", after: str = "", amount: int | None = 100) -> Page[Tag]:
        repo = self.get_repository(repo_id)
        return self._page_by_id(lambda a, n: self.refs.list_tags(repo.id, a, n), prefix, after, amount)

    def delete_tag(self, repo_id: str, tag_id: str) -> None:
        repo = self._writable_repository(repo_id)
        self.refs.delete_tag(repo.id, TagID(tag_id))

    # ---- commits and refs -----------------------------------------------------------------------------------

    def resolve(self, repo_id: str, ref: str) -> ResolvedRef:
        return resolve_ref(self.refs, RepositoryID(repo_id), ref)

    def get_commit(self, repo_id: str, ref: str) -> Commit:
        repo = self.get_repository(repo_id)
        return self.refs.get_commit(repo.id, self.resolve(repo.id, ref).commit_id)

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
        repo = self.get_repository(repo_id)
        options = LogFilter(
            objects=tuple(objects),
            prefixes=tuple(prefixes),
            since=since,
            stop_at=self.resolve(repo.id, stop_at).commit_id if stop_at else None,
            limit=limit,
            first_parent=first_parent,
        )
        ns = repo.storage_namespace

        def first_difference(parent: Commit, commit: Commit, start: str) -> str | None:
            row = next(compare.diff(self.committed, ns, parent.meta_range_id, commit.meta_range_id, start), None)
            return None if row is None else row.key

        start = self.resolve(repo.id, ref).commit_id
        return log_page(self.refs, repo.id, start, options, after, clamp_amount(amount), first_difference)

    def commit(
        self,
        repo_id: str,
        branch_id: str,
        committer: str,
        message: str,
        metadata: dict[str, str] | None = None,
        date: int | None = None,
        allow_empty: bool = False,
    ) -> Commit:
        """Seals the staging token, applies every sealed token onto the head and moves the branch: the steps of the
        commit workflow (commit_steps.py) in one slice.

        The branch move is a compare-and-swap; when it loses to another commit the work is redone from what is
        still sealed (the winner may have committed our changes already: then its head is the answer).
        """
        if not message:
            raise errors.Invalid("commit message is required")
        request = CommitRequest(repo_id, branch_id, uuid.uuid4().hex, committer, message,
                                self.now() if date is None else float(date), dict(metadata or {}), allow_empty)
        result = self.commit_steps.run(request, max_slices=1, max_rounds=COMMIT_TRIES)
        return self.refs.get_commit(RepositoryID(repo_id), CommitID(str(result["commit_id"])))

    # ---- objects --------------------------------------------------------------------------------------------

    def stat_object(self, repo_id: str, ref: str, path: str) -> Entry:
        validate_path(path)
        return self._stat(self.get_repository(repo_id), ref, path)

    def stat_readable(self, repo_id: str, ref: str, path: str) -> tuple[Entry, bool]:
        """The entry, and whether garbage collection deleted its data (collected.py: an S3 HEAD only for the
        addresses old enough to have been collected). For the reads that hand out a URL or headers only."""
        validate_path(path)
        repo = self.get_repository(repo_id)
        entry = self._stat(repo, ref, path)
        return entry, self.collected.is_collected(repo.storage_namespace, entry.physical_address)

    def _stat(self, repo: Repository, ref: str, path: str) -> Entry:
        resolved = self.resolve(repo.id, ref)
        if resolved.include_staging and resolved.branch is not None:
            staged = read_staged(self.staging, resolved.branch, Key(path))
            if staged is not None:
                if staged.value is None:
                    raise errors.ObjectNotFound(f"object {path} not found")
                return staged.value
        head = self.refs.get_commit(repo.id, resolved.commit_id)
        entry = self.committed.get(repo.storage_namespace, head.meta_range_id, Key(path))
        if entry is None:
            raise errors.ObjectNotFound(f"object {path} not found")
        return entry

    def read_object(self, repo_id: str, entry: Entry, start: int | None = None, end: int | None = None) -> bytes:
        try:
            return self.blocks.get(entry.physical_address, start, end)
        except errors.ObjectNotFound as e:
            raise errors.Gone(f"the data of this object was garbage collected ({repo_id})") from e

    def presign_object(self, repo_id: str, entry: Entry, expires_seconds: int) -> str:
        return self.blocks.presign_get(entry.physical_address, expires_seconds)

    def list_objects(
        self,
        repo_id: str,
        ref: str,
        prefix: str = "",
        delimiter: str = "",
        after: str = "",
        amount: int | None = 100,
    ) -> Page[ListedObject]:
        repo = self.get_repository(repo_id)
        view = self._entries_view(repo, self.resolve(repo.id, ref), clamp_amount(amount) + 1)
        page = paginate(
            lambda start: (ListedObject(r.key, r.entry) for r in view(start)),
            lambda common: ListedObject(Key(common), None),
            prefix,
            delimiter,
            after,
            amount,
        )
        return page

    def upload_object(
        self,
        repo_id: str,
        branch_id: str,
        path: str,
        data: bytes,
        content_type: str = "application/octet-stream",
        user_metadata: dict[str, str] | None = None,
        if_absent: bool = False,
    ) -> Entry:
        validate_path(path)
        content_type = content_type or "application/octet-stream"
        validate_headers(content_type, user_metadata or {})
        repo = self._writable_repository(repo_id)
        self.refs.get_branch(repo.id, BranchID(branch_id))
        self.guard.refuse_write(repo, branch_id)
        if if_absent and self._exists(repo, branch_id, path):
            raise errors.PreconditionFailed(f"object {path} already exists")
        now = self._clock()
        address = new_data_address(repo.storage_namespace, now)
        written = self.blocks.put(address, data)
        entry = Entry(
            physical_address=address,
            size=written.size,
            etag=written.etag,
            mtime=int(now),
            content_type=content_type,
            user_metadata=dict(user_metadata or {}),
        )
        validate_entry(entry)
        stage(self.refs, self.staging, repo.id, BranchID(branch_id), StagedEntry(Key(path), entry))
        return entry

    def upload_objects(self, repo_id: str, branch_id: str, objects: Sequence[NewObject]) -> list[Entry]:
        """Writes and stages several new objects at once (Lakelet's batch upload, batch_upload.py); returns
        their entries in the order given. A bad object stages nothing."""
        check_batch(objects)
        repo = self._writable_repository(repo_id)
        self.refs.get_branch(repo.id, BranchID(branch_id))
        self.guard.refuse_write(repo, branch_id)
        entries = write_objects(self.blocks, repo.storage_namespace, objects, self._clock())
        changes = [StagedEntry(Key(obj.path), entry) for obj, entry in zip(objects, entries, strict=True)]
        stage_many(self.refs, self.staging, repo.id, BranchID(branch_id), changes)
        return entries

    def new_physical_address(self, repo_id: str) -> str:
        """A fresh, never used address under the repository's data/ for data written outside upload_object
        (presigned uploads, multipart uploads)."""
        repo = self._writable_repository(repo_id)
        return new_data_address(repo.storage_namespace, self._clock())

    def link_object(self, repo_id: str, branch_id: str, path: str, entry: Entry, if_absent: bool = False) -> Entry:
        """Stages an entry whose data is already stored. The caller vouches that the address is the repository's
        own (issued by new_physical_address, or copied from an entry of the same repository)."""
        validate_path(path)
        validate_entry(entry)
        repo = self._writable_repository(repo_id)
        if not entry.physical_address.startswith(repo.storage_namespace + "/"):
            raise errors.Invalid("the physical address is outside the repository's storage namespace")
        self.refs.get_branch(repo.id, BranchID(branch_id))
        self.guard.refuse_write(repo, branch_id)
        if if_absent and self._exists(repo, branch_id, path):
            raise errors.PreconditionFailed(f"object {path} already exists")
        stage(self.refs, self.staging, repo.id, BranchID(branch_id), StagedEntry(Key(path), entry))
        return entry

    def link_upload(
        self, repo_id: str, branch_id: str, path: str, upload_address: str, claim: Entry, if_absent: bool = False,
        write_once: bool = False,
    ) -> Entry:
        """Stages what a client uploaded to ``upload_address`` (an address from new_physical_address, written with
        a presigned PUT): copied to an address no URL writes, checked against the claim (its size, and its
        checksum where the store can tell), then the upload is deleted. With ``write_once`` (the URL could only
        create the object, never replace it) the upload itself is checked and staged, with no copy. See
        linking.py. Raises Invalid when nothing was uploaded or the upload contradicts the claim; the claim's
        physical address is ignored."""
        validate_path(path)
        validate_entry(claim)
        repo = self._writable_repository(repo_id)
        self.guard.refuse_write(repo, branch_id)
        if not upload_address.startswith(repo.storage_namespace + "/data/"):
            raise errors.Invalid("the physical address is outside the repository's storage namespace")
        self.refs.get_branch(repo.id, BranchID(branch_id))
        if if_absent and self._exists(repo, branch_id, path):
            raise errors.PreconditionFailed(f"object {path} already exists")
        if write_once:
            try:
                check_claim(self.blocks.stat(upload_address), claim)
            except errors.ObjectNotFound:
                raise errors.Invalid("nothing was uploaded to the physical address") from None
            entry = dataclasses.replace(claim, physical_address=upload_address)
            stage(self.refs, self.staging, repo.id, BranchID(branch_id), StagedEntry(Key(path), entry))
            return entry
        address = new_data_address(repo.storage_namespace, self._clock())
        try:
            self.blocks.copy(upload_address, address)
        except errors.ObjectNotFound:
            raise errors.Invalid("nothing was uploaded to the physical address") from None
        try:
            check_claim(self.blocks.stat(address), claim)
            entry = dataclasses.replace(claim, physical_address=address)
            stage(self.refs, self.staging, repo.id, BranchID(branch_id), StagedEntry(Key(path), entry))
        except BaseException:
            self.blocks.delete(address)
            raise
        # Best effort: an upload left behind is an unreferenced object under data/, which GC collects.
        with contextlib.suppress(errors.GravelerError):
            self.blocks.delete(upload_address)
        return entry

    def copy_object(
        self, repo_id: str, src_ref: str, src_path: str, dst_branch: str, dst_path: str, if_absent: bool = False
    ) -> Entry:
        """A shallow copy inside one repository: the new path shares the physical object (a new mtime only)."""
        source = self.stat_object(repo_id, src_ref, src_path)
        copied = Entry(
            physical_address=source.physical_address,
            size=source.size,
            etag=source.etag,
            mtime=int(self._clock()),
            content_type=source.content_type,
            user_metadata=dict(source.user_metadata),
        )
        return self.link_object(repo_id, dst_branch, dst_path, copied, if_absent)

    def update_user_metadata(self, repo_id: str, branch_id: str, path: str, metadata: dict[str, str]) -> Entry:
        """Replaces the user metadata of the object the branch shows at ``path``, as a staged change (the same
        physical object; the new metadata changes the entry's identity, so the diff shows it changed). Raises
        ObjectNotFound."""
        validate_path(path)
        validate_user_metadata(metadata)
        repo = self._writable_repository(repo_id)
        self.guard.refuse_write(repo, branch_id)
        self.refs.get_branch(repo.id, BranchID(branch_id))
        entry = self.stat_object(repo.id, branch_id, path)
        updated = dataclasses.replace(entry, user_metadata=dict(metadata))
        stage(self.refs, self.staging, repo.id, BranchID(branch_id), StagedEntry(Key(path), updated))
        return updated

    def delete_object(self, repo_id: str, branch_id: str, path: str) -> None:
        """Hides the path on the branch. A path that exists nowhere is a no-op."""
        validate_path(path)
        repo = self._writable_repository(repo_id)
        self.guard.refuse_write(repo, branch_id)
        self._delete_path(repo, BranchID(branch_id), path, {})

    def delete_objects(
        self, repo_id: str, branch_id: str, paths: list[str]
    ) -> list[tuple[str, errors.GravelerError]]:
        if len(paths) > MAX_DELETE_PATHS:
            raise errors.Invalid(f"at most {MAX_DELETE_PATHS} paths per request")
        repo = self._writable_repository(repo_id)
        try:
            self.guard.refuse_write(repo, branch_id)
        except errors.ProtectedBranch as e:
            # As lakeFS's bulk delete: every path is reported refused (403), none is deleted.
            return [(path, e) for path in paths]
        heads: dict[CommitID, Commit] = {}
        failures: list[tuple[str, errors.GravelerError]] = []
        for path in paths:
            try:
                validate_path(path)
                self._delete_path(repo, BranchID(branch_id), path, heads)
            except (errors.Invalid, errors.TooManyTries) as e:
                failures.append((path, e))
        return failures

    def _delete_path(self, repo: Repository, branch_id: BranchID, path: str, heads: dict[CommitID, Commit]) -> None:
        # The branch is read per path (a commit may move it between paths); commits never change, so a bulk
        # delete reads each head once.
        branch = self.refs.get_branch(repo.id, branch_id)
        staged = read_staged(self.staging, branch, Key(path))
        if staged is None or staged.value is None:
            if staged is not None:
                return
            head = heads.get(branch.commit_id)
            if head is None:
                head = heads[branch.commit_id] = self.refs.get_commit(repo.id, branch.commit_id)
            if self.committed.get(repo.storage_namespace, head.meta_range_id, Key(path)) is None:
                return
        # A tombstone, even for a key that is only staged: it also hides a copy in a token a commit just sealed.
        stage(self.refs, self.staging, repo.id, branch.id, StagedEntry(Key(path), None))

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
        repo = self.get_repository(repo_id)
        branch = self.refs.get_branch(repo.id, BranchID(branch_id))
        head = self.refs.get_commit(repo.id, branch.commit_id)
        tokens = branch_tokens(branch)

        def view(start: str) -> Iterator[Diff]:
            for staged in staged_changes(self.staging, tokens, start, clamp_amount(amount) + 1):
                base = self.committed.get(repo.storage_namespace, head.meta_range_id, staged.key)
                if staged.value is None:
                    if base is not None:
                        yield Diff(staged.key, DiffType.REMOVED, None)
                elif base is None:
                    yield Diff(staged.key, DiffType.ADDED, staged.value)
                elif entry_identity(base) != entry_identity(staged.value):
                    yield Diff(staged.key, DiffType.CHANGED, staged.value)

        return paginate(view, lambda common: Diff(Key(common), DiffType.PREFIX_CHANGED, None),
                        prefix, delimiter, after, amount)

    def is_dirty(self, repo_id: str, branch_id: str) -> bool:
        repo = self.get_repository(repo_id)
        return is_dirty(self.staging, self.refs.get_branch(repo.id, BranchID(branch_id)))

    # ---- diff, merge and history operations -----------------------------------------------------------------

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
        repo = self.get_repository(repo_id)
        left = self._commit_of(repo.id, left_ref)
        right = self._commit_of(repo.id, right_ref)
        ns = repo.storage_namespace
        view: Callable[[str], Iterator[Diff]]
        if diff_type == TWO_DOT:

            def view(start: str) -> Iterator[Diff]:
                for row in compare.diff(self.committed, ns, left.meta_range_id, right.meta_range_id, start):
                    yield Diff(row.key, row.type, row.right_entry())

        elif diff_type == THREE_DOT:
            base = require_merge_base(self.refs, repo.id, left.id, right.id)

            def view(start: str) -> Iterator[Diff]:
                for change in compare.merge_changes(
                    self.committed, ns, base.meta_range_id, right.meta_range_id, left.meta_range_id, None, start
                ):
                    yield Diff(change.key, change.type, change.entry)

        else:
            raise errors.Invalid(f"diff type must be {TWO_DOT} or {THREE_DOT}, got {diff_type!r}")
        return paginate(view, lambda common: Diff(Key(common), DiffType.PREFIX_CHANGED, None),
                        prefix, delimiter, after, amount)

    def find_merge_base(self, repo_id: str, source_ref: str, destination_ref: str) -> tuple[Commit, Commit, Commit]:
        """(source, destination, merge base) commits. Raises NoMergeBase (400) when they share no ancestor."""
        repo = self.get_repository(repo_id)
        source = self._commit_of(repo.id, source_ref)
        destination = self._commit_of(repo.id, destination_ref)
        return source, destination, require_merge_base(self.refs, repo.id, source.id, destination.id)

    def merge(
        self,
        repo_id: str,
        source_ref: str,
        destination_branch: str,
        committer: str,
        message: str = "",
        metadata: dict[str, str] | None = None,
        strategy: str | None = None,
        path_strategies: Sequence[tuple[str, str]] = (),
        squash_merge: bool = False,
        allow_empty: bool = False,
        force: bool = False,
    ) -> Commit:
        """Merges ``source_ref`` into the branch with a new commit (never a fast-forward): parents [destination
        head, source] (squash_merge: the head only), the strategies in its metadata. The steps of the merge
        workflow (merge_steps.py) in one slice.

        Raises DirtyBranch when the destination has uncommitted changes, NoChanges when the source's tree is the
        merge base's, as lakeFS decides (merging.source_holds_changes; unless allow_empty or force), Invalid for
        an unknown strategy, NoMergeBase, and MergeConflicts (409, listing the conflicts) when a conflict is
        left unresolved.
        """
        repo = self.get_repository(repo_id)
        self.refs.get_branch(repo.id, BranchID(destination_branch))
        source = self._commit_of(repo.id, source_ref)
        request = MergeRequest(repo_id, source_ref, source.id, destination_branch, uuid.uuid4().hex, committer,
                               message, self.now(), dict(metadata or {}), strategy, tuple(path_strategies),
                               squash_merge, allow_empty, force)
        result = self.merge_steps.run(request, max_slices=1, max_rounds=COMMIT_TRIES)
        return self.refs.get_commit(repo.id, CommitID(str(result["commit_id"])))

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
        repo = self.get_repository(repo_id)
        dest = self._commit_of(repo.id, self.refs.get_branch(repo.id, BranchID(destination_branch)).commit_id)
        source = self._commit_of(repo.id, source_ref)
        base = require_merge_base(self.refs, repo.id, source.id, dest.id)
        ns = repo.storage_namespace

        def changes(start: str) -> Iterator[MergeChange]:
            return compare.merge_changes(
                self.committed, ns, base.meta_range_id, source.meta_range_id, dest.meta_range_id, policy.resolve, start
            )

        def view(start: str) -> Iterator[MergeChange]:
            return (c for c in changes(start) if c.conflict is not None) if only_conflicts else changes(start)

        counts: dict[DiffType, int] = dict.fromkeys(DiffType, 0)
        unresolved = 0
        for change in changes(""):
            counts[change.type] += 1
            unresolved += change.conflict is not None and change.conflict.resolution is None
        summary = MergeSummary(
            counts[DiffType.ADDED], counts[DiffType.REMOVED], counts[DiffType.CHANGED], counts[DiffType.CONFLICT],
            unresolved,
        )
        page = paginate(view, lambda common: MergeChange(Key(common), DiffType.PREFIX_CHANGED, None),
                        prefix, "", after, amount)
        return MergePreview(source, dest, base, summary, page)

    def revert(
        self,
        repo_id: str,
        branch_id: str,
        ref: str,
        committer: str,
        parent_number: int = 0,
        message: str | None = None,
        metadata: dict[str, str] | None = None,
        allow_empty: bool = False,
        force: bool = False,
    ) -> Commit:
        """A new commit on the branch undoing ``ref``: its parent merged into the branch with ``ref`` as the
        merge base. A merge commit needs ``parent_number`` (1-based) to say which parent to go back to.
        Raises DirtyBranch, NoChanges (nothing to undo, unless allow_empty) and MergeConflicts."""
        repo = self.repository_for_write(repo_id, force)
        self.guard.refuse_commit(repo, branch_id)
        target = self._commit_of(repo.id, ref)
        if parent_number < 0:
            raise errors.Invalid("parent_number must not be negative")
        if len(target.parents) > 1 and parent_number == 0:
            raise errors.Invalid(f"must specify 1-based parent number for reverting merge commit: {ref} (parent_number)")
        parent = self._parent_metarange(repo.id, target, max(parent_number, 1), ref)

        def build(branch: Branch) -> Commit:
            self.refuse_dirty(repo, branch, branch.sealed_tokens)
            head = self.refs.get_commit(repo.id, branch.commit_id)
            metarange = self._merged(
                repo, target.meta_range_id, parent, head.meta_range_id, _no_resolution, f"revert of {ref}"
            )
            if metarange == head.meta_range_id and not allow_empty:
                raise errors.NoChanges(f"reverting {ref} changes nothing on branch {branch_id}")
            return self._make_commit(
                committer, message or f"Revert {ref}", metarange, self._clock(), dict(metadata or {}),
                (head.id,), head.generation + 1,
            )

        self.prepare_move(repo, BranchID(branch_id))
        return move_to_commit(self.refs, self.staging, repo.id, BranchID(branch_id), build, "revert", self._sleep)

    def cherry_pick(
        self,
        repo_id: str,
        branch_id: str,
        ref: str,
        committer: str,
        parent_number: int | None = None,
        message: str | None = None,
        metadata: dict[str, str] | None = None,
        force: bool = False,
    ) -> Commit:
        """A new commit on the branch with the changes ``ref`` made relative to its parent (``parent_number``,
        1-based, required for a merge commit). It keeps the picked commit's message and metadata, plus
        cherry-pick-origin and cherry-pick-committer. Raises DirtyBranch and MergeConflicts."""
        repo = self.repository_for_write(repo_id, force)
        self.guard.refuse_commit(repo, branch_id)
        target = self._commit_of(repo.id, ref)
        if parent_number is None and len(target.parents) > 1:
            raise errors.Invalid(f"must specify 1-based parent number for cherry-picking merge commit: {ref} (parent_number)")
        number = 1 if parent_number is None else parent_number
        if number < 1 or number > len(target.parents):
            raise errors.Invalid(f"given commit does not have the given parent number: {ref} has no parent {number}")
        parent = self._parent_metarange(repo.id, target, number, ref)
        recorded = {
            **target.metadata,
            **(metadata or {}),
            "cherry-pick-origin": target.id,
            "cherry-pick-committer": target.committer,
        }

        def build(branch: Branch) -> Commit:
            self.refuse_dirty(repo, branch, branch.sealed_tokens)
            head = self.refs.get_commit(repo.id, branch.commit_id)
            metarange = self._merged(
                repo, parent, target.meta_range_id, head.meta_range_id, _no_resolution, f"cherry-pick of {ref}"
            )
            return self._make_commit(
                committer, message or target.message, metarange, self._clock(), recorded,
                (head.id,), head.generation + 1,
            )

        self.prepare_move(repo, BranchID(branch_id))
        return move_to_commit(
            self.refs, self.staging, repo.id, BranchID(branch_id), build, "cherry-pick", self._sleep
        )

    def reset_branch(
        self, repo_id: str, branch_id: str, path_type: str = RESET_ALL, path: str | None = None, force: bool = False
    ) -> None:
        """Drops uncommitted changes: all of them (``reset``), one object (``object``) or every key under a
        prefix (``common_prefix``). Dropping a change that does not exist is a no-op."""
        repo = self.repository_for_write(repo_id, force)
        self.guard.refuse_write(repo, branch_id)
        bid = BranchID(branch_id)
        if path_type == RESET_ALL:
            old, _ = update_branch(
                self.refs, repo.id, bid,
                lambda b: Branch(b.id, b.commit_id, new_staging_token(repo.id, b.id), (), retire(b, branch_tokens(b))),
                f"branch {bid} kept moving during the reset", self._sleep,
            )
            drop_tokens(self.staging, branch_tokens(old))
            return
        if path_type not in (RESET_OBJECT, RESET_PREFIX):
            raise errors.Invalid(f"reset type must be {RESET_ALL}, {RESET_OBJECT} or {RESET_PREFIX}")
        if path is None or (path_type == RESET_OBJECT and not path):
            raise errors.Invalid(f"reset of type {path_type} needs a path")
        branch = self.refs.get_branch(repo.id, bid)
        head = self.refs.get_commit(repo.id, branch.commit_id)

        def committed(key: Key) -> Entry | None:
            return self.committed.get(repo.storage_namespace, head.meta_range_id, key)

        if path_type == RESET_OBJECT:
            validate_path(path)
            reset_key(self.staging, branch, Key(path), committed)
        else:
            reset_prefix(self.staging, branch, path, committed)

    def hard_reset(self, repo_id: str, branch_id: str, ref: str, force: bool = False) -> Branch:
        """Points the branch at ``ref``'s commit. Raises DirtyBranch when it has uncommitted changes."""
        repo = self.repository_for_write(repo_id, force)
        self.guard.refuse_commit(repo, branch_id)

        def change(branch: Branch) -> Branch:
            self.refuse_dirty(repo, branch, branch.sealed_tokens)
            # Resolved on every try: "main~1" must mean the parent of the head that is actually replaced.
            target = self.resolve(repo.id, ref).commit_id
            return Branch(branch.id, target, branch.staging_token, (), retire(branch, branch.sealed_tokens))

        bid = BranchID(branch_id)
        self.prepare_move(repo, bid)
        old, moved = update_branch(
            self.refs, repo.id, bid, change, f"branch {bid} kept moving during the hard reset", self._sleep
        )
        drop_tokens(self.staging, old.sealed_tokens)
        return moved

    # ---- internals ------------------------------------------------------------------------------------------

    def repository_for_write(self, repo_id: str, force: bool) -> Repository:
        """The repository; read-only ones only with ``force`` (lakeFS's force flag on branch operations)."""
        return move_checks.repository_for_write(self.refs, repo_id, force)

    def _commit_of(self, repo_id: RepositoryID, ref: str) -> Commit:
        return self.refs.get_commit(repo_id, self.resolve(repo_id, ref).commit_id)

    def refuse_dirty(self, repo: Repository, branch: Branch, tokens: Sequence[StagingToken]) -> None:
        move_checks.refuse_dirty(self.refs, self.staging, self.committed, repo, branch, tokens)

    def prepare_move(self, repo: Repository, branch_id: BranchID) -> None:
        move_checks.prepare_move(self.refs, self.staging, self.committed, repo, branch_id, self._sleep)

    def _parent_metarange(self, repo_id: RepositoryID, commit: Commit, number: int, ref: str) -> MetaRangeID:
        """The metarange of the commit's parent ``number`` (1-based); empty for a commit with no parent."""
        if not commit.parents:
            return EMPTY_METARANGE
        if number > len(commit.parents):
            raise errors.Invalid(f"given commit does not have the given parent number: {ref} has no parent {number}")
        return self.refs.get_commit(repo_id, commit.parents[number - 1]).meta_range_id

    def _merged(
        self,
        repo: Repository,
        base: MetaRangeID,
        source: MetaRangeID,
        dest: MetaRangeID,
        resolve: Resolver,
        what: str,
    ) -> MetaRangeID:
        """The merged metarange. Raises MergeConflicts when a conflict is left unresolved."""
        outcome = compare.merge(self.committed, repo.storage_namespace, base, source, dest, resolve)
        if outcome.metarange_id is None:
            unresolved = sum(1 for c in outcome.conflicts if c.resolution is None)
            raise MergeConflicts(f"conflict found: {unresolved} conflicting path(s) in the {what}", outcome.conflicts)
        return outcome.metarange_id

    def _writable_repository(self, repo_id: str) -> Repository:
        return move_checks.repository_for_write(self.refs, repo_id)

    def _exists(self, repo: Repository, branch_id: str, path: str) -> bool:
        try:
            self.stat_object(repo.id, branch_id, path)
            return True
        except errors.ObjectNotFound:
            return False

    def _make_commit(
        self,
        committer: str,
        message: str,
        meta_range_id: MetaRangeID,
        creation_date: float,
        metadata: dict[str, str],
        parents: tuple[CommitID, ...],
        generation: int,
    ) -> Commit:
        cid = commit_id(committer, message, meta_range_id, creation_date, metadata, parents)
        return Commit(cid, committer, message, creation_date, meta_range_id, metadata, parents, generation)

    def _entries_view(
        self, repo: Repository, resolved: ResolvedRef, first_page: int | None = None
    ) -> Callable[[str], Iterator[EntryRecord]]:
        head = self.refs.get_commit(repo.id, resolved.commit_id)
        ns, metarange = repo.storage_namespace, head.meta_range_id
        if resolved.kind is RefKind.BRANCH and resolved.include_staging and resolved.branch is not None:
            tokens = branch_tokens(resolved.branch)
            return lambda start: overlay(
                staged_changes(self.staging, tokens, start, first_page), self.committed.iterate(ns, metarange, start)
            )
        return lambda start: self.committed.iterate(ns, metarange, start)

    @staticmethod
    def _page_by_id(
        fetch: Callable[[str, int], list],  # type: ignore[type-arg]
        prefix: str,
        after: str,
        amount: int | None,
        keep: Callable[[Any], bool] | None = None,
    ) -> Page:  # type: ignore[type-arg]
        """A page of records with ``id`` from a store listing ids > after, filtered by prefix and by ``keep``."""
        limit = clamp_amount(amount)
        # ids > prefix[:-1] include every id that starts with prefix (and a few before it, skipped below).
        start = prefix[:-1] if prefix and prefix > after else after
        items: list = []  # type: ignore[type-arg]
        while len(items) <= limit:
            batch = fetch(start, limit + 1)
            for item in batch:
                if item.id.startswith(prefix):
                    if keep is None or keep(item):
                        items.append(item)
                elif item.id > prefix:
                    batch = []
                    break
            if len(batch) <= limit:
                break
            start = batch[-1].id
        has_more = len(items) > limit
        items = items[:limit]
        return Page(items, has_more, items[-1].id if has_more else "")



def _no_resolution(key: str, source: Action, destination: Action) -> Decision | None:
    """Revert and cherry-pick take no strategy: every conflict fails them."""
    return None
