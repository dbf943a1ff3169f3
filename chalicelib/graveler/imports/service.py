"""The import use case: start (check, then record), launch (inline, or as the import workflow: the engine's one
inline-or-workflow decision, workflow_runner.py, through the same WorkflowRunner port as commit and merge), run
inline, status and cancel. The workflow runs the same ImportSteps one step per Lambda (chalicelib/workflows/
imports.py). Built by build_engine (engine.py) from the engine's parts and the import's own (``ImportParts``)."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from .. import errors
from ..records import BranchID, Commit, CommitID, Repository, RepositoryID
from ..runs.workflow_runner import Runner
from ..usecases.merges import Merges
from ..validation import validate_branch_id
from .errors import ImportFinished, ImportNotFound
from .internal import check_not_internal
from .ports import ImportRecords, SourceLister
from .request import COMMON_PREFIX, ImportLocation, ImportRequest, check_allowed, check_locations
from .status import CANCELED_MESSAGE, CANCELING, RUNNING, ImportRecord
from .steps import ImporterParts, ImportSteps

_IMPORT_ID = re.compile(r"[0-9a-f]{32}")
# The import workflow's execution of an import is named after it: a second start is refused, never run twice.
EXECUTION_PREFIX = "import-"


@dataclass(frozen=True, slots=True)
class ImportParts:
    """What an import needs besides the engine's parts: the source lister, the status records, the s3:// prefixes
    imports may read (``allowed``) and the name of the setting that lists them (named by the 403)."""

    lister: SourceLister
    records: ImportRecords
    allowed: tuple[str, ...]
    setting: str


@dataclass(frozen=True, slots=True)
class ImportStatus:
    """What importStatus answers: the record, the objects ingested so far, and the merge commit once completed."""

    record: ImportRecord
    ingested: int
    commit: Commit | None


class Importer:
    """The import use case over what it uses of the engine (``ImporterParts``) and the import's own ports; merges
    go through the engine's one merge entry (``merges``), and the inline-or-workflow decision is the engine's
    (``runner``: the import workflow, above its threshold of objects)."""

    def __init__(self, parts: ImporterParts, imports: ImportParts | None, merges: Merges, runner: Runner) -> None:
        """``imports`` None: an engine built without the import's ports, whose every import answers Unsupported."""
        self._parts = parts
        self._runner = runner
        self._imports = imports
        self._clock = parts.clock
        self._steps = None if imports is None else ImportSteps(parts, merges, imports.lister, imports.records)

    def _wired(self) -> ImportParts:
        if self._imports is None:
            raise errors.Unsupported("imports are not configured on this engine")
        return self._imports

    @property
    def steps(self) -> ImportSteps:
        """The steps the import workflow's tasks run (and ``run`` runs here)."""
        if self._steps is None:
            raise errors.Unsupported("imports are not configured on this engine")
        return self._steps

    @property
    def ports(self) -> ImportParts | None:
        """The import's own ports (None: an engine built without them)."""
        return self._imports

    @property
    def records(self) -> ImportRecords:
        return self._wired().records

    def submit(
        self,
        repo_id: str,
        branch_id: str,
        locations: Sequence[ImportLocation],
        committer: str,
        message: str,
        metadata: dict[str, str] | None = None,
        date: float | None = None,
        force: bool = False,
    ) -> ImportRequest:
        """Starts the import and launches it (``start``, then ``launch``): what importStart does."""
        request = self.start(repo_id, branch_id, locations, committer, message, metadata, date, force)
        self.launch(request)
        return request

    def start(
        self,
        repo_id: str,
        branch_id: str,
        locations: Sequence[ImportLocation],
        committer: str,
        message: str,
        metadata: dict[str, str] | None = None,
        date: float | None = None,
        force: bool = False,
    ) -> ImportRequest:
        """Checks the request and records it as running; nothing else is written. Raises Invalid, ImportNotAllowed
        (403: outside the allowed locations, before any lookup of the repository; or reading a repository's
        namespace or the deployment's own files, internal.py), RepositoryNotFound, BranchNotFound,
        ReadOnlyRepository."""
        wired = self._wired()
        ordered = check_locations(locations)
        check_allowed(ordered, wired.allowed, wired.setting)
        prefix = self._parts.namespace_prefix
        own_bucket = prefix.removeprefix("s3://").partition("/")[0] if prefix else None
        check_not_internal(ordered, self._repositories(), own_bucket, self._parts.blocks.exists)
        validate_branch_id(branch_id)
        repo = self._parts.repository_for_write(repo_id, force)
        self._parts.refs.get_branch(repo.id, BranchID(branch_id))
        import_id = uuid.uuid4().hex
        request = ImportRequest(
            repo.id,
            branch_id,
            import_id,
            ordered,
            committer,
            message or f"Import into {branch_id}",
            self._clock() if date is None else float(date),
            dict(metadata or {}),
            force,
        )
        self.records.create(repo.storage_namespace, ImportRecord(import_id, repo.id, branch_id, RUNNING, self._clock()))
        return request

    def _repositories(self) -> Iterator[Repository]:
        """Every repository record, page by page (those being deleted included: their data is still there)."""
        after = ""
        while True:
            page = self._parts.refs.list_repositories(after, 1000)
            yield from page
            if len(page) < 1000:
                return
            after = page[-1].id

    def launch(self, request: ImportRequest) -> None:
        """Runs the import here when it is small (the sources are probed up to the threshold) or no workflow is
        configured; otherwise starts the import workflow, named after the import (workflow_runner.py decides)."""
        self._runner.launch_import(
            EXECUTION_PREFIX + request.import_id,
            request.to_json(),
            lambda count: self._at_least(request, count),
            lambda: self.run(request, max_slices=1),
        )

    def _at_least(self, request: ImportRequest, count: int) -> bool:
        """Whether the sources hold at least ``count`` objects; lists at most about that many."""
        seen = 0
        for loc in request.locations:
            if loc.type != COMMON_PREFIX:
                seen += 1
                continue
            for page in self.steps.lister.pages(loc.bucket, loc.key):
                seen += len(page)
                if seen >= count:
                    return True
        return seen >= count

    def run(self, request: ImportRequest, max_slices: int = 1) -> ImportRecord:
        """Runs every step here; a failure is recorded (the status reports it), not raised."""
        namespace = self._parts.get_repository(request.repository).storage_namespace
        try:
            self.steps.run(request, max_slices)
        except errors.GravelerError as e:
            self.steps.fail(request, str(e) or type(e).__name__)
        return self.records.get(namespace, request.import_id)

    def _record(self, repo_id: str, branch_id: str, import_id: str) -> tuple[str, ImportRecord]:
        """The import's namespace and record; ImportNotFound for an id of another branch (ids are not secrets,
        but a branch answers only for its own imports)."""
        missing = ImportNotFound(f"import {import_id} not found")
        if not _IMPORT_ID.fullmatch(import_id):
            raise missing
        repo = self._parts.get_repository(repo_id)
        self._parts.refs.get_branch(repo.id, BranchID(branch_id))
        record = self.records.get(repo.storage_namespace, import_id)
        if record.repository != repo.id or record.branch != branch_id:
            raise missing
        return repo.storage_namespace, record

    def status(self, repo_id: str, branch_id: str, import_id: str) -> ImportStatus:
        namespace, record = self._record(repo_id, branch_id, import_id)
        if record.ended and record.commit_id:
            commit = self._parts.refs.get_commit(RepositoryID(repo_id), CommitID(record.commit_id))
            return ImportStatus(record, record.ingested, commit)
        return ImportStatus(record, self.records.progress(namespace, import_id), None)

    def cancel(self, repo_id: str, branch_id: str, import_id: str) -> None:
        """Marks the import canceled (its steps stop before their next side effect) and records it failed with
        "import canceled". Raises ImportFinished (409, lakeFS's answer for an import that completed) when it had
        already ended, or when its final merge had begun: a cancel never reports "canceled" with the merge landed.
        """
        namespace, record = self._record(repo_id, branch_id, import_id)
        if record.ended:
            raise ImportFinished(f"import {import_id} already {record.state}")
        if self.records.decide(namespace, import_id, CANCELING) != CANCELING:
            raise ImportFinished(f"import {import_id} is completing: its merge into {branch_id} has begun")
        self.records.cancel(namespace, import_id)
        # The import may have failed on its own meanwhile: that failure stands. It cannot have completed: its merge
        # now refuses to begin.
        record = self.records.get(namespace, import_id)
        if record.ended:
            raise ImportFinished(f"import {import_id} already {record.state}")
        self.records.save(namespace, record.failed(CANCELED_MESSAGE, self._clock()))


__all__ = ["EXECUTION_PREFIX", "ImportParts", "ImportStatus", "Importer"]
