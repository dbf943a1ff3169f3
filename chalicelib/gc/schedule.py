"""The scheduled GC handler's logic: prepare every repository that has rules, start one job run for each.

app.py's EventBridge schedule calls :func:`on_schedule`; tests call :func:`run_scheduled` with their own parts.
A repository that fails is logged and skipped: one broken repository must not stop the others.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from chalicelib.graveler import errors
from chalicelib.graveler.engine import Engine
from chalicelib.settings import GCSettings

from .ports import JobRunRequest, JobStarter
from .prepare import PreparedRun, prepare
from .rules import GCRulesNotFound

__all__ = ["DROP_BUDGET_SECONDS", "on_drop_schedule", "on_schedule", "release_retired"]

log = logging.getLogger(__name__)

# Where EMR Serverless unpacks spark.archives: "<archive>#environment" puts its Python at ./environment/bin.
ENVIRONMENT_DIRECTORY = "environment"


@dataclass(frozen=True, slots=True)
class ScheduledRun:
    """The outcome for one repository: a started job run, or the error that stopped it."""

    repository: str
    run_id: str = ""
    job_run_id: str = ""
    error: str = ""

    def to_json(self) -> dict[str, str]:
        return {
            "repository": self.repository,
            "run_id": self.run_id,
            "job_run_id": self.job_run_id,
            "error": self.error,
        }


def job_arguments(prepared: PreparedRun, settings: GCSettings) -> list[str]:
    """The command line of emr/gc_job.py for a prepared run."""
    return [
        "--storage-namespace",
        prepared.storage_namespace,
        "--run-id",
        prepared.run_id,
        "--mode",
        settings.mode,
        "--min-age-seconds",
        str(settings.min_age_seconds),
        "--commit-partitions",
        str(settings.commit_partitions),
        "--address-partitions",
        str(settings.address_partitions),
    ]


def spark_submit_parameters(settings: GCSettings) -> str:
    """Runs the job with its package on the path, the packed Python environment (pyarrow, boto3) when one is
    configured, and any flags the deployment adds."""
    flags: list[str] = []
    if settings.job_py_files:
        flags.append(f"--conf spark.submit.pyFiles={settings.job_py_files}")
    if settings.job_archive:
        python = f"./{ENVIRONMENT_DIRECTORY}/bin/python"
        flags += [
            f"--conf spark.archives={settings.job_archive}#{ENVIRONMENT_DIRECTORY}",
            f"--conf spark.emr-serverless.driverEnv.PYSPARK_DRIVER_PYTHON={python}",
            f"--conf spark.emr-serverless.driverEnv.PYSPARK_PYTHON={python}",
            f"--conf spark.executorEnv.PYSPARK_PYTHON={python}",
        ]
    if settings.spark_parameters.strip():
        flags.append(settings.spark_parameters.strip())
    return " ".join(flags)


def job_request(prepared: PreparedRun, settings: GCSettings) -> JobRunRequest:
    return JobRunRequest(
        name=f"lakelet-gc-{prepared.repository}-{prepared.run_id}"[:256],
        entry_point=settings.job_entry_point,
        arguments=tuple(job_arguments(prepared, settings)),
        spark_submit_parameters=spark_submit_parameters(settings),
        tags={"lakelet:repository": prepared.repository, "lakelet:gc-run-id": prepared.run_id},
        idempotency_token=prepared.run_id,
    )


def run_scheduled(
    engine: Engine, starter: JobStarter, settings: GCSettings, clock: Callable[[], float] = time.time
) -> list[ScheduledRun]:
    """Prepares each repository with rules and starts its job. Repositories without rules are left out."""
    runs: list[ScheduledRun] = []
    for repo in engine.collection.iterate_repositories():
        try:
            prepared = prepare(engine, repo.id, clock=clock)
        except (GCRulesNotFound, errors.RepositoryNotFound):
            continue  # no rules, or being deleted: nothing to collect
        except errors.GravelerError as e:
            log.exception("GC prepare failed for repository %s", repo.id)
            runs.append(ScheduledRun(repo.id, error=f"prepare failed: {e}"))
            continue
        try:
            job_run_id = starter.start(job_request(prepared, settings))
        except errors.GravelerError as e:
            log.exception("starting the GC job failed for repository %s", repo.id)
            runs.append(ScheduledRun(repo.id, prepared.run_id, error=f"job start failed: {e}"))
            continue
        log.info("GC of %s: run %s started as job run %s", repo.id, prepared.run_id, job_run_id)
        runs.append(ScheduledRun(repo.id, prepared.run_id, job_run_id))
    return runs


# How long one run of the drop_retired schedule drops for: under half the function's timeout (.chalice/config.json,
# 300 s), so a run that starts late or reads many branches still ends in time; what is left waits for the next run.
DROP_BUDGET_SECONDS = 120.0


def release_retired(engine: Engine, budget_seconds: float | None = None) -> int:
    """Drops the expired retired staging tokens of every branch of every repository, for at most
    ``budget_seconds`` (None: all of them); the entries still retired."""
    deadline = None if budget_seconds is None else engine.ports.clock() + budget_seconds
    left = 0
    for repo in engine.collection.iterate_repositories():
        try:
            left += engine.collection.release_retired(repo, deadline)
        except errors.GravelerError:
            log.exception("releasing the retired staging tokens of repository %s failed", repo.id)
    return left


def on_drop_schedule() -> dict[str, Any]:
    """The drop_retired schedule's entry point (every few minutes): the only place retired staging tokens are
    dropped, in the background and within DROP_BUDGET_SECONDS; a token not dropped whole stays for the next run."""
    from chalicelib.wiring import get_services

    return {"retired": release_retired(get_services().engine, DROP_BUDGET_SECONDS)}


def on_schedule() -> dict[str, Any]:
    """The EventBridge entry point: builds its parts from the environment and runs every repository's GC (retired
    staging tokens are the drop_retired schedule's: on_drop_schedule)."""
    from chalicelib.wiring import get_services, job_starter

    services = get_services()
    settings = GCSettings.from_env()
    if not settings.configured:
        log.warning("scheduled GC skipped: the EMR Serverless application, role, job entry point or package is not set")
        return {"runs": [], "skipped": "not configured"}
    runs = run_scheduled(services.engine, job_starter(services.settings, settings), settings)
    return {"runs": [run.to_json() for run in runs]}
