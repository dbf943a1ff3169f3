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

The package's modules, one concern each: ``redaction`` (secrets out of log lines), ``telemetry`` (the Powertools
logger, metrics and tracer of the process) and ``invocation`` (the middleware, per invocation).
"""

from .invocation import REQUEST_ID_HEADER, ROUTE_METRICS, middleware
from .redaction import REDACTED, redact, redact_text
from .telemetry import Metric

# What app.py mounts, and what the tests read back; the rest is each module's own.
__all__ = [
    "REDACTED",
    "REQUEST_ID_HEADER",
    "ROUTE_METRICS",
    "Metric",
    "invocation",
    "middleware",
    "redact",
    "redact_text",
    "redaction",
    "telemetry",
]
