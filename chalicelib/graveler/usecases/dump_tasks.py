"""The repository dump and restore tasks (lakeFS's dumpSubmit / dumpStatus, restoreSubmit / restoreStatus), inline
or as workflows, and the synchronous refs dump and restore beside them.

Where a task runs is the engine's one inline-or-workflow decision (workflow_runner.Runner.launch_task), as for
imports: with the dump (or restore) state machine configured, a dump of a repository with more than
``dump_threshold`` commits (probed up to that many) and a restore whose commits file holds more than
``restore_threshold`` records (its header says) start an execution named after the task; smaller ones, or every one
without a state machine, run in the calling process before the submit answers.

A task's status is a record ``_lakefs/refs_dump/tasks/<task id>.json`` in the repository's namespace: written
running at submit (workflow) and again by each step (its ``update_time`` is the task's heartbeat), done by the
workflow's last step or by its failure step (inline: once, at the end).
The status call also asks the execution while the record says running, so a workflow that ended without recording
(its failure step failed too) reports done with the execution's error rather than running for ever.
"""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import islice

from .. import errors
from ..dumps.refs_dump import DUMP_DIR, DumpProgress, RefsDump, RefsDumper, RefsDumpParts
from ..dumps.refs_restore import RefsRestorer
from ..parts import Workflows
from ..ports import WorkflowRunner
from ..records import Repository
from ..runs.plan_json import Json

__all__ = ["DUMP_TASK", "RESTORE_TASK", "DumpTask", "DumpTasks", "execution_message"]

DUMP_TASK, RESTORE_TASK = "dump", "restore"
ROLLED_BACK = "restore failed, nothing of it kept"
KEPT_WRITTEN = "restore failed and rolled back, but for the branches written to during it (kept with their history)"


@dataclass(frozen=True, slots=True)
class DumpTask:
    """A dump or restore task's status (lakeFS's RepositoryDumpStatus / RepositoryRestoreStatus)."""

    id: str
    done: bool
    update_time: float
    error: str = ""
    dumped: RefsDump | None = None


def execution_message(error: str, cause: str) -> str:
    """A failed step's message from the error and cause Step Functions passes on (a Lambda's cause is JSON with
    errorMessage)."""
    message = cause or error
    try:
        found = json.loads(cause)
        if isinstance(found, dict) and found.get("errorMessage"):
            message = str(found["errorMessage"])
    except ValueError:
        pass
    return message or "the workflow failed"


# Runner.launch_task, as dumps and restores call it: (workflow, large?, name, payload, inline, running) -> task.
Launch = Callable[
    [WorkflowRunner | None, Callable[[], bool], str, Json, Callable[[], DumpTask], Callable[[], DumpTask]], DumpTask
]


def _task_id(kind: str) -> str:
    return f"{kind}-{uuid.uuid4().hex}"


class DumpTasks:
    """The dump and restore use cases: synchronous (refs dump and restore) and as tasks."""

    def __init__(self, parts: RefsDumpParts, workflows: Workflows, launch: Launch) -> None:
        """``workflows``: the dump and restore state machines and their thresholds; ``launch``: the engine's one
        inline-or-workflow decision (``Runner.launch_task``)."""
        self._parts = parts
        self.workflows = workflows
        self._launch = launch
        self.dumper = RefsDumper(parts)
        self.restorer = RefsRestorer(parts)

    # ---- synchronous ------------------------------------------------------------------------------------------

    def dump(self, repo_id: str) -> RefsDump:
        """Writes the dump files and the manifest. Raises RepositoryNotFound."""
        return self.dumper.dump(repo_id)

    def restore(self, repo_id: str, dump: RefsDump, force: bool = False) -> None:
        """Restores into a bare repository; a failure rolls back and is raised (refs_restore.py)."""
        self.restorer.run(repo_id, dump, force)

    # ---- dump task --------------------------------------------------------------------------------------------

    def submit_dump(self, repo_id: str) -> DumpTask:
        """Runs the dump inline or starts its workflow. A missing repository is refused at once (404); a failure
        of the dump itself is recorded, as a task's is."""
        repo = self._parts.repository(repo_id)
        task_id = _task_id(DUMP_TASK)

        def inline() -> DumpTask:
            try:
                return self.finish_dump(repo.id, task_id)
            except errors.GravelerError as e:
                return self.record_failure(repo.id, task_id, str(e) or type(e).__name__)

        return self._launch(
            self.workflows.dump,
            lambda: self._more_commits_than(repo, self.workflows.dump_threshold),
            task_id,
            {"task_id": task_id, "repository": repo.id},
            inline,
            lambda: self._running(repo, task_id),
        )

    def _more_commits_than(self, repo: Repository, count: int) -> bool:
        return len(list(islice(self._parts.refs.iterate_commits(repo.id), count + 1))) > count

    def finish_dump(self, repo_id: str, task_id: str, progress: DumpProgress | None = None) -> DumpTask:
        """Records the dump done: with ``progress`` (the workflow's last step), once its commits file is joined;
        without, after the whole dump (inline)."""
        if progress is None:
            dumped = self.dumper.dump(repo_id, scratch=task_id)
        else:
            dumped = self.dumper.finish(repo_id, progress)
        task = DumpTask(task_id, True, self._parts.clock(), dumped=dumped)
        self._record(self._parts.repository(repo_id), task)
        return task

    def dump_step(self, repo_id: str, task_id: str, progress: DumpProgress | None) -> DumpProgress:
        """One step of the dump workflow's loop: the branches and tags files and a first chunk of commits when
        ``progress`` is None, the next chunk otherwise. Moves the task's ``update_time``."""
        started = progress or self.dumper.begin(repo_id, task_id)
        following = self.dumper.step(repo_id, started)
        self.touch(repo_id, task_id)
        return following

    def dump_failed(self, repo_id: str, task_id: str, progress: DumpProgress | None, message: str) -> DumpTask:
        """Removes a failed dump's scratch chunks and records the failure."""
        if progress is not None:
            self.dumper.discard(repo_id, progress)
        return self.record_failure(repo_id, task_id, message)

    # ---- restore task -----------------------------------------------------------------------------------------

    def submit_restore(self, repo_id: str, dump: RefsDump, force: bool = False) -> DumpTask:
        """Runs the restore inline or starts its workflow. Refused at once (not recorded): a missing or read-only
        repository, and one that is not bare (400, as lakeFS answers restoreSubmit); every other failure is the
        task's, recorded after its roll-back."""
        repo = self._parts.writable_repository(repo_id, force)
        self.restorer.refuse_not_bare(repo)
        task_id = _task_id(RESTORE_TASK)
        count = self.restorer.commits_count(repo.id, dump)

        def inline() -> DumpTask:
            try:
                plan = self.restorer.check(repo.id, dump, force)
            except errors.GravelerError as e:
                return self.record_failure(repo.id, task_id, str(e) or type(e).__name__)
            try:
                self.restorer.load(plan)
            except errors.GravelerError as e:
                kept = self.restorer.roll_back(plan)
                return self.record_failure(repo.id, task_id, str(e) or type(e).__name__, kept)
            return self.record_done(repo.id, task_id)

        return self._launch(
            self.workflows.restore,
            lambda: count is not None and count > self.workflows.restore_threshold,
            task_id,
            {"task_id": task_id, "repository": repo.id, "dump": dump.to_json(), "force": force},
            inline,
            lambda: self._running(repo, task_id),
        )

    def _running(self, repo: Repository, task_id: str) -> DumpTask:
        running = DumpTask(task_id, False, self._parts.clock())
        self._record(repo, running)
        return running

    def touch(self, repo_id: str, task_id: str) -> None:
        """Marks a running task alive now: lakectl gives up on a task whose ``update_time`` is older than its
        ``--timeout`` (an hour by default), so each step of a long workflow moves it, as lakeFS's steps do."""
        self._record(self._parts.repository(repo_id), DumpTask(task_id, False, self._parts.clock()))

    def record_done(self, repo_id: str, task_id: str) -> DumpTask:
        task = DumpTask(task_id, True, self._parts.clock())
        self._record(self._parts.repository(repo_id), task)
        return task

    def record_failure(self, repo_id: str, task_id: str, message: str, kept: Sequence[str] = ()) -> DumpTask:
        """Records the task failed with ``message``; a restore's says that nothing of it was kept, or which branches
        its roll-back kept (``kept``: written to during the restore)."""
        if task_id.startswith(RESTORE_TASK + "-"):
            if kept:
                names = ", ".join(sorted(kept))
                message = f"{KEPT_WRITTEN}: {names}: {message}"
            else:
                message = f"{ROLLED_BACK}: {message}"
        task = DumpTask(task_id, True, self._parts.clock(), error=message)
        # A repository deleted meanwhile: nobody can ask for its tasks any more.
        with contextlib.suppress(errors.RepositoryNotFound):
            self._record(self._parts.repository(repo_id), task)
        return task

    # ---- status -----------------------------------------------------------------------------------------------

    def status(self, repo_id: str, kind: str, task_id: str) -> DumpTask:
        """A task of ``kind`` (dump or restore). Raises TaskNotFound."""
        repo = self._parts.repository(repo_id)
        missing = errors.TaskNotFound(f"no {kind} task {task_id}")
        if not task_id.startswith(kind + "-") or not task_id[len(kind) + 1 :].isalnum():
            raise missing
        try:
            data = json.loads(self._parts.blocks.get(self._address(repo, task_id)))
        except errors.ObjectNotFound:
            raise missing from None
        if data.get("repository") != repo.id or data.get("generation") != repo.generation:
            # Another repository on the same namespace (a restored copy shares it) or an earlier one of this name.
            raise missing
        refs = data.get("refs")
        task = DumpTask(
            task_id,
            bool(data["done"]),
            float(data["update_time"]),
            str(data.get("error") or ""),
            None if refs is None else RefsDump(refs["commits"], refs["branches"], refs["tags"]),
        )
        runner = self.workflows.dump if kind == DUMP_TASK else self.workflows.restore
        if task.done or runner is None:
            return task
        execution = runner.describe(task_id)
        if execution is None or execution.status in ("RUNNING", "SUCCEEDED"):
            # SUCCEEDED without a record done: its last step is recording it right now.
            return task
        message = execution_message(execution.error, execution.cause)
        return DumpTask(task_id, True, execution.updated, f"{execution.error or execution.status}: {message}")

    def _address(self, repo: Repository, task_id: str) -> str:
        return f"{repo.storage_namespace.rstrip('/')}/{DUMP_DIR}/tasks/{task_id}.json"

    def _record(self, repo: Repository, task: DumpTask) -> None:
        refs = task.dumped
        body = {
            "id": task.id,
            "repository": repo.id,
            "generation": repo.generation,
            "done": task.done,
            "update_time": task.update_time,
            "error": task.error,
            "refs": None
            if refs is None
            else {"commits": refs.commits_id, "branches": refs.branches_id, "tags": refs.tags_id},
        }
        self._parts.blocks.put(self._address(repo, task.id), json.dumps(body).encode())
