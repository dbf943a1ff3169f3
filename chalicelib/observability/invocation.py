"""Per invocation: the Chalice middleware that binds each invocation's correlation id, counts what it did, and
ends it with one EMF line (its latency and counts as metrics, its correlation id, route and status as
properties)."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from aws_lambda_powertools.metrics import MetricUnit
from chalice.app import Chalice, Request, Response

from .redaction import redact
from .telemetry import Metric, annotate, count, flush_metrics, logger, metrics, metrics_enabled, subsegment

__all__ = ["REQUEST_ID_HEADER", "ROUTE_METRICS", "correlation", "gc_metrics", "middleware", "route_metrics"]

REQUEST_ID_HEADER = "X-Request-Id"
API_PREFIX = "/api/v1"


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
    if metrics_enabled():
        count(Metric.LATENCY, _elapsed_ms(started), MetricUnit.Milliseconds)
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
    segment = f"## {request.method} {request.path}"
    with correlation(correlation_id, context) as keys, subsegment(segment):
        try:
            response = get_response(request)
            status = response.status_code
            response.headers[REQUEST_ID_HEADER] = correlation_id
            route_metrics(request, response)
            return response
        finally:
            annotate("route", request.path)
            annotate("status", str(status))
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
    with correlation(correlation_id, context) as keys, subsegment(f"## {kind}"):
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
            annotate("event", kind)
            _finish(keys, {"invocation": outcome}, started)


def middleware(app: Chalice) -> Callable[[Any, Callable[[Any], Any]], Any]:
    """The Chalice middleware (register for "all" event types) that observes every invocation of ``app``."""

    def observe(event: Any, get_response: Callable[[Any], Any]) -> Any:
        if isinstance(event, Request):
            # A Request's own "context" is API Gateway's request context; Lambda's is the app's.
            return _observe_http(event, app.lambda_context, get_response)
        return _observe_event(event, getattr(event, "context", None) or app.lambda_context, get_response)

    return observe
