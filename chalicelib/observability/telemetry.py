"""The Powertools objects, configured once per process: the JSON logger (shared with the ``chalicelib``
package logger, every record redacted), the EMF metrics of the current invocation, and the X-Ray tracer, built on
the first invocation that traces."""

from __future__ import annotations

import logging
import os
import sys
import warnings
from contextlib import AbstractContextManager, nullcontext
from enum import StrEnum
from typing import TYPE_CHECKING, Any, TextIO

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.logging.filters import SuppressFilter
from aws_lambda_powertools.logging.formatter import LambdaPowertoolsFormatter
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.metrics.functions import is_metrics_disabled

from chalicelib.settings import stage_from_env

from .redaction import redact

__all__ = [
    "PACKAGE_LOGGER",
    "SERVICE",
    "Metric",
    "RedactingFormatter",
    "annotate",
    "count",
    "flush_metrics",
    "logger",
    "metrics",
    "metrics_enabled",
    "subsegment",
    "tracer",
    "tracing_enabled",
]

if TYPE_CHECKING:
    from aws_lambda_powertools import Tracer


SERVICE = "lakelet"
METRICS_NAMESPACE = "Lakelet"
PACKAGE_LOGGER = "chalicelib"


class Metric(StrEnum):
    """The application metrics (CloudWatch namespace METRICS_NAMESPACE)."""

    # Of every invocation, from the middleware's start to its end (milliseconds).
    LATENCY = "Latency"
    COMMITS = "Commits"
    MERGES = "Merges"
    # A merge, cherry-pick or revert refused because of conflicting changes (409).
    CONFLICTS = "Conflicts"
    OBJECTS_WRITTEN = "ObjectsWritten"
    BYTES_WRITTEN = "BytesWritten"
    OBJECTS_DELETED = "ObjectsDeleted"
    GC_RUNS_STARTED = "GCRunsStarted"
    GC_RUNS_FAILED = "GCRunsFailed"


class RedactingFormatter(LambdaPowertoolsFormatter):
    """The Powertools JSON formatter, with every record passed through ``redact`` just before serialization
    (message, extra fields, exception text and stack trace alike)."""

    def serialize(self, log: Any) -> str:
        return super().serialize(redact(log))


class _StdoutHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to whatever ``sys.stdout`` is when a record is emitted: the Lambda runtime, chalice local and
    pytest each replace it, and a handler holding the original object would write to a closed stream."""

    def __init__(self) -> None:
        super().__init__(sys.stdout)

    @property
    def stream(self) -> TextIO:
        return sys.stdout

    @stream.setter
    def stream(self, _value: TextIO) -> None:
        pass


logger = Logger(service=SERVICE, logger_handler=_StdoutHandler(), logger_formatter=RedactingFormatter(utc=True))
metrics = Metrics(namespace=METRICS_NAMESPACE, service=SERVICE)
_tracers: list[Tracer] = []


def tracing_enabled() -> bool:
    """Powertools' own rule, read without building a Tracer: on in Lambda, off under SAM local or chalice local,
    off when POWERTOOLS_TRACE_DISABLED is true."""
    if os.environ.get("POWERTOOLS_TRACE_DISABLED", "false").strip().lower() in {"1", "true", "y", "yes", "t", "on"}:
        return False
    return bool(os.environ.get("LAMBDA_TASK_ROOT")) and not (
        os.environ.get("AWS_SAM_LOCAL") or os.environ.get("AWS_CHALICE_CLI_MODE")
    )


def tracer() -> Tracer | None:
    """The process's Tracer, built (importing the X-Ray SDK and patching botocore) on the first call that traces;
    None wherever tracing is off."""
    if not tracing_enabled():
        return None
    if not _tracers:
        from aws_lambda_powertools import Tracer

        _tracers.append(Tracer(service=SERVICE))
    return _tracers[0]


def subsegment(name: str) -> AbstractContextManager[object]:
    traced = tracer()
    return nullcontext() if traced is None else traced.provider.in_subsegment(name)


def annotate(key: str, value: str) -> None:
    traced = tracer()
    if traced is not None:
        traced.put_annotation(key, value)


def _share_handler() -> None:
    handler = logger.registered_handler
    # Chalice's app.log is this same "lakelet" logger; a plain-text handler it added would print every line twice.
    own = logging.getLogger(SERVICE)
    for other in list(own.handlers):
        if other is not handler:
            own.removeHandler(other)
    package = logging.getLogger(PACKAGE_LOGGER)
    if handler not in package.handlers:
        package.addHandler(handler)
    package.setLevel(logger.log_level)
    # Records still propagate (pytest's caplog listens at the root), but a root handler installed by the Lambda
    # runtime would print them again as plain text, unredacted: filter them out there, as Powertools does for
    # its own logger.
    for root_handler in logging.root.handlers:
        if type(root_handler).__module__ != "_pytest.logging":
            root_handler.addFilter(SuppressFilter(PACKAGE_LOGGER))


_share_handler()


def metrics_enabled() -> bool:
    """Whether this invocation's EMF line will be printed (Powertools' rule, read from the environment each time:
    tests and chalice local change it). Where it will not (the local stack's default), nothing is gathered for it:
    a tenth of a millisecond of each request went to metrics and properties dropped unprinted."""
    return not is_metrics_disabled()


def count(metric: Metric, value: float = 1, unit: MetricUnit = MetricUnit.Count) -> None:
    """Adds ``value`` to ``metric`` in this invocation's EMF blob (flushed by the middleware)."""
    if metrics_enabled():
        metrics.add_metric(name=metric.value, unit=unit, value=value)


def flush_metrics() -> None:
    """Prints this invocation's metrics as one EMF line, if there are any."""
    if metrics.metric_set:
        # Read per flush (one lookup): tests and chalice local change the environment.
        stage = stage_from_env()
        if metrics.default_dimensions.get("stage") != stage:
            with warnings.catch_warnings():
                # Replacing the stage is the point; Powertools warns about any dimension set twice.
                warnings.simplefilter("ignore")
                metrics.set_default_dimensions(stage=stage)
        metrics.flush_metrics()
        if metrics.metric_set:
            # POWERTOOLS_METRICS_DISABLED (the local stack's default): Powertools neither prints nor clears, so
            # the values would pile up across invocations and print as one blob every 100 of them.
            metrics.clear_metrics()
