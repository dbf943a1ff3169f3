"""Objects: stat, read, presign, list (staging overlaid on the committed tree; the action files on a ref are
action_files.py's), and every staged write: upload,
batch upload, link (data written elsewhere: presigned and multipart uploads), copy, user metadata, delete."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from .. import errors
from ..branches.protection import BranchProtection, NoProtection
from ..committed import CommittedManager
from ..ports import BlockStore, RefStore, StagingStore
from ..reads.collected import CollectedCheck
from ..reads.listing import StagedView, clamp_amount, paginate_objects
from ..reads.shared import RepositoryForWrite
from ..records import (
    Branch,
    BranchID,
    Commit,
    CommitID,
    Entry,
    Key,
    ListedObject,
    Page,
    RefKind,
    Repository,
    ResolvedRef,
    StagedEntry,
    StagedExpectation,
)
from ..storage.caches import TTLCache
from ..validation import (
    validate_path,
)
from ..writes.addressing import new_data_address
from ..writes.batch_upload import NewObject, check_batch, write_objects
from ..writes.conditional_writes import expect_on, stage_conditionally
from ..writes.linking import check_claim
from ..writes.object_fields import validate_entry, validate_headers, validate_user_metadata
from ..writes.preconditions import CREATE_ONLY, Precondition
from ..writes.staging import branch_tokens, read_staged, stage, stage_many, staged_changes

__all__ = ["MAX_DELETE_PATHS", "ObjectParts", "Objects", "read_data"]

MAX_DELETE_PATHS = 1000


def read_data(
    blocks: BlockStore, repo_id: str, entry: Entry, start: int | None = None, end: int | None = None
) -> bytes:
    """The entry's bytes, or [start, end] inclusive; Gone (410) when garbage collection deleted them."""
    try:
        return blocks.get(entry.physical_address, start, end)
    except errors.ObjectNotFound as e:
        raise errors.Gone(f"the data of this object was garbage collected ({repo_id})") from e


@dataclass(frozen=True, slots=True)
class ObjectParts:
    """What the object use cases use: the stores, the clock, the branch guard, GC's collected check, the
    branches uploads went to lately, and three of the shared reads."""

    refs: RefStore
    staging: StagingStore
    blocks: BlockStore
    committed: CommittedManager
    clock: Callable[[], float]
    guard: BranchProtection | NoProtection
    collected: CollectedCheck
    upload_branches: TTLCache[tuple[str, str], Branch]
    get_repository: Callable[[str], Repository]
    resolve: Callable[[str, str], ResolvedRef]
    repository_for_write: RepositoryForWrite


class Objects:
    """The object use cases."""

    def __init__(self, parts: ObjectParts) -> None:
        self._parts = parts

    def stat_object(self, repo_id: str, ref: str, path: str) -> Entry:
        validate_path(path)
        return self._stat(self._parts.get_repository(repo_id), ref, path)

    def storage_class(self, repo_id: str, ref: str, path: str) -> str:
        """The storage class of the object's data in the store (lakeFS's getUnderlyingProperties). Raises
        ObjectNotFound, also for an object whose data garbage collection deleted."""
        return self._parts.blocks.storage_class(self.stat_object(repo_id, ref, path).physical_address)

    def stat_readable(self, repo_id: str, ref: str, path: str) -> tuple[Entry, bool]:
        """The entry, and whether garbage collection deleted its data (collected.py: an S3 HEAD only for the
        addresses old enough to have been collected). For the reads that hand out a URL or headers only."""
        validate_path(path)
        repo = self._parts.get_repository(repo_id)
        entry = self._stat(repo, ref, path)
        return entry, self._parts.collected.is_collected(repo.storage_namespace, entry.physical_address)

    def _stat(self, repo: Repository, ref: str, path: str) -> Entry:
        resolved = self._parts.resolve(repo.id, ref)
        if resolved.include_staging and resolved.branch is not None:
            staged = read_staged(self._parts.staging, resolved.branch, Key(path))
            if staged is not None:
                if staged.value is None:
                    raise errors.ObjectNotFound(f"object {path} not found")
                return staged.value
        head = self._parts.refs.get_commit(repo.id, resolved.commit_id)
        entry = self._parts.committed.get(repo.storage_namespace, head.meta_range_id, Key(path))
        if entry is None:
            raise errors.ObjectNotFound(f"object {path} not found")
        return entry

    def read_object(self, repo_id: str, entry: Entry, start: int | None = None, end: int | None = None) -> bytes:
        return read_data(self._parts.blocks, repo_id, entry, start, end)

    def presign_object(self, repo_id: str, entry: Entry, expires_seconds: int) -> str:
        return self._parts.blocks.presign_get(entry.physical_address, expires_seconds)

    def list_objects(
        self,
        repo_id: str,
        ref: str,
        prefix: str = "",
        delimiter: str = "",
        after: str = "",
        amount: int | None = 100,
    ) -> Page[ListedObject]:
        """The page's results are :class:`ListedRows`: columns copied out of the cached ranges, each row read as a
        ListedObject on access."""
        repo = self._parts.get_repository(repo_id)
        resolved = self._parts.resolve(repo.id, ref)
        head = self._parts.refs.get_commit(repo.id, resolved.commit_id)
        ns, metarange = repo.storage_namespace, head.meta_range_id
        staged: StagedView | None = None
        if resolved.kind is RefKind.BRANCH and resolved.include_staging and resolved.branch is not None:
            tokens, first_page = branch_tokens(resolved.branch), clamp_amount(amount) + 1

            def staged(start: str) -> Iterator[StagedEntry]:
                return staged_changes(self._parts.staging, tokens, start, first_page)

        return paginate_objects(
            lambda start: self._parts.committed.blocks(ns, metarange, start), staged, prefix, delimiter, after, amount
        )

    def upload_object(
        self,
        repo_id: str,
        branch_id: str,
        path: str,
        data: bytes,
        content_type: str = "application/octet-stream",
        user_metadata: dict[str, str] | None = None,
        if_absent: bool = False,
        force: bool = False,
        if_match: str | None = None,
    ) -> Entry:
        """Writes the bytes to a new address and stages them at ``path``. ``force`` writes into a read-only
        repository (lakeFS's force). ``if_match`` (an If-Match value): replace only the object the branch shows
        with that ETag (``*``: any object), checked and staged as one write (preconditions.py); raises
        PreconditionFailed otherwise, also to all but one of concurrent uploads that read the same object; and
        ``if_absent`` (If-None-Match: *) likewise, of concurrent uploads that all found the path empty."""
        validate_path(path)
        content_type = content_type or "application/octet-stream"
        validate_headers(content_type, user_metadata or {})
        if if_absent and if_match is not None:
            raise errors.Invalid("If-Match and If-None-Match cannot be given together")
        repo = self._parts.repository_for_write(repo_id, force)
        precondition = Precondition(if_match, if_absent) if if_absent or if_match is not None else None
        # A plain upload writes to the token of the branch's record as an upload of the last UPLOAD_BRANCH_TTL_SECONDS
        # read it (staging.stage's re-check catches a seal since); a conditional one judges the record as it is.
        recent = self._parts.upload_branches.fresh((repo.id, branch_id)) if precondition is None else None
        branch = recent if recent is not None else self._parts.refs.get_branch(repo.id, BranchID(branch_id))
        self._parts.guard.refuse_write(repo, branch_id)
        first = None
        if precondition is not None:
            # Checked before any byte is written (a refused upload writes nothing), and again in the write.
            first = expect_on(self._parts, repo, [(Key(path), precondition)])(branch)
        now = self._parts.clock()
        address = new_data_address(repo.storage_namespace, now)
        written = self._parts.blocks.put(address, data)
        entry = Entry(
            physical_address=address,
            size=written.size,
            etag=written.etag,
            mtime=int(now),
            content_type=content_type,
            user_metadata=dict(user_metadata or {}),
        )
        validate_entry(entry)
        if precondition is None:
            try:
                staged_on = stage(
                    self._parts.refs,
                    self._parts.staging,
                    repo.id,
                    BranchID(branch_id),
                    StagedEntry(Key(path), entry),
                    branch,
                )
            except errors.BranchNotFound:
                self._parts.upload_branches.drop((repo.id, branch_id))
                raise
            self._parts.upload_branches.put((repo.id, branch_id), staged_on)
            return entry
        try:
            stage_conditionally(self._parts, repo, branch, [StagedEntry(Key(path), entry)], [precondition], first)
        except errors.PreconditionFailed:
            # Best effort: bytes left behind are an unreferenced object under data/, which GC collects.
            with contextlib.suppress(errors.GravelerError):
                self._parts.blocks.delete(address)
            raise
        return entry

    def upload_objects(self, repo_id: str, branch_id: str, objects: Sequence[NewObject]) -> list[Entry]:
        """Writes and stages several new objects at once (Lakelet's batch upload, batch_upload.py); returns
        their entries in the order given. A bad object stages nothing."""
        check_batch(objects)
        repo = self._parts.repository_for_write(repo_id)
        branch = self._parts.refs.get_branch(repo.id, BranchID(branch_id))
        self._parts.guard.refuse_write(repo, branch_id)
        entries = write_objects(self._parts.blocks, repo.storage_namespace, objects, self._parts.clock())
        changes = [StagedEntry(Key(obj.path), entry) for obj, entry in zip(objects, entries, strict=True)]
        stage_many(self._parts.refs, self._parts.staging, repo.id, BranchID(branch_id), changes, branch)
        return entries

    def check_upload_branch(self, repo_id: str, branch_id: str) -> None:
        """Raises BranchNotFound unless the branch exists, before an upload address is handed out for it.

        A branch found here is not read again for UPLOAD_BRANCH_TTL_SECONDS (a client uploading many files asks
        for an address per file); a missing one is never remembered. This is a courtesy that spares uploading to
        a mistyped branch: the link reads the branch itself, so a branch deleted meanwhile (in another container:
        this one forgets it at once) still refuses the link with 404."""
        repo = self._parts.get_repository(repo_id)
        self._parts.upload_branches.lookup(
            (repo.id, branch_id), lambda: self._parts.refs.get_branch(repo.id, BranchID(branch_id))
        )

    def new_physical_address(self, repo_id: str) -> str:
        """A fresh, never used address under the repository's data/ for data written outside upload_object
        (presigned uploads, multipart uploads)."""
        repo = self._parts.repository_for_write(repo_id)
        return new_data_address(repo.storage_namespace, self._parts.clock())

    def link_object(self, repo_id: str, branch_id: str, path: str, entry: Entry, if_absent: bool = False) -> Entry:
        """Stages an entry whose data is already stored. The caller vouches that the address is the repository's
        own (issued by new_physical_address, or copied from an entry of the same repository)."""
        validate_path(path)
        validate_entry(entry)
        repo = self._parts.repository_for_write(repo_id)
        if not entry.physical_address.startswith(repo.storage_namespace + "/"):
            raise errors.Invalid("the physical address is outside the repository's storage namespace")
        branch = self._parts.refs.get_branch(repo.id, BranchID(branch_id))
        self._parts.guard.refuse_write(repo, branch_id)
        self._stage_one(repo, branch, StagedEntry(Key(path), entry), if_absent)
        return entry

    def link_upload(
        self,
        repo_id: str,
        branch_id: str,
        path: str,
        upload_address: str,
        claim: Entry,
        if_absent: bool = False,
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
        repo = self._parts.repository_for_write(repo_id)
        self._parts.guard.refuse_write(repo, branch_id)
        if not upload_address.startswith(repo.storage_namespace + "/data/"):
            raise errors.Invalid("the physical address is outside the repository's storage namespace")
        branch = self._parts.refs.get_branch(repo.id, BranchID(branch_id))
        # Checked before anything is copied (a refused link copies nothing), and again in the write.
        first = expect_on(self._parts, repo, [(Key(path), CREATE_ONLY)])(branch) if if_absent else None
        if write_once:
            try:
                check_claim(self._parts.blocks.stat(upload_address), claim)
            except errors.ObjectNotFound:
                raise errors.Invalid("nothing was uploaded to the physical address") from None
            entry = dataclasses.replace(claim, physical_address=upload_address)
            self._stage_one(repo, branch, StagedEntry(Key(path), entry), if_absent, first)
            return entry
        address = new_data_address(repo.storage_namespace, self._parts.clock())
        try:
            copied = self._parts.blocks.copy(upload_address, address)
        except errors.ObjectNotFound:
            raise errors.Invalid("nothing was uploaded to the physical address") from None
        try:
            # The copy's own size and ETag (BlockStore.copy): what a commit will read, whatever the URL writes next.
            check_claim(copied, claim)
            entry = dataclasses.replace(claim, physical_address=address)
            self._stage_one(repo, branch, StagedEntry(Key(path), entry), if_absent, first)
        except BaseException:
            self._parts.blocks.delete(address)
            raise
        # Best effort: an upload left behind is an unreferenced object under data/, which GC collects.
        with contextlib.suppress(errors.GravelerError):
            self._parts.blocks.delete(upload_address)
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
            mtime=int(self._parts.clock()),
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
        repo = self._parts.repository_for_write(repo_id)
        self._parts.guard.refuse_write(repo, branch_id)
        branch = self._parts.refs.get_branch(repo.id, BranchID(branch_id))
        entry = self.stat_object(repo.id, branch_id, path)
        updated = dataclasses.replace(entry, user_metadata=dict(metadata))
        stage(
            self._parts.refs, self._parts.staging, repo.id, BranchID(branch_id), StagedEntry(Key(path), updated), branch
        )
        return updated

    def delete_object(self, repo_id: str, branch_id: str, path: str, force: bool = False) -> None:
        """Hides the path on the branch. A path that exists nowhere is a no-op. ``force``: also in a read-only
        repository."""
        validate_path(path)
        repo = self._parts.repository_for_write(repo_id, force)
        self._parts.guard.refuse_write(repo, branch_id)
        self._delete_path(repo, BranchID(branch_id), path, {})

    def delete_objects(self, repo_id: str, branch_id: str, paths: list[str]) -> list[tuple[str, errors.GravelerError]]:
        if len(paths) > MAX_DELETE_PATHS:
            raise errors.Invalid(f"at most {MAX_DELETE_PATHS} paths per request")
        repo = self._parts.repository_for_write(repo_id)
        try:
            self._parts.guard.refuse_write(repo, branch_id)
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
        branch = self._parts.refs.get_branch(repo.id, branch_id)
        staged = read_staged(self._parts.staging, branch, Key(path))
        if staged is None or staged.value is None:
            if staged is not None:
                return
            head = heads.get(branch.commit_id)
            if head is None:
                head = heads[branch.commit_id] = self._parts.refs.get_commit(repo.id, branch.commit_id)
            if self._parts.committed.get(repo.storage_namespace, head.meta_range_id, Key(path)) is None:
                return
        # A tombstone, even for a key that is only staged: it also hides a copy in a token a commit just sealed.
        stage(self._parts.refs, self._parts.staging, repo.id, branch.id, StagedEntry(Key(path), None), branch)

    def _stage_one(
        self,
        repo: Repository,
        branch: Branch,
        staged: StagedEntry,
        if_absent: bool,
        first: Sequence[StagedExpectation] | None = None,
    ) -> None:
        """Stages one change; ``if_absent`` (If-None-Match: *): only where the branch shows no object, as one
        conditional write (conditional_writes.py), else PreconditionFailed."""
        if if_absent:
            stage_conditionally(self._parts, repo, branch, [staged], [CREATE_ONLY], first)
        else:
            stage(self._parts.refs, self._parts.staging, repo.id, branch.id, staged, branch)
