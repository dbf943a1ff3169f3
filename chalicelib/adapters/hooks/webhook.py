"""Webhook hooks: a POST of the event's JSON to the hook's ``url`` with its ``query_params`` and ``headers``; any
answer but a 2xx fails the hook, as in lakeFS. No retries: a pre-hook's time is the caller's time."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode, urlsplit, urlunsplit

import urllib3

from chalicelib.graveler.actions import HookOutcome, HookSpec

# How much of an answer is kept as the hook's output.
MAX_OUTPUT_BYTES = 64 * 1024


class WebhookHooks:
    def __init__(self, pool: urllib3.PoolManager | None = None) -> None:
        self.pool = pool or urllib3.PoolManager(retries=False)

    def invoke(self, hook: HookSpec, payload: bytes, timeout_seconds: float) -> HookOutcome:
        url = with_query(str(hook.properties["url"]), hook.properties.get("query_params") or {})
        headers = {
            "Content-Type": "application/json",
            **{str(k): str(v) for k, v in (hook.properties.get("headers") or {}).items()},
        }
        request = f"Request:\nPOST {url}\n{payload.decode('utf-8')}\n\n"
        try:
            answer = self.pool.request(
                "POST",
                url,
                body=payload,
                headers=headers,
                retries=False,
                redirect=False,
                preload_content=False,
                timeout=urllib3.Timeout(total=timeout_seconds),
            )
            try:
                body = answer.read(MAX_OUTPUT_BYTES, decode_content=True)
            finally:
                answer.release_conn()
        except urllib3.exceptions.TimeoutError:
            return HookOutcome(
                False,
                request + f"Response:\nno answer within {timeout_seconds:g}s\n",
                f"webhook request failed: timed out after {timeout_seconds:g}s",
            )
        except urllib3.exceptions.HTTPError as e:
            return HookOutcome(
                False, request + f"Response:\n{type(e).__name__}: {e}\n", f"webhook request failed: {type(e).__name__}"
            )
        text = body.decode("utf-8", errors="replace")
        output = request + f"Response:\n{answer.status}\n{text}\n"
        if 200 <= answer.status < 300:
            return HookOutcome(True, output)
        return HookOutcome(False, output, f"webhook request failed (status code: {answer.status})")


def with_query(url: str, params: dict[str, Any]) -> str:
    """The url with the hook's query parameters added to those it already has (a list value repeats its name)."""
    if not params:
        return url
    parts = urlsplit(url)
    pairs: list[tuple[str, str]] = []
    for name, value in params.items():
        for v in value if isinstance(value, list) else [value]:
            pairs.append((str(name), str(v).lower() if isinstance(v, bool) else str(v)))
    query = "&".join(q for q in (parts.query, urlencode(pairs)) if q)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, parts.fragment))
