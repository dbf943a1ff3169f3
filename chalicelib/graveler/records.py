"""The records graveler stores and returns: frozen, slotted, and typed by identifier."""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import NewType

__all__ = [
    "ABSENT",
    "Absent",
    "Branch",
    "BranchID",
    "BranchKey",
    "Commit",
    "CommitID",
    "Diff",
    "DiffType",
    "Entry",
    "Key",
    "ListedObject",
    "MetaRangeID",
    "Page",
    "ProtectionRules",
    "PullRequest",
    "PullRequestStatus",
    "Repository",
    "RepositoryID",
    "RepositoryState",
    "StagedEntry",
    "StagedExpectation",
    "StagingSample",
    "StagingToken",
    "Tag",
    "TagID",
]

RepositoryID = NewType("RepositoryID", str)
BranchID = NewType("BranchID", str)
TagID = NewType("TagID", str)
CommitID = NewType("CommitID", str)
StagingToken = NewType("StagingToken", str)
MetaRangeID = NewType("MetaRangeID", str)
RangeID = NewType("RangeID", str)
Key = NewType("Key", str)

# The metarange of a commit with no objects; never written to storage, every reader knows it.
EMPTY_METARANGE = MetaRangeID("")


class RepositoryState(enum.StrEnum):
    ACTIVE = "active"
    IN_DELETION = "in_deletion"


@dataclass(frozen=True, slots=True)
class Repository:
    id: RepositoryID
    storage_namespace: str
    default_branch_id: BranchID
    creation_date: int
    state: RepositoryState = RepositoryState.ACTIVE
    read_only: bool = False
    # Random per creation ("" for repositories created before it existed): a repository deleted and created again
    # under the same id is another generation, and a branch creation begun against the old one must not land in
    # the new one (RefStore.create_branch checks it in the same write).
    generation: str = ""
    # How its ranges are cut (committed/params.py), fixed at creation so that its ids never change: 1 for
    # repositories created before formats existed (their records lack it), the current format for new ones.
    range_format: int = 1


@dataclass(frozen=True, slots=True)
class Branch:
    id: BranchID
    commit_id: CommitID
    staging_token: StagingToken
    sealed_tokens: tuple[StagingToken, ...] = ()
    # Tokens a move of the branch released (committed, merged, reset) that may still hold staged rows: recorded in
    # the same compare-and-swap as the move, so a drop that fails after the move is retried by the next seal
    # instead of failing a commit that landed. Never read as staged data.
    retired_tokens: tuple[StagingToken, ...] = ()
    # Left out of branch listings unless asked for (lakeFS's hidden branches: the client's transactions). Set
    # when the branch is created and kept by every move (RefStore.set_branch).
    hidden: bool = False


@dataclass(frozen=True, slots=True)
class Tag:
    id: TagID
    commit_id: CommitID


@dataclass(frozen=True, slots=True)
class Commit:
    id: CommitID
    committer: str
    message: str
    # Unix seconds with the sub-second part: the log orders by it as lakeFS does (its commits keep nanoseconds),
    # while the commit ID hashes and the API shows whole seconds.
    creation_date: float
    meta_range_id: MetaRangeID
    metadata: dict[str, str] = field(default_factory=dict)
    parents: tuple[CommitID, ...] = ()
    generation: int = 1


@dataclass(frozen=True, slots=True)
class Entry:
    """What a path points to: one physical object and its metadata. Immutable once written."""

    physical_address: str
    size: int
    etag: str
    mtime: int
    content_type: str = "application/octet-stream"
    user_metadata: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class StagedEntry:
    """A staged change of one key. value None is a tombstone: it hides the committed key."""

    key: Key
    value: Entry | None


class Absent(enum.Enum):
    """What a create-only write (If-None-Match: *) expects of the key's row in the token it writes to: no row, or a
    tombstone (StagingStore.set_if)."""

    ABSENT = "absent"


ABSENT = Absent.ABSENT
# What a conditional staged write expects of the key's row in its token: that exact row (its identity fields, any
# tombstone for a tombstone), None for no row, ABSENT for no row or a tombstone.
type StagedExpectation = StagedEntry | Absent | None


@dataclass(frozen=True, slots=True)
class BranchKey:
    """A branch by its repository and id: the one whose staging token a guarded staged write must still be written
    to (StagingStore.set_if)."""

    repo_id: RepositoryID
    branch_id: BranchID


@dataclass(frozen=True, slots=True)
class StagingSample:
    """A bounded sample of a staging token's keys (sorted) and the number of rows it suggests the token holds
    (graveler/writes/staging_shards.py): what a commit plans slices from and a seal sizes the next token by."""

    keys: tuple[Key, ...]
    estimated_rows: int


@dataclass(frozen=True, slots=True)
class EntryRecord:
    """A key with its entry, as read from a ref (committed or staged)."""

    key: Key
    entry: Entry


@dataclass(frozen=True, slots=True)
class RangeInfo:
    """One line of a metarange: a range of sorted keys stored as one object under _lakefs/."""

    id: RangeID
    min_key: Key
    max_key: Key
    count: int
    estimated_size: int


class RefKind(enum.StrEnum):
    COMMIT = "commit"
    BRANCH = "branch"
    TAG = "tag"


@dataclass(frozen=True, slots=True)
class ResolvedRef:
    """A ref expression resolved to a commit, and for a branch its staging view."""

    kind: RefKind
    commit_id: CommitID
    branch: Branch | None = None
    # True when reads must include the branch's staged changes (plain branch name or `branch$`).
    include_staging: bool = False


class DiffType(enum.StrEnum):
    ADDED = "added"
    REMOVED = "removed"
    CHANGED = "changed"
    CONFLICT = "conflict"
    PREFIX_CHANGED = "prefix_changed"


@dataclass(frozen=True, slots=True)
class Diff:
    key: Key
    type: DiffType
    entry: Entry | None  # the new value (None for removed)


@dataclass(frozen=True, slots=True)
class Page[T]:
    """One page of a listing. next_offset is the last id/key returned, empty when there is no more. An object
    listing's results are columns read as a sequence (listing.ListedRows), every other listing's a list."""

    results: Sequence[T]
    has_more: bool
    next_offset: str = ""


@dataclass(frozen=True, slots=True)
class ListedObject:
    """One row of an object listing: an entry, or (entry None) a common prefix ending with the delimiter."""

    key: Key
    entry: Entry | None


@dataclass(frozen=True, slots=True)
class ProtectionRules:
    """Branch protection (protection.py): the patterns of a repository, in the order they were set, and their
    ETag ("" when never set)."""

    patterns: tuple[str, ...]
    etag: str


# A pull request's record (pull_requests.py holds its use case): here, so that the store port can name it.
class PullRequestStatus(enum.StrEnum):
    OPEN = "open"
    CLOSED = "closed"
    MERGED = "merged"


@dataclass(frozen=True, slots=True)
class PullRequest:
    id: str
    title: str
    description: str
    author: str
    source_branch: str
    destination_branch: str
    status: PullRequestStatus
    creation_date: float
    closed_date: float | None = None
    merged_commit_id: str | None = None
    # The merge workflow's task while a merge that outlived its wait goes on (not part of lakeFS's shape).
    merge_task_id: str | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "id": self.id,
            "title": self.title,
            "description": self.description,
            "author": self.author,
            "source_branch": self.source_branch,
            "destination_branch": self.destination_branch,
            "status": self.status.value,
            "creation_date": self.creation_date,
            "closed_date": self.closed_date,
            "merged_commit_id": self.merged_commit_id,
            "merge_task_id": self.merge_task_id,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> PullRequest:
        closed, merged, task = data.get("closed_date"), data.get("merged_commit_id"), data.get("merge_task_id")
        return cls(
            str(data["id"]),
            str(data["title"]),
            str(data["description"]),
            str(data["author"]),
            str(data["source_branch"]),
            str(data["destination_branch"]),
            PullRequestStatus(str(data["status"])),
            float(str(data["creation_date"])),
            None if closed is None else float(str(closed)),
            None if merged is None else str(merged),
            None if task is None else str(task),
        )
