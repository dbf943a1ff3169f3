"""Commits, merges, imports, dumps and restores, inline or as workflows: the one place that decides.
``engine.commits.commit``, ``engine.merges.merge``, the import's launch and the dump and restore tasks come here;
small work runs its steps in the calling process, larger work (above ``Workflows.commit_threshold`` staged
changes, ``Workflows.merge_threshold`` entries in ranges that differ from the merge base,
``Workflows.import_threshold`` source objects, ``dump_threshold`` commits or ``restore_threshold`` dumped commits)
starts an execution through the ``WorkflowRunner`` port when one is configured. Commits and merges are waited for;
imports, dumps and restores are not (``launch_task``: their status records tell how they go).

The caller waits for the execution up to ``wait_seconds`` (the API: under API Gateway's 29 s); if the work goes on
past that, StillRunning carries the task id to poll. Task ids are ``c-<commit id>.<branch>`` for work that
completed inline and ``w-<request id>`` for a workflow execution (its execution name): no table of tasks is
needed. Failed executions come back as the error the step raised, by its class name (``errors.error_names``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from itertools import islice

from .. import errors
from ..actions.operations import commit_event, merge_event
from ..commit import DONE_ELSEWHERE, CommitPlan, CommitRequest, CommitSteps, Finish, landed_commit
from ..merge import MergeRequest, MergeSteps, conflicts_address, landed_merge, read_conflicts
from ..parts import EngineParts, Workflows
from ..ports import Execution, WorkflowRunner
from ..reads.shared import Reads
from ..records import Branch, Commit
from ..writes.staging import branch_tokens, staged_changes
from .plan_json import Json

__all__ = [
    "INLINE",
    "WORKFLOW",
    "Runner",
    "TaskStatus",
    "Workflows",
    "inline_task_id",
]

INLINE = "c-"
WORKFLOW = "w-"
POLL_SECONDS = 0.5
# Inline work runs in one slice: in one process, slices only multiply the staging queries.
INLINE_SLICES = 1
INLINE_ROUNDS = 10
# Without a commit workflow, a commit counts at most this many staged changes before it seals (one page of a
# staging query): fewer are an exact count that sizes the next token without a sample (branch_moves.sealed).
INLINE_COUNT = 100
# Above INLINE_COUNT, a commit is sized from its token's sketch first (DECISION_SAMPLE entries, ~6% error): one
# estimated at no more than 1/WELL_UNDER of the threshold runs inline without the count of every staged row that
# would otherwise decide (a Query of all of them).
DECISION_SAMPLE = 256
WELL_UNDER = 2


@dataclass(frozen=True, slots=True)
class TaskStatus:
    """A task as lakeFS's async status answers describe it: ``result`` once it succeeded, ``error`` (the error
    the synchronous call would raise) once it failed."""

    task_id: str
    completed: bool
    update_time: float
    result: Commit | None = None
    error: errors.GravelerError | None = None


Result = Callable[[str, Json], Commit]


def inline_task_id(commit_id: str, branch_id: str) -> str:
    """An inline task's id names its commit and its branch ("." is in no branch name), so its status answers
    only through that branch."""
    return f"{INLINE}{commit_id}.{branch_id}"


class Runner:
    """The one inline-or-workflow decision of commits and merges, over the engine's parts, its shared reads and the
    steps of each operation (what the workflows' tasks run too)."""

    def __init__(self, parts: EngineParts, reads: Reads, commit_steps: CommitSteps, merge_steps: MergeSteps) -> None:
        self._parts = parts
        self._reads = reads
        self._commit_steps = commit_steps
        self._merge_steps = merge_steps

    # ---- running ----------------------------------------------------------------------------------------------

    def _staged_up_to(self, branch: Branch, count: int) -> int:
        """How many changes the branch has staged, counting at most ``count``. A branch with one token (no sealed
        one) has exactly its token's rows, which the store counts without reading them out; sealed tokens (left by
        a commit that failed) may stage a key twice, so their changes are merged and counted one by one."""
        tokens = branch_tokens(branch)
        if len(tokens) == 1:
            return self._parts.staging.count(tokens[0], count)
        return len(list(islice(staged_changes(self._parts.staging, tokens), count)))

    def _well_under(self, branch: Branch, threshold: int) -> bool:
        """Whether the branch's one token is estimated, from its sketch, at no more than ``threshold`` / WELL_UNDER
        staged rows (and at INLINE_COUNT at least: it was counted that far), so that a commit runs inline without
        counting every row. The estimate's error is about 1/sqrt(DECISION_SAMPLE) (6%), and the sketch only
        over-counts otherwise (its entries outlive deleted rows). It can under-count keys it leaves out (longer
        than a sort key allows beside the rank) or keys chosen for being left out: an estimate below what was
        counted falls back to the count, and otherwise the writer's own commit runs inline, as a commit of any
        size does without a workflow."""
        tokens = branch_tokens(branch)
        if len(tokens) != 1:
            return False
        estimate = self._parts.staging.sample(tokens[0], DECISION_SAMPLE).estimated_rows
        return INLINE_COUNT <= estimate <= threshold // WELL_UNDER

    def commit(self, request: CommitRequest, wait_seconds: float) -> Commit:
        """Commits inline, or starts the workflow above the threshold and waits for it up to ``wait_seconds``.
        Raises what the commit raises when it failed within that time, StillRunning when it goes on."""
        reads, workflows = self._reads, self._parts.workflows
        branch = reads.get_branch(request.repository, request.branch)  # BranchNotFound now
        runner = workflows.commit
        # Counted on this very record, one page first (what the seal's "anything staged?" read would cost); with a
        # workflow and more than that staged, up to its threshold unless the sketch puts the branch well under it.
        # A count that stopped short of its bound is exact.
        bound = INLINE_COUNT if runner is None else workflows.commit_threshold + 1
        first = min(bound, INLINE_COUNT)
        staged = self._staged_up_to(branch, first)
        exact = staged < first
        if not exact and bound > first and not self._well_under(branch, workflows.commit_threshold):
            staged = self._staged_up_to(branch, bound)
            exact = staged < bound
        if runner is None or staged <= workflows.commit_threshold:
            # Pre-hooks run right after the seal, as lakeFS's do: they judge exactly the sealed changes, the commit
            # takes exactly those, and what is staged while they run goes to the next commit. A failed hook leaves
            # the sealed changes staged (the next commit takes them) and answers 412.
            pre_runs: list[str] = []

            def pre_hooks(sealed: Branch) -> None:
                pre_runs.append(self.commit_pre_hooks(request, sealed))

            # Changes seen staged on this very record spare the seal its own "anything staged?" query, and their
            # exact count (a small one) the sample that sizes the next token. The steps answer with the commit they
            # built: nothing is read back.
            made = self._commit_steps.run(
                request,
                INLINE_SLICES,
                INLINE_ROUNDS,
                branch,
                staged_seen=staged > 0,
                pre_hooks=pre_hooks,
                staged_rows=staged if exact else None,
            )
            self.commit_post_hooks(request, made.id, pre_runs[-1] if pre_runs else "")
            # The token an upload of this container would stage into moved: the next one reads the branch.
            self._parts.upload_branches.drop((request.repository, request.branch))
            return made
        # The workflow's first step refuses a protected branch too; refusing here starts no execution for nothing.
        # Its pre-hooks run in its seal step, after the seal; its post-hooks in its last step (workflows/commit.py).
        self._parts.guard.refuse_commit(reads.get_repository(request.repository), request.branch)
        return self._start(
            runner, request.repository, request.request_id, request.to_json(), wait_seconds, self._commit_result
        )

    def merge(self, request: MergeRequest, wait_seconds: float) -> Commit:
        """Merges inline, or starts the workflow above the threshold and waits for it up to ``wait_seconds``.
        Raises what the merge raises when it failed within that time (MergeConflicts with the first conflicts),
        StillRunning when it goes on."""
        runner = self._parts.workflows.merge
        steps = self._merge_steps
        # The plan's checks and size come first; an inline merge goes on from this very plan.
        planned = steps.plan(request, INLINE_SLICES)
        # After the plan's checks (a merge that cannot happen runs no hooks, as in lakeFS), before any move.
        self.merge_pre_hooks(request)
        if runner is None or planned.size <= self._parts.workflows.merge_threshold:
            made = steps.run(request, INLINE_SLICES, INLINE_ROUNDS, planned=planned)
            self.merge_post_hooks(request, made.id)
            self._parts.upload_branches.drop((request.repository, request.destination))
            return made
        # The workflow's last step runs the post-hooks (workflows/merge.py).
        return self._start(
            runner, request.repository, request.request_id, request.to_json(), wait_seconds, self._merge_result
        )

    # ---- the hook rule: the inline paths above and the workflows' tasks (workflows/commit.py, merge.py) call these

    def commit_pre_hooks(self, request: CommitRequest, sealed: Branch | None = None) -> str:
        """Right after the seal, as lakeFS's pre-commit hooks run: they judge exactly the sealed changes. Raises
        HookAborted; answers the run's id, the post-commit event's ``pre_run_id``.

        ``sealed``: the branch record the seal left. The hooks' action files are read from the changes it sealed,
        not from its new staging token: that token holds only what was staged after the seal, which this commit
        does not take (and, a moment after the seal, nothing: one staging query less)."""
        if sealed is not None and sealed.sealed_tokens:
            first, *rest = sealed.sealed_tokens
            sealed = replace(sealed, staging_token=first, sealed_tokens=tuple(rest))
        return self._reads.run_pre_hooks(commit_event(request), sealed)

    def commit_post_hooks(self, request: CommitRequest, commit_id: str, pre_run_id: str) -> None:
        """After the branch moved; the pre-commit run gets the commit's id (lakeFS's PostCommitHook), so the
        commit's runs list it too. Failures are recorded, never raised."""
        self._reads.run_post_hooks(commit_event(request, commit_id, pre_run_id))

    def merge_pre_hooks(self, request: MergeRequest) -> str:
        """After the plan's checks (a merge that cannot happen runs no hooks, as in lakeFS), before any move."""
        return self._reads.run_pre_hooks(merge_event(request))

    def merge_post_hooks(self, request: MergeRequest, commit_id: str) -> None:
        """After the destination moved; failures are recorded, never raised."""
        self._reads.run_post_hooks(merge_event(request, commit_id))

    def _start(
        self,
        runner: WorkflowRunner,
        repo_id: str,
        request_id: str,
        request: Json,
        wait_seconds: float,
        result: Result,
    ) -> Commit:
        """Starts the execution and waits for it: its commit, or its error raised, or StillRunning."""
        name = WORKFLOW + request_id
        runner.start(name, {"request": request})
        found = _wait(runner, name, wait_seconds)
        if found is None:
            raise errors.StillRunning(name)
        status = self._landed_anyway(runner, name, self._status(repo_id, name, found, result))
        if status.error is not None:
            raise status.error
        assert status.result is not None
        return status.result

    def launch_import(
        self,
        name: str,
        request: Json,
        holds_at_least: Callable[[int], bool],
        inline: Callable[[], object],
    ) -> None:
        """Runs an import ``inline`` when no import workflow is configured or its sources hold no more objects than
        the threshold (``holds_at_least`` probes them, listing about that many); otherwise starts the import
        workflow as execution ``name`` (one per import: a second start is refused, never run twice). Nobody waits
        for it: the import's status records tell how it goes."""
        workflows = self._parts.workflows
        self.launch_task(
            workflows.imports,
            lambda: holds_at_least(workflows.import_threshold + 1),
            name,
            {"request": request, "max_slices": workflows.import_max_slices},
            inline,
            lambda: None,
        )

    def launch_task[T](
        self,
        runner: WorkflowRunner | None,
        large: Callable[[], bool],
        name: str,
        payload: Json,
        inline: Callable[[], T],
        running: Callable[[], T],
    ) -> T:
        """The inline-or-workflow decision of the tasks nobody waits for (imports, dumps, restores): ``inline()``
        when no workflow is configured or the work is not ``large()`` (asked only with a workflow); otherwise
        ``running()`` first (what the task records before its execution can), then the execution ``name`` starts
        with ``payload``, and the answer is ``running()``'s."""
        if runner is None or not large():
            return inline()
        answer = running()
        runner.start(name, payload)
        return answer

    # ---- status -----------------------------------------------------------------------------------------------

    def commit_status(self, repo_id: str, branch_id: str, task_id: str) -> TaskStatus:
        """The commit task's status. Raises NotFound for an id that names no commit task of this branch. A failed
        execution whose commit is on the branch answers that commit: a step after the move failed, not the
        commit."""
        runner = self._parts.workflows.commit
        status = self._task_status(repo_id, branch_id, "branch", task_id, runner, self._commit_result)
        return self._landed_anyway(runner, task_id, status)

    def _landed_anyway(self, runner: WorkflowRunner | None, task_id: str, status: TaskStatus) -> TaskStatus:
        """A failed commit or merge execution whose commit is on its branch answers that commit (a step after the
        move failed, or the execution was cut after it): the branch moved, so the error would be a lie."""
        if status.error is None or runner is None or not task_id.startswith(WORKFLOW):
            return status
        if isinstance(status.error, errors.MergeConflicts):
            return status  # a merge with conflicts never moved its branch
        execution = runner.describe(task_id)
        request = (execution.input or {}).get("request") if execution is not None else None
        if not request:
            return status
        if "destination" in request:
            landed = landed_merge(self._parts.refs, MergeRequest.from_json(request))
        else:
            landed = landed_commit(self._parts.refs, CommitRequest.from_json(request))
        if landed is None:
            return status
        return TaskStatus(task_id, True, status.update_time, self._reads.get_commit(str(request["repository"]), landed))

    def merge_status(self, repo_id: str, destination: str, task_id: str) -> TaskStatus:
        """The merge task's status. Raises NotFound for an id that names no merge task into this branch. A failed
        execution whose merge commit is on the destination answers that commit, as a commit's status does."""
        runner = self._parts.workflows.merge
        status = self._task_status(repo_id, destination, "destination", task_id, runner, self._merge_result)
        return self._landed_anyway(runner, task_id, status)

    def _task_status(
        self,
        repo_id: str,
        branch_id: str,
        branch_field: str,
        task_id: str,
        runner: WorkflowRunner | None,
        result: Result,
    ) -> TaskStatus:
        """Task ids are unique across repositories; a task answers only through the repository and branch it
        belongs to, and the same NotFound otherwise, so another repository's tasks cannot be probed."""
        missing = errors.NotFound(f"no task {task_id}")
        if task_id.startswith(INLINE):
            commit_id, _, branch = task_id[len(INLINE) :].partition(".")
            if branch != branch_id or not commit_id:
                raise missing
            try:
                found = self._reads.get_commit(repo_id, commit_id)
            except errors.NotFound:
                raise missing from None
            return TaskStatus(task_id, True, float(found.creation_date), found)
        execution = runner.describe(task_id) if runner is not None and task_id.startswith(WORKFLOW) else None
        request = (execution.input or {}).get("request", {}) if execution is not None else {}
        if execution is None or request.get("repository") != repo_id or request.get(branch_field) != branch_id:
            raise missing
        return self._status(repo_id, task_id, execution, result)

    def _status(self, repo_id: str, task_id: str, execution: Execution, result: Result) -> TaskStatus:
        if execution.status == "RUNNING":
            return TaskStatus(task_id, False, execution.updated)
        if execution.status != "SUCCEEDED" or execution.output is None:
            return TaskStatus(task_id, True, execution.updated, error=self.failure(repo_id, task_id, execution))
        return TaskStatus(task_id, True, execution.updated, result(repo_id, execution.output))

    def _commit_result(self, repo_id: str, output: Json) -> Commit:
        finish = Finish.from_json(output.get("finish", {"status": ""}))
        if finish.status == DONE_ELSEWHERE:
            # A retried step found this request's own commit already on the branch (plan's ``head``); a racing
            # commit that took our changes fails the plan with NoChanges instead.
            return self._reads.get_commit(repo_id, CommitPlan.from_json(output.get("plan", {"done": True})).head)
        return self._reads.get_commit(repo_id, finish.commit_id)

    def _merge_result(self, repo_id: str, output: Json) -> Commit:
        return self._reads.get_commit(repo_id, Finish.from_json(output["finish"]).commit_id)

    def failure(self, repo_id: str, task_id: str, execution: Execution) -> errors.GravelerError:
        """The error a failed execution stands for: the step's own error (the task's error class name and its
        message in the cause), MergeConflicts with the conflicts it kept, or WorkflowFailed."""
        message = execution.cause
        try:
            cause = json.loads(execution.cause)
            if isinstance(cause, dict) and cause.get("errorMessage"):
                message = str(cause["errorMessage"])
        except ValueError:
            pass
        if execution.error == errors.MergeConflicts.__name__:
            namespace = self._reads.get_repository(repo_id).storage_namespace
            kept = read_conflicts(self._parts.blocks.get(conflicts_address(namespace, task_id[len(WORKFLOW) :])))
            return errors.MergeConflicts(message, kept)
        known = errors.error_names().get(execution.error)
        if known is not None:
            return known(message)
        what = f"{execution.error or execution.status}: {message}" if message else execution.error or execution.status
        return errors.WorkflowFailed(f"workflow {task_id} failed ({what})")


def _wait(runner: WorkflowRunner, name: str, seconds: float) -> Execution | None:
    """The execution once it ended, or None if it still runs after ``seconds``."""
    deadline = time.monotonic() + seconds
    while True:
        found = runner.describe(name)
        if found is not None and found.status != "RUNNING":
            return found
        if time.monotonic() >= deadline:
            return None
        time.sleep(min(POLL_SECONDS, max(0.0, deadline - time.monotonic())))
