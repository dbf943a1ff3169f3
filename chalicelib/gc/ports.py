"""The port through which scheduled GC starts the Spark job (EMR Serverless in AWS; see adapters/emr.py)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

__all__ = ["JobRunRequest", "JobStarter"]


@dataclass(frozen=True, slots=True)
class JobRunRequest:
    """One run of emr/gc_job.py: its script, its arguments and how Spark should start it."""

    name: str
    entry_point: str
    arguments: tuple[str, ...]
    # Extra spark-submit flags (the packed Python environment); empty for none.
    spark_submit_parameters: str = ""
    tags: Mapping[str, str] = field(default_factory=dict)
    # The same token starts the job only once, even when the request is retried.
    idempotency_token: str = ""


class JobStarter(Protocol):
    """Starts Spark jobs on a cluster or a serverless application."""

    def start(self, request: JobRunRequest) -> str:
        """Starts the job run and returns its id without waiting for it. Raises StorageError when refused."""
        ...
