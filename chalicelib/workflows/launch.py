"""Commits, inline or as the commit workflow: small ones run in the calling Lambda, ones with more staged
changes than ``Settings.commit_workflow_threshold`` start the state machine (when one is configured).

Task ids are what the async endpoints hand out: ``c-<commit id>`` for a commit that already completed inline,
``w-<request id>`` for a workflow execution (its execution name). Neither needs a table of tasks.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from itertools import islice
from typing import Any

from chalicelib.adapters.stepfunctions import StepFunctionsWorkflows
from chalicelib.graveler import errors
from chalicelib.graveler.commit_steps import DONE_ELSEWHERE, CommitRequest
from chalicelib.graveler.records import BranchID, Commit, RepositoryID
from chalicelib.graveler.staging import branch_tokens, staged_changes
from chalicelib.wiring import Services

from .commit import steps

INLINE = "c-"
WORKFLOW = "w-"


@dataclass(frozen=True, slots=True)
class TaskStatus:
    """A task as lakeFS's async status answers describe it."""

    task_id: str
    completed: bool
    update_time: float
    result: Commit | None = None
    error: str = ""


def new_request(repo_id: str, branch_id: str, committer: str, message: str, metadata: dict[str, str],
                date: int | None, allow_empty: bool) -> CommitRequest:
    if not message:
        raise errors.Invalid("commit message is required")
    return CommitRequest(repo_id, branch_id, uuid.uuid4().hex, committer, message,
                         int(time.time()) if date is None else int(date), metadata, allow_empty)


def _workflows(services: Services) -> StepFunctionsWorkflows | None:
    arn = services.settings.commit_state_machine_arn
    if not arn:
        return None
    return StepFunctionsWorkflows(arn, services.settings.region, services.settings.endpoint_url)


def staged_at_least(services: Services, repo_id: str, branch_id: str, count: int) -> bool:
    """Whether the branch has at least ``count`` staged changes; reads at most that many."""
    g = services.graveler
    branch = g.refs.get_branch(RepositoryID(repo_id), BranchID(branch_id))
    return len(list(islice(staged_changes(g.staging, branch_tokens(branch)), count))) >= count


def start_commit(services: Services, request: CommitRequest) -> str:
    """Commits inline, or starts the workflow above the threshold; the task id."""
    g = services.graveler
    g.get_branch(request.repository, request.branch)  # BranchNotFound now rather than inside a workflow
    workflows = _workflows(services)
    threshold = services.settings.commit_workflow_threshold
    if workflows is None or not staged_at_least(services, request.repository, request.branch, threshold + 1):
        result = steps(services).run(request)
        return INLINE + str(result["commit_id"])
    workflows.start(WORKFLOW + request.request_id, {"request": request.to_json()})
    return WORKFLOW + request.request_id


def commit_status(services: Services, repo_id: str, task_id: str) -> TaskStatus:
    """The task's status. Raises NotFound for an id that names no task."""
    g = services.graveler
    if task_id.startswith(INLINE):
        commit = g.get_commit(repo_id, task_id[len(INLINE):])
        return TaskStatus(task_id, True, float(commit.creation_date), commit)
    workflows = _workflows(services)
    found = workflows.describe(task_id) if workflows is not None and task_id.startswith(WORKFLOW) else None
    if found is None:
        raise errors.NotFound(f"no commit task {task_id}")
    if found.status == "RUNNING":
        return TaskStatus(task_id, False, found.updated)
    if found.status != "SUCCEEDED" or found.output is None:
        return TaskStatus(task_id, True, found.updated, error=found.error or found.status)
    finish: dict[str, Any] = found.output.get("finish", {})
    if finish.get("status") == DONE_ELSEWHERE:
        # A racing commit took our sealed changes: report the head that holds them.
        head = found.output.get("plan", {}).get("head", "")
        return TaskStatus(task_id, True, found.updated, g.get_commit(repo_id, head))
    return TaskStatus(task_id, True, found.updated, g.get_commit(repo_id, str(finish["commit_id"])))
