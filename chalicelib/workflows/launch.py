"""Commits and merges, inline or as workflows: small ones run their steps in the calling Lambda, larger ones
(above ``Settings.commit_workflow_threshold`` staged changes, or ``Settings.merge_workflow_threshold`` entries in
ranges that differ from the merge base) start the state machine when one is configured.

A synchronous API call waits for the execution up to ``Settings.workflow_wait_seconds`` (under API Gateway's
29 s); if the work goes on past that, the caller gets the task id to poll. Task ids are ``c-<commit id>`` for
work that already completed inline and ``w-<request id>`` for a workflow execution (its execution name): no
table of tasks is needed.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from itertools import islice
from typing import Any

from chalicelib.adapters.stepfunctions import Execution, StepFunctionsWorkflows
from chalicelib.graveler import errors
from chalicelib.graveler.commit import DONE_ELSEWHERE, CommitRequest
from chalicelib.graveler.merge import MergeRequest, conflicts_address, read_conflicts
from chalicelib.graveler.errors import MergeConflicts
from chalicelib.graveler.records import Branch, Commit
from chalicelib.graveler.staging import branch_tokens, staged_changes
from chalicelib.wiring import Services



class WorkflowFailed(errors.GravelerError):
    """A workflow step failed for a reason that is not the user's (HTTP 500); the message says which."""


INLINE = "c-"
WORKFLOW = "w-"
POLL_SECONDS = 0.5
# Inline work runs in one slice: in one process, slices only multiply the staging queries.
INLINE_SLICES = 1


@dataclass(frozen=True, slots=True)
class TaskStatus:
    """A task as lakeFS's async status answers describe it: ``result`` once it succeeded, ``error`` (the error
    the synchronous call would raise) once it failed."""

    task_id: str
    completed: bool
    update_time: float
    result: Commit | None = None
    error: errors.GravelerError | None = None


# ---- requests -------------------------------------------------------------------------------------------------


def new_commit_request(services: Services, repo_id: str, branch_id: str, committer: str, message: str,
                       metadata: dict[str, str], date: int | None, allow_empty: bool) -> CommitRequest:
    if not message:
        raise errors.Invalid("commit message is required")
    return CommitRequest(repo_id, branch_id, uuid.uuid4().hex, committer, message,
                         services.graveler.now() if date is None else float(date), metadata, allow_empty)


def new_merge_request(services: Services, repo_id: str, source_ref: str, destination: str, committer: str,
                      message: str, metadata: dict[str, str], strategy: str | None,
                      path_strategies: list[tuple[str, str]], squash_merge: bool, allow_empty: bool,
                      force: bool) -> MergeRequest:
    """The request, with the source resolved now: RefNotFound or BranchNotFound before anything starts."""
    g = services.graveler
    source = g.get_commit(repo_id, source_ref)
    g.get_branch(repo_id, destination)
    return MergeRequest(repo_id, source_ref, source.id, destination, uuid.uuid4().hex, committer, message,
                        g.now(), metadata, strategy, tuple(path_strategies), squash_merge, allow_empty,
                        force)


# ---- running --------------------------------------------------------------------------------------------------


def _workflows(services: Services, arn: str | None) -> StepFunctionsWorkflows | None:
    if not arn:
        return None
    return StepFunctionsWorkflows(arn, services.settings.region, services.settings.endpoint_url)


def staged_at_least(services: Services, branch: Branch, count: int) -> bool:
    """Whether the branch has at least ``count`` staged changes; reads at most that many."""
    return len(list(islice(staged_changes(services.graveler.staging, branch_tokens(branch)), count))) >= count


def _wait(workflows: StepFunctionsWorkflows, name: str, seconds: float) -> Execution | None:
    """The execution once it ended, or None if it still runs after ``seconds``."""
    deadline = time.monotonic() + seconds
    while True:
        found = workflows.describe(name)
        if found is not None and found.status != "RUNNING":
            return found
        if time.monotonic() >= deadline:
            return None
        time.sleep(min(POLL_SECONDS, max(0.0, deadline - time.monotonic())))


def commit(services: Services, request: CommitRequest, wait_seconds: float) -> TaskStatus:
    """Commits inline, or starts the workflow above the threshold and waits for it up to ``wait_seconds``.
    Raises what the commit raises when it failed within that time."""
    branch = services.graveler.get_branch(request.repository, request.branch)  # BranchNotFound now
    workflows = _workflows(services, services.settings.commit_state_machine_arn)
    threshold = services.settings.commit_workflow_threshold
    if workflows is None or not staged_at_least(services, branch, threshold + 1):
        return _inline(services, request.repository, request.branch,
                       services.graveler.commit_steps.run(request, INLINE_SLICES))
    # The workflow's first step refuses a protected branch too; refusing here starts no execution for nothing.
    services.graveler.guard.refuse_commit(services.graveler.get_repository(request.repository), request.branch)
    return _start(services, workflows, request.repository, request.request_id, request.to_json(), wait_seconds,
                  _commit_result)


def merge(services: Services, request: MergeRequest, wait_seconds: float) -> TaskStatus:
    """Merges inline, or starts the workflow above the threshold and waits for it up to ``wait_seconds``.
    Raises what the merge raises when it failed within that time (MergeConflicts with the first conflicts)."""
    workflows = _workflows(services, services.settings.merge_state_machine_arn)
    steps = services.graveler.merge_steps
    # The plan's checks and size come first; an inline merge goes on from this very plan.
    planned = steps.plan(request, INLINE_SLICES)
    if workflows is None or planned.size <= services.settings.merge_workflow_threshold:
        return _inline(services, request.repository, request.destination,
                       steps.run(request, INLINE_SLICES, planned=planned))
    return _start(services, workflows, request.repository, request.request_id, request.to_json(), wait_seconds,
                  _merge_result)


def _inline(services: Services, repo_id: str, branch_id: str, result: dict[str, Any]) -> TaskStatus:
    """An inline task's id names its commit and its branch ("c-<commit id>.<branch>": "." is in no branch
    name), so its status answers only through that branch."""
    found = services.graveler.get_commit(repo_id, str(result["commit_id"]))
    return TaskStatus(f"{INLINE}{found.id}.{branch_id}", True, time.time(), found)


def _start(services: Services, workflows: StepFunctionsWorkflows, repo_id: str, request_id: str,
           request: dict[str, Any], wait_seconds: float,
           result: Callable[[Services, str, dict[str, Any]], Commit]) -> TaskStatus:
    """Starts the execution and waits for it: still running, or what it ended with; raises its error."""
    name = WORKFLOW + request_id
    workflows.start(name, {"request": request})
    found = _wait(workflows, name, wait_seconds)
    if found is None:
        return TaskStatus(name, False, time.time())
    status = _status(services, repo_id, name, found, result)
    if status.error is not None:
        raise status.error
    return status


# ---- status ---------------------------------------------------------------------------------------------------


def commit_status(services: Services, repo_id: str, branch_id: str, task_id: str) -> TaskStatus:
    """The commit task's status. Raises NotFound for an id that names no commit task of this branch."""
    return _task_status(services, repo_id, branch_id, "branch", task_id, services.settings.commit_state_machine_arn,
                        _commit_result)


def merge_status(services: Services, repo_id: str, destination: str, task_id: str) -> TaskStatus:
    """The merge task's status. Raises NotFound for an id that names no merge task into this branch."""
    return _task_status(services, repo_id, destination, "destination", task_id,
                        services.settings.merge_state_machine_arn, _merge_result)


def _task_status(services: Services, repo_id: str, branch_id: str, branch_field: str, task_id: str,
                 arn: str | None, result: Callable[[Services, str, dict[str, Any]], Commit]) -> TaskStatus:
    """Task ids are unique across repositories; a task answers only through the repository and branch it
    belongs to, and the same NotFound otherwise, so another repository's tasks cannot be probed."""
    missing = errors.NotFound(f"no task {task_id}")
    if task_id.startswith(INLINE):
        commit_id, _, branch = task_id[len(INLINE):].partition(".")
        if branch != branch_id or not commit_id:
            raise missing
        try:
            found = services.graveler.get_commit(repo_id, commit_id)
        except errors.NotFound:
            raise missing from None
        return TaskStatus(task_id, True, float(found.creation_date), found)
    workflows = _workflows(services, arn)
    execution = workflows.describe(task_id) if workflows is not None and task_id.startswith(WORKFLOW) else None
    request = (execution.input or {}).get("request", {}) if execution is not None else {}
    if execution is None or request.get("repository") != repo_id or request.get(branch_field) != branch_id:
        raise missing
    return _status(services, repo_id, task_id, execution, result)


def _status(services: Services, repo_id: str, task_id: str, execution: Execution,
            result: Callable[[Services, str, dict[str, Any]], Commit]) -> TaskStatus:
    if execution.status == "RUNNING":
        return TaskStatus(task_id, False, execution.updated)
    if execution.status != "SUCCEEDED" or execution.output is None:
        failure = _failure(services, repo_id, task_id, execution)
        return TaskStatus(task_id, True, execution.updated, error=failure)
    return TaskStatus(task_id, True, execution.updated, result(services, repo_id, execution.output))


def _commit_result(services: Services, repo_id: str, output: dict[str, Any]) -> Commit:
    finish: dict[str, Any] = output.get("finish", {})
    if finish.get("status") == DONE_ELSEWHERE:
        # A racing commit took our sealed changes: report the head that holds them.
        return services.graveler.get_commit(repo_id, str(output.get("plan", {}).get("head", "")))
    return services.graveler.get_commit(repo_id, str(finish["commit_id"]))


def _merge_result(services: Services, repo_id: str, output: dict[str, Any]) -> Commit:
    return services.graveler.get_commit(repo_id, str(output["finish"]["commit_id"]))


def _failure(services: Services, repo_id: str, task_id: str, execution: Execution) -> errors.GravelerError:
    """The error a failed execution stands for: the step's own error (the Lambda's errorType and errorMessage
    in the cause), MergeConflicts with the conflicts it kept, or WorkflowFailed."""
    message = execution.cause
    try:
        cause = json.loads(execution.cause)
        if isinstance(cause, dict) and cause.get("errorMessage"):
            message = str(cause["errorMessage"])
    except ValueError:
        pass
    if execution.error == MergeConflicts.__name__:
        g = services.graveler
        namespace = g.get_repository(repo_id).storage_namespace
        kept = read_conflicts(g.blocks.get(conflicts_address(namespace, task_id[len(WORKFLOW):])))
        return MergeConflicts(message, kept)
    known = errors.error_names().get(execution.error)
    if known is not None:
        return known(message)
    what = f"{execution.error or execution.status}: {message}" if message else execution.error or execution.status
    return WorkflowFailed(f"workflow {task_id} failed ({what})")
