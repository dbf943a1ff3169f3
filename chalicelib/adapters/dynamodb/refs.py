"""RefStore on DynamoDB: repositories, branches, tags and commits, one table each.

Creations are conditional puts (attribute_not_exists on the hash key, which for a table with a range key
means "no item with this full key"). A branch move is a put conditioned on the stored fields equalling the
expected ones, so of two writers racing on one branch exactly one wins. No transactions: moto slows them
down badly on big tables, and every multi-item change here can be repeated safely instead.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterator, Sequence

from pynamodb.expressions.condition import Condition
from pynamodb.transactions import TransactWrite

from chalicelib.graveler import errors
from chalicelib.graveler.records import (
    Branch,
    BranchID,
    Commit,
    CommitID,
    MetaRangeID,
    Repository,
    RepositoryID,
    RepositoryState,
    StagingToken,
    Tag,
    TagID,
)

from .models import (
    RETIRED_SEPARATOR,
    BranchRow,
    CommitRow,
    RepositoryRow,
    TagRow,
    key_attribute_names,
    model_set,
)
from .tables import TableNames
from .translate import storage_errors, translated

# DynamoDB caps a query page at 1 MB anyway; this bounds what one page holds in memory.
_PAGE_SIZE = 1000


class DynamoRefStore:
    """The RefStore port on the repositories, branches, tags and commits tables."""

    def __init__(self, names: TableNames, region: str, endpoint_url: str | None = None) -> None:
        models = model_set(names, region, endpoint_url)
        self._repositories = models.repositories
        self._branches = models.branches
        self._tags = models.tags
        self._commits = models.commits
        # The connection the models of the set share (models.py): a transaction spans two of their tables.
        self._connection = models.repositories._get_connection().connection

    # repositories

    def get_repository(self, repo_id: RepositoryID) -> Repository:
        with storage_errors(on_missing=lambda: errors.RepositoryNotFound(repo_id)):
            row = self._repositories.get(repo_id, consistent_read=True)
        return _repository(row)

    def create_repository(self, repo: Repository) -> None:
        row = self._repositories(
            repository_id=repo.id,
            storage_namespace=repo.storage_namespace,
            default_branch_id=repo.default_branch_id,
            creation_date=repo.creation_date,
            state=repo.state.value,
            read_only=repo.read_only,
            generation=repo.generation or None,
            range_format=repo.range_format,
        )
        with storage_errors(on_condition_failed=lambda: errors.RepositoryExists(repo.id)):
            row.save(condition=self._repositories.repository_id.does_not_exist())

    def list_repositories(self, after: str = "", limit: int = 1000) -> list[Repository]:
        # The table is hashed on the id, so no query returns ids in order: scan and keep the `limit`
        # smallest. Fine for the tens to thousands of repositories a deployment holds.
        condition = self._repositories.repository_id > after if after else None
        with storage_errors():
            rows = self._repositories.scan(filter_condition=condition, consistent_read=True, page_size=_PAGE_SIZE)
        smallest = heapq.nsmallest(limit, translated(rows), key=lambda row: str(row.repository_id))
        return [_repository(row) for row in smallest]

    def delete_repository(self, repo_id: RepositoryID) -> None:
        # As lakeFS does: mark the repository in deletion, remove what it owns, then the record itself.
        # If this is interrupted, the record (in_deletion) is still there and a retry finishes the job;
        # deleting the record first would strand branches that a re-created repository would inherit.
        with storage_errors(on_condition_failed=lambda: errors.RepositoryNotFound(repo_id)):
            self._repositories(repository_id=repo_id).update(
                actions=[self._repositories.state.set(RepositoryState.IN_DELETION.value)],
                condition=self._repositories.repository_id.exists(),
            )
        self._delete_partition(self._branches, repo_id)
        self._delete_partition(self._tags, repo_id)
        self._delete_partition(self._commits, repo_id)
        with storage_errors(on_condition_failed=lambda: errors.RepositoryNotFound(repo_id)):
            self._repositories(repository_id=repo_id).delete(condition=self._repositories.repository_id.exists())

    def _delete_partition(self, model: type[BranchRow | TagRow | CommitRow], repo_id: str) -> None:
        keys = key_attribute_names(model)
        with storage_errors():
            rows = model.query(repo_id, attributes_to_get=keys, consistent_read=True, page_size=_PAGE_SIZE)
            with model.batch_write() as batch:
                for row in translated(rows):
                    batch.delete(row)

    # branches

    def get_branch(self, repo_id: RepositoryID, branch_id: BranchID) -> Branch:
        with storage_errors(on_missing=lambda: errors.BranchNotFound(branch_id)):
            row = self._branches.get(repo_id, branch_id, consistent_read=True)
        return _branch(row)

    def create_branch(self, repo_id: RepositoryID, branch: Branch, generation: str | None = None) -> None:
        self._create_in_generation(
            repo_id,
            self._branch_row(repo_id, branch, branch.hidden),
            self._branches.repository_id.does_not_exist(),
            generation,
            lambda: errors.BranchExists(branch.id),
        )

    def _create_in_generation(
        self,
        repo_id: str,
        row: BranchRow | TagRow,
        absent: Condition,
        generation: str | None,
        exists: Callable[[], errors.GravelerError],
    ) -> None:
        """Saves ``row`` if absent (else ``exists()``); with ``generation``, only while the repository record is
        active with that generation (else RepositoryNotFound)."""
        if generation is None:
            with storage_errors(on_condition_failed=exists):
                row.save(condition=absent)
            return
        # One transaction: the repository record must still be this generation and active (delete marks it
        # in_deletion before it removes the branches and tags), so a creation racing a delete either lands before
        # the delete's sweep or not at all, and never in a repository created again under the same id.
        repos = self._repositories
        same = repos.generation.does_not_exist() if not generation else repos.generation == generation
        try:
            with storage_errors(), TransactWrite(connection=self._connection) as transaction:
                transaction.condition_check(repos, repo_id, condition=(repos.state == "active") & same)
                transaction.save(row, condition=absent)
        except errors.StorageError as e:
            reasons = getattr(e.__cause__, "cancellation_reasons", None) or []
            codes = [reason.code if reason is not None else None for reason in reasons]
            if codes[:1] == ["ConditionalCheckFailed"]:
                raise errors.RepositoryNotFound(f"repository {repo_id} is gone or was created again") from e
            if codes[1:2] == ["ConditionalCheckFailed"]:
                raise exists() from e
            raise

    def set_branch(self, repo_id: RepositoryID, branch: Branch, expected: Branch) -> None:
        if branch.id != expected.id:
            raise errors.Conflict(f"branch {branch.id} cannot replace branch {expected.id}")
        model = self._branches
        # Every field in the condition: a writer that read an older state of the branch must lose.
        # Comparing a missing attribute is false, so a deleted branch fails the condition too.
        unchanged: Condition = (
            (model.commit_id == expected.commit_id)
            & (model.staging_token == expected.staging_token)
            & (model.sealed_tokens == list(expected.sealed_tokens))
            & _retired_unchanged(model, expected.retired_tokens)
        )
        with storage_errors(on_condition_failed=lambda: errors.Conflict(f"branch {branch.id} changed concurrently")):
            self._branch_row(repo_id, branch, expected.hidden).save(condition=unchanged)

    def delete_branch(self, repo_id: RepositoryID, branch_id: BranchID) -> None:
        with storage_errors(on_condition_failed=lambda: errors.BranchNotFound(branch_id)):
            self._branches(repository_id=repo_id, branch_id=branch_id).delete(
                condition=self._branches.repository_id.exists()
            )

    def list_branches(self, repo_id: RepositoryID, after: str = "", limit: int = 1000) -> list[Branch]:
        condition = self._branches.branch_id > after if after else None
        with storage_errors():
            rows = self._branches.query(
                repo_id, range_key_condition=condition, consistent_read=True, limit=limit, page_size=limit
            )
            return [_branch(row) for row in rows]

    def _branch_row(self, repo_id: str, branch: Branch, hidden: bool) -> BranchRow:
        return self._branches(
            repository_id=repo_id,
            branch_id=branch.id,
            commit_id=branch.commit_id,
            staging_token=branch.staging_token,
            sealed_tokens=list(branch.sealed_tokens),
            hidden=hidden,
            retired=_joined(branch.retired_tokens),
        )

    # tags

    def get_tag(self, repo_id: RepositoryID, tag_id: TagID) -> Tag:
        with storage_errors(on_missing=lambda: errors.TagNotFound(tag_id)):
            row = self._tags.get(repo_id, tag_id, consistent_read=True)
        return Tag(id=TagID(row.tag_id), commit_id=CommitID(row.commit_id))

    def create_tag(self, repo_id: RepositoryID, tag: Tag, generation: str | None = None) -> None:
        row = self._tags(repository_id=repo_id, tag_id=tag.id, commit_id=tag.commit_id)
        self._create_in_generation(
            repo_id, row, self._tags.repository_id.does_not_exist(), generation, lambda: errors.TagExists(tag.id)
        )

    def delete_tag(self, repo_id: RepositoryID, tag_id: TagID) -> None:
        with storage_errors(on_condition_failed=lambda: errors.TagNotFound(tag_id)):
            self._tags(repository_id=repo_id, tag_id=tag_id).delete(condition=self._tags.repository_id.exists())

    def list_tags(self, repo_id: RepositoryID, after: str = "", limit: int = 1000) -> list[Tag]:
        condition = self._tags.tag_id > after if after else None
        with storage_errors():
            rows = self._tags.query(
                repo_id, range_key_condition=condition, consistent_read=True, limit=limit, page_size=limit
            )
            return [Tag(id=TagID(row.tag_id), commit_id=CommitID(row.commit_id)) for row in rows]

    # commits

    def get_commit(self, repo_id: RepositoryID, commit_id: CommitID) -> Commit:
        with storage_errors(on_missing=lambda: errors.CommitNotFound(commit_id)):
            row = self._commits.get(repo_id, commit_id, consistent_read=True)
        return _commit(row)

    def add_commit(self, repo_id: RepositoryID, commit: Commit) -> None:
        row = self._commit_row(repo_id, commit)
        try:
            with storage_errors(on_condition_failed=lambda: errors.CommitExists(commit.id)):
                row.save(condition=self._commits.repository_id.does_not_exist())
        except errors.CommitExists:
            pass  # ids are content hashes: the stored commit is this very commit

    def add_commits(self, repo_id: RepositoryID, commits: Sequence[Commit]) -> None:
        # BatchWriteItem: 25 puts a request, no condition (batches take none); PynamoDB resends unprocessed items.
        # Overwriting a commit with its own id writes the same record again: ids are content hashes.
        latest = {commit.id: commit for commit in commits}  # a batch must not name one key twice
        with storage_errors(), self._commits.batch_write() as batch:
            for commit in latest.values():
                batch.save(self._commit_row(repo_id, commit))

    def _commit_row(self, repo_id: RepositoryID, commit: Commit) -> CommitRow:
        return self._commits(
            repository_id=repo_id,
            commit_id=commit.id,
            committer=commit.committer,
            message=commit.message,
            creation_date=commit.creation_date,
            meta_range_id=commit.meta_range_id,
            metadata=dict(commit.metadata),
            parents=list(commit.parents),
            generation=commit.generation,
        )

    def delete_commit(self, repo_id: RepositoryID, commit_id: CommitID) -> None:
        with storage_errors():
            self._commits(repository_id=repo_id, commit_id=commit_id).delete()

    def list_commit_ids(self, repo_id: RepositoryID, prefix: str, limit: int) -> list[CommitID]:
        # begins_with("") is rejected by DynamoDB: an empty prefix means every commit.
        condition = self._commits.commit_id.startswith(prefix) if prefix else None
        with storage_errors():
            rows = self._commits.query(
                repo_id,
                range_key_condition=condition,
                consistent_read=True,
                limit=limit,
                page_size=limit,
                attributes_to_get=[self._commits.commit_id.attr_name],
            )
            return [CommitID(row.commit_id) for row in rows]

    def iterate_commits(self, repo_id: RepositoryID, after: str = "") -> Iterator[Commit]:
        condition = self._commits.commit_id > after if after else None
        with storage_errors():
            rows = self._commits.query(
                repo_id, range_key_condition=condition, consistent_read=True, page_size=_PAGE_SIZE
            )
        for row in translated(rows):
            yield _commit(row)


def _repository(row: RepositoryRow) -> Repository:
    return Repository(
        id=RepositoryID(row.repository_id),
        storage_namespace=row.storage_namespace,
        default_branch_id=BranchID(row.default_branch_id),
        creation_date=int(row.creation_date),
        state=RepositoryState(row.state),
        read_only=bool(row.read_only),
        generation=str(row.generation or ""),
        range_format=int(row.range_format or 1),
    )


def _branch(row: BranchRow) -> Branch:
    return Branch(
        id=BranchID(row.branch_id),
        commit_id=CommitID(row.commit_id),
        staging_token=StagingToken(row.staging_token),
        sealed_tokens=tuple(StagingToken(str(token)) for token in row.sealed_tokens or ()),
        hidden=bool(row.hidden),
        retired_tokens=_retired(row),
    )


def _joined(retired: Sequence[StagingToken]) -> str | None:
    """The ``retired`` attribute of a branch row: its entries in one string (None, absent, when there is none)."""
    if any(RETIRED_SEPARATOR in entry or not entry for entry in retired):
        raise ValueError(f"a retired staging token is empty or holds {RETIRED_SEPARATOR!r}: {retired}")
    return RETIRED_SEPARATOR.join(retired) or None


def _retired(row: BranchRow) -> tuple[StagingToken, ...]:
    if row.retired is not None:
        return tuple(StagingToken(entry) for entry in row.retired.split(RETIRED_SEPARATOR))
    return tuple(StagingToken(str(entry)) for entry in row.retired_tokens or ())  # a row from before ``retired``


def _retired_unchanged(model: type[BranchRow], expected: Sequence[StagingToken]) -> Condition:
    """The swap's condition on the retired entries: the row holds ``expected``, as ``retired`` or, on a row from
    before it, as the ``retired_tokens`` list (an empty list or none at all when nothing is expected)."""
    if not expected:
        old: Condition = model.retired_tokens.does_not_exist() | (model.retired_tokens == [])
        none: Condition = model.retired.does_not_exist() & old
        return none
    listed: Condition = model.retired.does_not_exist() & (model.retired_tokens == list(expected))
    same: Condition = (model.retired == _joined(expected)) | listed
    return same


def _commit(row: CommitRow) -> Commit:
    return Commit(
        id=CommitID(row.commit_id),
        committer=row.committer,
        message=row.message,
        creation_date=float(row.creation_date),
        meta_range_id=MetaRangeID(row.meta_range_id),
        metadata={str(k): str(v) for k, v in (row.metadata or {}).items()},
        parents=tuple(CommitID(str(parent)) for parent in row.parents or ()),
        generation=int(row.generation),
    )
