"""Observability of every Lambda handler, with aws-lambda-powertools: JSON logs that carry a correlation id,
metrics as CloudWatch embedded metric format (EMF), and X-Ray tracing; plus ``redact``, which keeps secrets out
of every log line.

- Logs: one Powertools Logger (service ``lakelet``) owns a JSON handler on stdout; the ``chalicelib`` package
  logger shares it, so ``logging.getLogger(__name__)`` in any module writes the same JSON, with the same
  correlation id, through the same redaction. Chalice's own ``app.log`` is the ``lakelet`` logger, so its lines
  are JSON too.
- Metrics: ``count(Metric.X)`` adds to the current invocation's EMF blob; the middleware flushes it once per
  invocation. CloudWatch turns the blob into metrics in namespace ``Lakelet``, dimensions service and stage.
- Tracing: a subsegment per invocation; boto3 and PynamoDB calls appear under it (X-Ray patches botocore). The
  Tracer, and with it the X-Ray SDK (a third of a cold start), is built on the first invocation that traces, never
  at import; outside Lambda, or with POWERTOOLS_TRACE_DISABLED, it is never built at all.
- ``middleware(app)``: a Chalice middleware for every event type (HTTP routes, the S3 gateway's Function URL,
  the GC schedule): binds the correlation id (API Gateway's request id, else the Lambda request id), answers it
  in ``X-Request-Id``, counts the events it can see from outside (commits, merges, conflicts, objects written and
  deleted, bytes, GC runs), and ends each invocation with ONE JSON line: the EMF blob, holding its latency and
  counts as metrics and, as searchable properties, its correlation id, method, route, path and status (never
  bodies, headers or query strings). The access log and the metrics are one line, not two.
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
import time
import uuid
import warnings
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any, TextIO

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.logging.filters import SuppressFilter
from aws_lambda_powertools.logging.formatter import LambdaPowertoolsFormatter
from aws_lambda_powertools.metrics import MetricUnit
from chalice.app import Chalice, Request, Response

from .settings import Settings

# What app.py mounts, and what the tests read back; the rest is the middleware's own.
__all__ = ["REDACTED", "REQUEST_ID_HEADER", "ROUTE_METRICS", "Metric", "middleware", "redact", "redact_text"]

if TYPE_CHECKING:
    from aws_lambda_powertools import Tracer

SERVICE = "lakelet"
METRICS_NAMESPACE = "Lakelet"
PACKAGE_LOGGER = "chalicelib"
REQUEST_ID_HEADER = "X-Request-Id"
REDACTED = "***"
API_PREFIX = "/api/v1"


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


# ---------------------------------------------------------------------------------------------------------------
# Redaction


# Keys whose values are secrets wherever they appear (headers, JSON bodies, extra log fields).
_SECRET_KEY = re.compile(
    r"authorization|password|passwd|secret|token|cookie|signature|credential|private.?key", re.IGNORECASE
)
# Names that match the pattern above but hold identifiers, not secrets.
_NOT_SECRET_KEYS = frozenset({"staging_token", "sealed_tokens", "access_key_id", "accesskeyid"})
_SECRET_WORD = re.compile(r"secret|password|passwd|token|signature", re.IGNORECASE)
# A word (matched whole from its start, possessively) and, looked ahead at without consuming, the separator and
# value after it; _redact_pairs checks the word for a keyword in Python. The regex it replaces,
# "[\w-]*secret[\w-]*...", took time quadratic in a long word: 284 s to log one request for a
# 100,000-character path.
_PAIR = re.compile(r"""(?<![\w-])([\w-]++)(?=(["']?\s*[:=]\s*["']?)([^"'\s&,;}]+))""")
_SECRET_TEXT: list[tuple[re.Pattern[str], str]] = [
    # HTTP auth schemes: "Basic <base64>", "Bearer <token>".
    (re.compile(r"\b(basic|bearer)(\s+)[A-Za-z0-9+/=._~-]+", re.IGNORECASE), r"\1\2" + REDACTED),
    # JWTs (login tokens) anywhere.
    (re.compile(r"\beyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*"), REDACTED),
    # A secret access key on its own: 40 characters of base64 with both cases (hex digests have one case).
    (
        re.compile(
            r"(?<![A-Za-z0-9+/])(?=[A-Za-z0-9+/]{0,39}[a-z])(?=[A-Za-z0-9+/]{0,39}[A-Z])[A-Za-z0-9+/]{40}(?![A-Za-z0-9+/=])"
        ),
        REDACTED,
    ),
]


def _is_secret_key(key: str) -> bool:
    return bool(_SECRET_KEY.search(key)) and key.lower() not in _NOT_SECRET_KEYS


def _redact_pairs(text: str) -> str:
    """key=value and "key": "value" pairs whose key names a secret (SigV4's Signature=, presigned URLs'
    X-Amz-Signature and X-Amz-Security-Token, JSON fragments in exception messages), value masked."""
    parts: list[str] = []
    done = 0
    for match in _PAIR.finditer(text):
        if match.start() < done or not _SECRET_WORD.search(match.group(1)):
            continue
        parts.append(text[done : match.start()] + match.group(1) + match.group(2) + REDACTED)
        done = match.end(3)
    parts.append(text[done:])
    return "".join(parts)


def redact_text(text: str) -> str:
    """``text`` with every secret-looking fragment replaced by REDACTED."""
    for pattern, replacement in _SECRET_TEXT:
        text = pattern.sub(replacement, text)
    return _redact_pairs(text)


def redact(value: Any) -> Any:
    """A copy of ``value`` (JSON-like: dicts, lists, strings) without secrets: values under secret-named keys are
    replaced whole, and secret-looking fragments of every string are masked."""
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, Mapping):
        return {k: REDACTED if isinstance(k, str) and _is_secret_key(k) else redact(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [redact(item) for item in value]
    if value is None or isinstance(value, bool | int | float):
        return value
    # Anything else (an exception in a stack trace, a datetime) is serialized with str(): mask that string.
    return redact_text(str(value))


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


# ---------------------------------------------------------------------------------------------------------------
# The Powertools objects, configured once per process


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


def _subsegment(name: str) -> AbstractContextManager[object]:
    traced = tracer()
    return nullcontext() if traced is None else traced.provider.in_subsegment(name)


def _annotate(key: str, value: str) -> None:
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


def count(metric: Metric, value: float = 1, unit: MetricUnit = MetricUnit.Count) -> None:
    """Adds ``value`` to ``metric`` in this invocation's EMF blob (flushed by the middleware)."""
    metrics.add_metric(name=metric.value, unit=unit, value=value)


def flush_metrics() -> None:
    """Prints this invocation's metrics as one EMF line, if there are any."""
    if metrics.metric_set:
        # Read per flush (a few dictionary lookups): tests and chalice local change the environment.
        stage = Settings.from_env().stage
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


# ---------------------------------------------------------------------------------------------------------------
# Per invocation


@contextmanager
def correlation(correlation_id: str, context: Any = None) -> Iterator[dict[str, object]]:
    """Within the block, every log line carries ``correlation_id`` (and the Lambda request id and function name
    when known); yields those keys.

    Thread-safe keys: the local dev server serves requests on several threads at once.
    """
    keys: dict[str, object] = {"correlation_id": correlation_id}
    request_id = getattr(context, "aws_request_id", None)
    if isinstance(request_id, str) and request_id:
        keys["function_request_id"] = request_id
    function_name = getattr(context, "function_name", None)
    if isinstance(function_name, str) and function_name:
        keys["function_name"] = function_name
    logger.thread_safe_append_keys(**keys)
    try:
        yield keys
    finally:
        logger.thread_safe_remove_keys(list(keys))


def _new_id() -> str:
    return str(uuid.uuid4())


def _elapsed_ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 1)


def _finish(keys: Mapping[str, object], facts: Mapping[str, object], started: float) -> None:
    """Ends an invocation with its one EMF line: its latency and counts, and ``keys`` and ``facts`` as properties."""
    latency = _elapsed_ms(started)
    count(Metric.LATENCY, latency, MetricUnit.Milliseconds)
    for key, value in {**keys, **facts}.items():
        metrics.add_metadata(key=key, value=redact(value))
    flush_metrics()


@dataclass(frozen=True, slots=True)
class _Route:
    """The metrics one (method, route template) contributes on success and on conflict."""

    on_success: tuple[Metric, ...] = ()
    counts_bytes: bool = False
    counts_deletions: bool = False
    conflict_status: int = 0


_BRANCH = f"{API_PREFIX}/repositories/{{repository}}/branches/{{branch}}"
# Keyed by (method, route template as registered by the blueprints); tests check every key is a real route.
ROUTE_METRICS: dict[tuple[str, str], _Route] = {
    ("POST", f"{_BRANCH}/commits"): _Route((Metric.COMMITS,)),
    ("POST", f"{_BRANCH}/revert"): _Route((Metric.COMMITS,), conflict_status=409),
    ("POST", f"{_BRANCH}/cherry-pick"): _Route((Metric.COMMITS,), conflict_status=409),
    ("POST", f"{API_PREFIX}/repositories/{{repository}}/refs/{{ref}}/merge/{{destinationBranch}}"): _Route(
        (Metric.MERGES,), conflict_status=409
    ),
    ("POST", f"{_BRANCH}/objects"): _Route((Metric.OBJECTS_WRITTEN,), counts_bytes=True),
    ("PUT", f"{_BRANCH}/staging/backing"): _Route((Metric.OBJECTS_WRITTEN,), counts_bytes=True),
    ("POST", f"{_BRANCH}/objects/copy"): _Route((Metric.OBJECTS_WRITTEN,)),
    ("DELETE", f"{_BRANCH}/objects"): _Route((Metric.OBJECTS_DELETED,)),
    ("POST", f"{_BRANCH}/objects/delete"): _Route(counts_deletions=True),
}


def _json_body(raw: str | bytes | None) -> Any:
    try:
        return json.loads(raw or b"")
    except ValueError:
        return None


def route_metrics(request: Request, response: Response) -> None:
    """Counts what a finished API request did, from its route, status and (small, JSON) answer."""
    route = ROUTE_METRICS.get((request.method, request.path))
    if route is None:
        return
    status = response.status_code
    if route.conflict_status and status == route.conflict_status:
        count(Metric.CONFLICTS)
        return
    if not 200 <= status < 300:
        return
    for metric in route.on_success:
        count(metric)
    body = response.body if isinstance(response.body, Mapping) else None
    if route.counts_bytes and body is not None and isinstance(body.get("size_bytes"), int):
        count(Metric.BYTES_WRITTEN, body["size_bytes"], MetricUnit.Bytes)
    if route.counts_deletions:
        asked = _json_body(request.raw_body)
        paths = asked.get("paths") if isinstance(asked, Mapping) else None
        failed = body.get("errors") if body is not None else None
        if isinstance(paths, list):
            count(Metric.OBJECTS_DELETED, max(0, len(paths) - (len(failed) if isinstance(failed, list) else 0)))


def gc_metrics(result: Any) -> None:
    """Counts the job runs a scheduled GC invocation started or failed to start (its ``{"runs": [...]}``)."""
    runs = result.get("runs") if isinstance(result, Mapping) else None
    if not isinstance(runs, list):
        return
    started = sum(1 for run in runs if isinstance(run, Mapping) and run.get("job_run_id"))
    failed = sum(1 for run in runs if isinstance(run, Mapping) and run.get("error"))
    if started:
        count(Metric.GC_RUNS_STARTED, started)
    if failed:
        count(Metric.GC_RUNS_FAILED, failed)


def _observe_http(request: Request, context: Any, get_response: Callable[[Request], Response]) -> Response:
    started = time.perf_counter()
    correlation_id = str(request.context.get("requestId") or "") or _new_id()
    status = 500
    subsegment = f"## {request.method} {request.path}"
    with correlation(correlation_id, context) as keys, _subsegment(subsegment):
        try:
            response = get_response(request)
            status = response.status_code
            response.headers[REQUEST_ID_HEADER] = correlation_id
            route_metrics(request, response)
            return response
        finally:
            _annotate("route", request.path)
            _annotate("status", str(status))
            http = {
                "method": request.method,
                "route": request.path,
                "path": str(request.context.get("path") or ""),
                "status": status,
            }
            _finish(keys, {"http": http}, started)


def _observe_event(event: Any, context: Any, get_response: Callable[[Any], Any]) -> Any:
    started = time.perf_counter()
    raw: Any = getattr(event, "event", None)
    if not isinstance(raw, Mapping):
        to_dict = getattr(event, "to_dict", None)
        raw = to_dict() if callable(to_dict) else {}
    request_context: Any = raw.get("requestContext")
    if not isinstance(request_context, Mapping):
        request_context = {}
    http: Any = request_context.get("http")
    if not isinstance(http, Mapping):
        http = None
    correlation_id = (
        str(request_context.get("requestId") or "")
        or str(getattr(context, "aws_request_id", "") or "")
        or str(raw.get("id") or "")
        or _new_id()
    )
    kind = type(event).__name__
    outcome: dict[str, Any] = {"event": kind}
    if http is not None:
        # A Function URL request (the S3 gateway): the path, never the query string (presigned signatures).
        outcome.update(method=str(http.get("method", "")), path=str(raw.get("rawPath") or ""))
    with correlation(correlation_id, context) as keys, _subsegment(f"## {kind}"):
        try:
            result = get_response(event)
            if isinstance(result, Mapping) and isinstance(result.get("statusCode"), int):
                outcome["status"] = result["statusCode"]
            gc_metrics(result)
            return result
        except Exception:
            outcome["status"] = "error"
            logger.exception("%s failed", kind)
            raise
        finally:
            _annotate("event", kind)
            _finish(keys, {"invocation": outcome}, started)


def middleware(app: Chalice) -> Callable[[Any, Callable[[Any], Any]], Any]:
    """The Chalice middleware (register for "all" event types) that observes every invocation of ``app``."""

    def observe(event: Any, get_response: Callable[[Any], Any]) -> Any:
        if isinstance(event, Request):
            # A Request's own "context" is API Gateway's request context; Lambda's is the app's.
            return _observe_http(event, app.lambda_context, get_response)
        return _observe_event(event, getattr(event, "context", None) or app.lambda_context, get_response)

    return observe
