"""Everything the Lambda functions import: the graveler engine, its AWS adapters and the HTTP glue."""

__all__ = [
    "adapters",
    "api",
    "auth",
    "gc",
    "graveler",
    "http_headers",
    "observability",
    "repository_metadata",
    "s3proxy",
    "samples",
    "settings",
    "webui",
    "wiring",
    "workflows",
]
