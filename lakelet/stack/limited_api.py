"""The local API behind API Gateway's and Lambda's limits (``lakelet up --aws-limits``; numbers and answers in
lakelet/stack/aws_limits.py).

:class:`LimitedRequestHandler` is the dev server's request handler with API Gateway in front: a body over 10 MB is
read and dropped, then answered 413; the request's Lambda event (built by chalice local as API Gateway builds it,
binary bodies base64-encoded) over 6 MB is answered 413 before the app sees it; the app runs on a thread of its
own, answered 504 if it has not finished in 29 s, and cut at the API function's own timeout; a result over 6 MB is
answered 502 (the app did its work: only the answer is lost, as deployed).
"""

from __future__ import annotations

import base64
import fnmatch
import json
import logging
from typing import Any

from chalice.local import LocalGateway

from lakelet.stack import lambda_clock
from lakelet.stack.aws_limits import (
    API_FUNCTION,
    ENDPOINT_TIMED_OUT,
    INTERNAL_SERVER_ERROR,
    REQUEST_TOO_LONG,
    AwsLimits,
)
from lakelet.stack.devserver import DechunkingRequestHandler

log = logging.getLogger(__name__)
_DRAIN_CHUNK = 1 << 20
# API Gateway's requestContext (account, API id, stage, request ids, identity, times, domain, protocol ...): about
# this many bytes of JSON beside what chalice local's event holds, measured on an event printed by a REST API.
_REQUEST_CONTEXT_BYTES = 1_200


class RequestTooLong(Exception):
    """The body passed API Gateway's limit; it was read to its end, so the connection can go on."""


def is_binary(content_type: str, binary_types: list[str]) -> bool:
    """Whether API Gateway base64-encodes a body of this type: its binaryMediaTypes match with wildcards, and the
    app lists ``*/*`` (app.py), so deployed every body travels base64 (chalice local matches exact strings only)."""
    media = content_type.split(";", 1)[0].strip().lower() or "application/json"
    return any(fnmatch.fnmatchcase(media, pattern.lower()) for pattern in binary_types)


def event_bytes(event: dict[str, Any], body: bytes | None, binary_types: list[str]) -> int:
    """The size of the event API Gateway would hand the Lambda: chalice local's event with the body as API Gateway
    encodes it, plus what API Gateway adds beside it (every header again as multiValueHeaders, the query again as
    single values, its requestContext)."""
    full = dict(event)
    headers = event.get("headers") or {}
    if body is None:
        full["body"] = None
    elif is_binary(str(headers.get("content-type", "")), binary_types):
        full["body"], full["isBase64Encoded"] = base64.b64encode(body).decode("ascii"), True
    else:
        full["body"], full["isBase64Encoded"] = body.decode("utf-8", errors="replace"), False
    full["multiValueHeaders"] = {name: [value] for name, value in headers.items()}
    query = event.get("multiValueQueryStringParameters") or {}
    full["queryStringParameters"] = {name: values[-1] for name, values in query.items()} or None
    full["resource"] = event.get("requestContext", {}).get("resourcePath")
    full["path"] = event.get("requestContext", {}).get("path")
    full["httpMethod"] = event.get("requestContext", {}).get("httpMethod")
    return len(json.dumps(full, separators=(",", ":"), default=str).encode()) + _REQUEST_CONTEXT_BYTES


def result_bytes(response: dict[str, Any]) -> int:
    """The size of the Lambda's JSON result (chalice's response dict: a binary body is base64 text already)."""
    body = response.get("body")
    sized = dict(response)
    if isinstance(body, bytes):
        sized["body"] = body.decode("utf-8", errors="replace")
    return len(json.dumps(sized, separators=(",", ":"), default=str).encode())


def _log_late(method: str, path: str, ended: lambda_clock.Outcome) -> None:
    """A request answered 504 ended after all: say how, since its client will never know."""
    if isinstance(ended.error, lambda_clock.LambdaTimedOut):
        how = "was cut by the API function's timeout"
    elif ended.error is not None:
        how = f"failed: {ended.error!r}"
    else:
        how = f"ended with status {ended.value.get('statusCode') if isinstance(ended.value, dict) else '?'}"
    log.warning("%s %s, answered 504 at API Gateway's timeout, %s", method, path, how)


def _answer(answer: tuple[int, dict[str, str]]) -> dict[str, Any]:
    status, body = answer
    return {
        "statusCode": status,
        "headers": {"Content-Type": "application/json"},
        "multiValueHeaders": {},
        "body": json.dumps(body),
    }


class LimitedGateway:
    """chalice local's LocalGateway with the limits of API Gateway and of the API's Lambda around the app."""

    def __init__(self, inner: LocalGateway, limits: AwsLimits, binary_types: list[str]) -> None:
        self._inner = inner
        self._limits = limits
        self._binary_types = binary_types

    def handle_request(self, method: str, path: str, headers: dict[str, Any], body: bytes | None) -> dict[str, Any]:
        try:
            event = self._inner._generate_lambda_event(method, path, headers, body)
        except ValueError:
            # No route: API Gateway answers without a Lambda (chalice local raises its answer).
            return self._inner.handle_request(method, path, headers, body)
        if method == "OPTIONS" and not self._inner._has_user_defined_options_method(event):
            return self._inner.handle_request(method, path, headers, body)
        if event_bytes(event, body, self._binary_types) > self._limits.lambda_request_bytes:
            return _answer(REQUEST_TOO_LONG)  # Lambda refused the invocation: the app never ran
        outcome = lambda_clock.invoke(
            lambda: self._inner.handle_request(method, path, headers, body),
            answer_after=self._limits.integration_timeout_s,
            cut_after=self._limits.timeout(API_FUNCTION),
            name=f"{method} {path.split('?')[0]}",
            late=lambda ended: _log_late(method, path, ended),
        )
        if outcome.running:
            return _answer(ENDPOINT_TIMED_OUT)  # the work goes on until it ends or its timeout cuts it
        if outcome.error is not None:
            if isinstance(outcome.error, lambda_clock.LambdaTimedOut):
                return _answer(INTERNAL_SERVER_ERROR)
            raise outcome.error
        response: dict[str, Any] = outcome.value
        if result_bytes(response) > self._limits.lambda_response_bytes:
            return _answer(INTERNAL_SERVER_ERROR)
        return response


def limited_handler(limits: AwsLimits) -> type[DechunkingRequestHandler]:
    """The request handler of an ApiServer (devserver.py) that answers with these limits."""
    return type("AwsLimitedRequestHandler", (LimitedRequestHandler,), {"limits": limits})


class LimitedRequestHandler(DechunkingRequestHandler):
    """The dev server's handler with API Gateway's and Lambda's limits; limited_handler sets ``limits`` on a
    subclass."""

    limits: AwsLimits = AwsLimits()

    @property  # type: ignore[override]
    def local_gateway(self) -> LimitedGateway:
        return self._limited_gateway

    @local_gateway.setter
    def local_gateway(self, gateway: LocalGateway) -> None:
        # chalice's handler sets its LocalGateway in __init__, before it handles the request.
        self._limited_gateway = LimitedGateway(gateway, self.limits, list(gateway._app_object.api.binary_types))

    def _parse_payload(self) -> tuple[Any, bytes | None]:
        limit = self.limits.api_body_bytes
        if "chunked" not in self.headers.get("Transfer-Encoding", "").lower():
            try:
                declared = int(self.headers.get("Content-Length") or 0)
            except ValueError:
                declared = 0
            if declared > limit and self._body_limit() is None:
                self._drain(declared)
                raise RequestTooLong("body over API Gateway's limit")
        headers, body = super()._parse_payload()
        if body is not None and len(body) > limit:
            raise RequestTooLong("body over API Gateway's limit")
        return headers, body

    def _drain(self, length: int) -> None:
        # API Gateway takes the whole body before it answers; so does this, keeping none of it, so the client
        # reads the 413 rather than a reset connection.
        left = length
        while left > 0:
            read = self.rfile.read(min(_DRAIN_CHUNK, left))
            if not read:
                break
            left -= len(read)

    def _generic_handle(self) -> None:
        try:
            super()._generic_handle()
        except RequestTooLong:
            status, body = REQUEST_TOO_LONG
            self._send_json(status, body)

    # The base classes bound these names to their own _generic_handle when they were defined: rebind them.
    do_GET = do_PUT = do_POST = do_HEAD = do_DELETE = do_PATCH = do_OPTIONS = _generic_handle
