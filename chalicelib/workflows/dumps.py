"""The repository dump and restore workflows' tasks (stepfunctions/dump.asl.json, stepfunctions/restore.asl.json).

The dump's state is {"task_id", "repository", "progress"} (the ids of the branches and tags files and the commits
file's cursor: dump_files.py); the restore's {"task_id", "repository", "dump", "force", "plan",
"commits": {"next": byte offset or null}}: ids and offsets only, never records (the 256 KB limit on a state). Each
task is one idempotent step of chalicelib/graveler/dumps/refs_restore.py or dump_tasks.py; a failure goes to the failure
task, which (restore) rolls back what was written and records the error in the task's status.
"""

from __future__ import annotations

from chalicelib.graveler.dumps.refs_dump import DumpProgress, RefsDump
from chalicelib.graveler.dumps.refs_restore import RestorePlan
from chalicelib.graveler.runs.plan_json import Json
from chalicelib.graveler.usecases.dump_tasks import DumpTasks, execution_message
from chalicelib.wiring import get_services


def _tasks() -> DumpTasks:
    return get_services().engine.dumps


def _failure(event: Json) -> str:
    error = event.get("error") or {}
    return execution_message(str(error.get("Error") or ""), str(error.get("Cause") or ""))


# ---- dump ------------------------------------------------------------------------------------------------------


def _progress(event: Json) -> DumpProgress | None:
    found = event.get("progress")
    return DumpProgress.from_json(found) if found else None


def dump_run(event: Json) -> Json:
    """One chunk of commits (the first call writes the branches and tags files before it)."""
    progress = _tasks().dump_step(str(event["repository"]), str(event["task_id"]), _progress(event))
    return progress.to_json()


def dump_finish(event: Json) -> Json:
    """Joins the commits file, writes the manifest and records the task done."""
    progress = _progress(event)
    assert progress is not None, "the dump's loop hands its progress to its last step"
    task = _tasks().finish_dump(str(event["repository"]), str(event["task_id"]), progress)
    assert task.dumped is not None
    return task.dumped.to_json()


def dump_fail(event: Json) -> Json:
    _tasks().dump_failed(str(event["repository"]), str(event["task_id"]), _progress(event), _failure(event))
    return {"recorded": True}


# ---- restore ---------------------------------------------------------------------------------------------------


def restore_check(event: Json) -> Json:
    dump = RefsDump.from_json(event["dump"])
    tasks = _tasks()
    plan = tasks.restorer.check(str(event["repository"]), dump, bool(event.get("force")))
    tasks.touch(plan.repository, str(event["task_id"]))
    return plan.to_json()


def restore_commits(event: Json) -> Json:
    """One chunk of the commits file: from the offset the previous chunk left, or the first record."""
    plan = RestorePlan.from_json(event["plan"])
    start = (event.get("commits") or {}).get("next")
    tasks = _tasks()
    following = tasks.restorer.load_commits(plan, plan.first_record if start is None else int(start))
    tasks.touch(plan.repository, str(event["task_id"]))
    return {"next": following}


def restore_refs(event: Json) -> Json:
    tasks = _tasks()
    tasks.restorer.load_refs(RestorePlan.from_json(event["plan"]))
    tasks.record_done(str(event["repository"]), str(event["task_id"]))
    return {"restored": True}


def restore_rollback(event: Json) -> Json:
    """Rolls back what a restore that got past its check wrote, then records the failure."""
    tasks = _tasks()
    kept: list[str] = []
    if event.get("plan"):
        kept = tasks.restorer.roll_back(RestorePlan.from_json(event["plan"]))
    tasks.record_failure(str(event["repository"]), str(event["task_id"]), _failure(event), kept)
    return {"rolled_back": bool(event.get("plan")), "kept": kept}


# The Chalice function name of each task, as the ASL files name them ("${dump_run}", ...).
HANDLERS = {
    "dump_run": dump_run,
    "dump_finish": dump_finish,
    "dump_fail": dump_fail,
    "restore_check": restore_check,
    "restore_commits": restore_commits,
    "restore_refs": restore_refs,
    "restore_rollback": restore_rollback,
}
