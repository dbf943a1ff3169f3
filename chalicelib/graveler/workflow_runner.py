"""Commits and merges, inline or as workflows: the one place that decides. ``Graveler.commit`` and
``Graveler.merge`` come here; small work runs its steps in the calling process, larger work (above
``Workflows.commit_threshold`` staged changes, or ``Workflows.merge_threshold`` entries in ranges that differ from
the merge base) starts an execution through the ``WorkflowRunner`` port when one is configured.

The caller waits for the execution up to ``wait_seconds`` (the API: under API Gateway's 29 s); if the work goes on
past that, StillRunning carries the task id to poll. Task ids are ``c-<commit id>.<branch>`` for work that
completed inline and ``w-<request id>`` for a workflow execution (its execution name): no table of tasks is
needed. Failed executions come back as the error the step raised, by its class name (``errors.error_names``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from itertools import islice
from typing import TYPE_CHECKING, Any

from . import errors
from .actions.operations import commit_event, merge_event
from .commit import DONE_ELSEWHERE, CommitRequest, landed_commit
from .merge import MergeRequest, conflicts_address, landed_merge, read_conflicts
from .ports import Execution, WorkflowRunner
from .records import Branch, Commit
from .staging import branch_tokens, staged_changes

if TYPE_CHECKING:
    from .service import Graveler

__all__ = [
    "INLINE",
    "WORKFLOW",
    "TaskStatus",
    "Workflows",
    "commit",
    "commit_status",
    "failure",
    "inline_task_id",
    "merge",
    "merge_status",
]

INLINE = "c-"
WORKFLOW = "w-"
POLL_SECONDS = 0.5
# Inline work runs in one slice: in one process, slices only multiply the staging queries.
INLINE_SLICES = 1
INLINE_ROUNDS = 10


@dataclass(frozen=True, slots=True)
class Workflows:
    """Where large commits and merges go: a runner per workflow (None: always inline), the sizes above which they
    go there, and how long a caller waits for an execution by default."""

    commit: WorkflowRunner | None = None
    merge: WorkflowRunner | None = None
    commit_threshold: int = 25_000
    merge_threshold: int = 50_000
    wait_seconds: float = 25.0


@dataclass(frozen=True, slots=True)
class TaskStatus:
    """A task as lakeFS's async status answers describe it: ``result`` once it succeeded, ``error`` (the error
    the synchronous call would raise) once it failed."""

    task_id: str
    completed: bool
    update_time: float
    result: Commit | None = None
    error: errors.GravelerError | None = None


Result = Callable[["Graveler", str, dict[str, Any]], Commit]


def inline_task_id(commit_id: str, branch_id: str) -> str:
    """An inline task's id names its commit and its branch ("." is in no branch name), so its status answers
    only through that branch."""
    return f"{INLINE}{commit_id}.{branch_id}"


# ---- running --------------------------------------------------------------------------------------------------


def _staged_up_to(g: Graveler, branch: Branch, count: int) -> int:
    """How many changes the branch has staged, counting at most ``count``."""
    return len(list(islice(staged_changes(g.staging, branch_tokens(branch)), count)))


def commit(g: Graveler, request: CommitRequest, wait_seconds: float) -> Commit:
    """Commits inline, or starts the workflow above the threshold and waits for it up to ``wait_seconds``.
    Raises what the commit raises when it failed within that time, StillRunning when it goes on."""
    branch = g.get_branch(request.repository, request.branch)  # BranchNotFound now
    runner = g.workflows.commit
    staged = 0 if runner is None else _staged_up_to(g, branch, g.workflows.commit_threshold + 1)
    if runner is None or staged <= g.workflows.commit_threshold:
        # Pre-hooks run right after the seal, as lakeFS's do: they judge exactly the sealed changes, the commit
        # takes exactly those, and what is staged while they run goes to the next commit. A failed hook leaves
        # the sealed changes staged (the next commit takes them) and answers 412.
        def pre_hooks(sealed: Branch) -> None:
            g.run_pre_hooks(commit_event(request), sealed)

        # Changes seen staged on this very record spare the seal its own "anything staged?" query.
        result = g.commit_steps.run(
            request, INLINE_SLICES, INLINE_ROUNDS, branch, staged_seen=staged > 0, pre_hooks=pre_hooks
        )
        made = g.get_commit(request.repository, str(result["commit_id"]))
        g.run_post_hooks(commit_event(request, made.id))
        return made
    # The workflow's first step refuses a protected branch too; refusing here starts no execution for nothing.
    # Its pre-hooks run in its seal step, after the seal; its post-hooks in its last step (workflows/commit.py).
    g.guard.refuse_commit(g.get_repository(request.repository), request.branch)
    return _start(g, runner, request.repository, request.request_id, request.to_json(), wait_seconds, _commit_result)


def merge(g: Graveler, request: MergeRequest, wait_seconds: float) -> Commit:
    """Merges inline, or starts the workflow above the threshold and waits for it up to ``wait_seconds``.
    Raises what the merge raises when it failed within that time (MergeConflicts with the first conflicts),
    StillRunning when it goes on."""
    runner = g.workflows.merge
    steps = g.merge_steps
    # The plan's checks and size come first; an inline merge goes on from this very plan.
    planned = steps.plan(request, INLINE_SLICES)
    # After the plan's checks (a merge that cannot happen runs no hooks, as in lakeFS), before any move.
    g.run_pre_hooks(merge_event(request))
    if runner is None or planned.size <= g.workflows.merge_threshold:
        result = steps.run(request, INLINE_SLICES, INLINE_ROUNDS, planned=planned)
        made = g.get_commit(request.repository, str(result["commit_id"]))
        g.run_post_hooks(merge_event(request, made.id))
        return made
    # The workflow's last step runs the post-hooks (workflows/merge.py).
    return _start(g, runner, request.repository, request.request_id, request.to_json(), wait_seconds, _merge_result)


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


def _start(
    g: Graveler,
    runner: WorkflowRunner,
    repo_id: str,
    request_id: str,
    request: dict[str, Any],
    wait_seconds: float,
    result: Result,
) -> Commit:
    """Starts the execution and waits for it: its commit, or its error raised, or StillRunning."""
    name = WORKFLOW + request_id
    runner.start(name, {"request": request})
    found = _wait(runner, name, wait_seconds)
    if found is None:
        raise errors.StillRunning(name)
    status = _landed_anyway(g, runner, name, _status(g, repo_id, name, found, result))
    if status.error is not None:
        raise status.error
    assert status.result is not None
    return status.result


# ---- status ---------------------------------------------------------------------------------------------------


def commit_status(g: Graveler, repo_id: str, branch_id: str, task_id: str) -> TaskStatus:
    """The commit task's status. Raises NotFound for an id that names no commit task of this branch. A failed
    execution whose commit is on the branch answers that commit: a step after the move failed, not the commit."""
    status = _task_status(g, repo_id, branch_id, "branch", task_id, g.workflows.commit, _commit_result)
    return _landed_anyway(g, g.workflows.commit, task_id, status)


def _landed_anyway(g: Graveler, runner: WorkflowRunner | None, task_id: str, status: TaskStatus) -> TaskStatus:
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
        landed = landed_merge(g.refs, MergeRequest.from_json(request))
    else:
        landed = landed_commit(g.refs, CommitRequest.from_json(request))
    if landed is None:
        return status
    return TaskStatus(task_id, True, status.update_time, g.get_commit(str(request["repository"]), landed))


def merge_status(g: Graveler, repo_id: str, destination: str, task_id: str) -> TaskStatus:
    """The merge task's status. Raises NotFound for an id that names no merge task into this branch. A failed
    execution whose merge commit is on the destination answers that commit, as a commit's status does."""
    status = _task_status(g, repo_id, destination, "destination", task_id, g.workflows.merge, _merge_result)
    return _landed_anyway(g, g.workflows.merge, task_id, status)


def _task_status(
    g: Graveler,
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
            found = g.get_commit(repo_id, commit_id)
        except errors.NotFound:
            raise missing from None
        return TaskStatus(task_id, True, float(found.creation_date), found)
    execution = runner.describe(task_id) if runner is not None and task_id.startswith(WORKFLOW) else None
    request = (execution.input or {}).get("request", {}) if execution is not None else {}
    if execution is None or request.get("repository") != repo_id or request.get(branch_field) != branch_id:
        raise missing
    return _status(g, repo_id, task_id, execution, result)


def _status(g: Graveler, repo_id: str, task_id: str, execution: Execution, result: Result) -> TaskStatus:
    if execution.status == "RUNNING":
        return TaskStatus(task_id, False, execution.updated)
    if execution.status != "SUCCEEDED" or execution.output is None:
        return TaskStatus(task_id, True, execution.updated, error=failure(g, repo_id, task_id, execution))
    return TaskStatus(task_id, True, execution.updated, result(g, repo_id, execution.output))


def _commit_result(g: Graveler, repo_id: str, output: dict[str, Any]) -> Commit:
    finish: dict[str, Any] = output.get("finish", {})
    if finish.get("status") == DONE_ELSEWHERE:
        # A retried step found this request's own commit already on the branch (plan's ``head``); a racing
        # commit that took our changes fails the plan with NoChanges instead.
        return g.get_commit(repo_id, str(output.get("plan", {}).get("head", "")))
    return g.get_commit(repo_id, str(finish["commit_id"]))


def _merge_result(g: Graveler, repo_id: str, output: dict[str, Any]) -> Commit:
    return g.get_commit(repo_id, str(output["finish"]["commit_id"]))


def failure(g: Graveler, repo_id: str, task_id: str, execution: Execution) -> errors.GravelerError:
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
        namespace = g.get_repository(repo_id).storage_namespace
        kept = read_conflicts(g.blocks.get(conflicts_address(namespace, task_id[len(WORKFLOW) :])))
        return errors.MergeConflicts(message, kept)
    known = errors.error_names().get(execution.error)
    if known is not None:
        return known(message)
    what = f"{execution.error or execution.status}: {message}" if message else execution.error or execution.status
    return errors.WorkflowFailed(f"workflow {task_id} failed ({what})")
