"""AWS's limits on the deployed Lakelet, and the answers AWS gives past them: the numbers ``lakelet up --aws-limits``
enforces, in one place with their sources (AWS documentation as read on 2026-11-28, unless said otherwise).

Deployed, every request to the lakeFS API passes API Gateway (a REST API, Lambda proxy integration) and one
synchronous Lambda invocation; every S3 gateway request one Lambda Function URL (BUFFERED) invocation; every
workflow step one Lambda invocation from Step Functions. Their limits:

- API Gateway, REST API: a request body of at most 10 MB, and 29 s for the integration to answer ("Amazon API
  Gateway quotas", API Gateway Developer Guide). Past them API Gateway answers with its gateway responses
  REQUEST_TOO_LARGE (413) and INTEGRATION_TIMEOUT (504) ("Gateway response types for API Gateway"), whose body
  the template sets to ``{"message": "refused by API Gateway: <type>"}`` (AWS's own default would be "Request Too
  Long", "Endpoint request timed out"). A request that timed out is not stopped: the Lambda runs on until it
  ends or its own timeout cuts it.
- Lambda, synchronous invocation: 6 MB of JSON event in and of JSON result out ("Lambda quotas", Lambda
  Developer Guide), measured at 6,291,456 bytes for requests and 6,291,556 for responses (Zac Charles, "Deep Dive:
  Lambda's Request/Response Payload Size Limit", 2022). A binary body travels base64-encoded inside the event
  (a third larger), next to its headers. Past the request limit the invocation is refused before the function
  runs (RequestEntityTooLargeException, which API Gateway answers 413); past the response limit the function
  has run and its result is dropped (API Gateway answers 502, AWS's default body "Internal server error").
- Lambda Function URL, BUFFERED: the same 6 MB each way ("Invoking ... using Lambda function URLs": "The maximum
  payload size is 6 MB"); the gateway itself refuses reads of more than 4 MiB in one response
  (chalicelib/s3proxy/function_url.py, MAX_RESPONSE_BYTES) with S3's InvalidRequest.
- Lambda function timeout: each function's own, from the template (.chalice/config.json is what ``chalice
  package`` turns into each function's Timeout). A function over it is ended and its invocation fails with
  errorType ``Sandbox.Timedout`` ("Troubleshoot invocation issues in Lambda"); Step Functions then applies the
  Task's Retry and Catch to that error name (``States.Timeout`` is only a Task's own TimeoutSeconds, which the
  state machines of stepfunctions/ do not set).
- DynamoDB: an item of at most 400 KB (moto refuses larger ones itself) and a transaction of at most 100 actions
  (moto too) and 4 MB of items (moto does not: lakelet/stack/dynamodb_limits.py answers ValidationException).
- Step Functions: 256 KiB of state input or output ("Step Functions service quotas"); past it the execution
  fails with ``States.DataLimitExceeded``, which States.ALL does not catch ("Handling errors in Step Functions
  workflows").
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_PROJECT_DIR = Path(__file__).resolve().parents[2]

API_GATEWAY_BODY_BYTES = 10 * 1024 * 1024
API_GATEWAY_TIMEOUT_SECONDS = 29.0
LAMBDA_REQUEST_BYTES = 6 * 1024 * 1024
LAMBDA_RESPONSE_BYTES = 6 * 1024 * 1024 + 100
STATE_PAYLOAD_BYTES = 256 * 1024
# DynamoDB ("Amazon DynamoDB quotas"): 400 KB an item (moto enforces it), 4 MB of items a transaction (moto does
# not: lakelet/stack/dynamodb_limits.py).
DYNAMODB_TRANSACTION_BYTES = 4 * 1000 * 1000
# The API's function in the template (chalice names the REST API's handler so).
API_FUNCTION = "api_handler"
LAMBDA_TIMEOUT_ERROR = "Sandbox.Timedout"
DATA_LIMIT_ERROR = "States.DataLimitExceeded"

# What API Gateway answers (status, JSON body) in front of the API's Lambda: the deployed template replaces its
# default bodies with one that names the gateway response's type (infra/build.py, gateway_responses; a test keeps
# the two in step).
GATEWAY_RESPONSE_BODY = "refused by API Gateway: {type}"
REQUEST_TOO_LONG = (413, {"message": GATEWAY_RESPONSE_BODY.format(type="REQUEST_TOO_LARGE")})
ENDPOINT_TIMED_OUT = (504, {"message": GATEWAY_RESPONSE_BODY.format(type="INTEGRATION_TIMEOUT")})
# A Lambda that failed (its result over 6 MB, or cut by its timeout): 502, which the template's DEFAULT_5XX shapes.
INTERNAL_SERVER_ERROR = (502, {"message": GATEWAY_RESPONSE_BODY.format(type="DEFAULT_5XX")})
# What a Function URL answers in front of the gateway's Lambda: Lambda's own errors, as JSON.
URL_REQUEST_TOO_LARGE = (
    413,
    {
        "Type": "User",
        "Message": f"Request must be smaller than {LAMBDA_REQUEST_BYTES} bytes for the InvokeFunction operation",
    },
)
URL_RESPONSE_TOO_LARGE = (
    502,
    {
        "Type": "User",
        "Message": f"Response payload size exceeded maximum allowed payload size ({LAMBDA_RESPONSE_BYTES} bytes).",
    },
)


def function_timeouts(project_dir: Path = _PROJECT_DIR, stage: str = "dev") -> dict[str, float]:
    """Each Lambda function's deployed timeout in seconds, resolved as ``chalice package`` resolves it (the
    function's own setting in the stage, else the stage's, else the file's), for every function app.py defines.
    Read from the file when called, so a change to the template counts without a change here."""
    from chalice.config import Config

    from chalicelib.workflows import tasks

    config_file = project_dir / ".chalice" / "config.json"
    from_disk: dict[str, Any] = json.loads(config_file.read_text()) if config_file.is_file() else {}
    names = {API_FUNCTION, "s3_gateway", *tasks.HANDLERS}
    timeouts: dict[str, float] = {}
    for name in sorted(names):
        timeout = Config(chalice_stage=stage, function_name=name, config_from_disk=from_disk).lambda_timeout
        if timeout is not None:
            timeouts[name] = float(timeout)
    return timeouts


@dataclass(frozen=True, slots=True)
class AwsLimits:
    """The limits one local stack enforces. ``deployed()`` gives AWS's; tests shrink the times (a 29 s wait has
    no place in a test) and keep the sizes."""

    api_body_bytes: int = API_GATEWAY_BODY_BYTES
    integration_timeout_s: float = API_GATEWAY_TIMEOUT_SECONDS
    lambda_request_bytes: int = LAMBDA_REQUEST_BYTES
    lambda_response_bytes: int = LAMBDA_RESPONSE_BYTES
    state_payload_bytes: int = STATE_PAYLOAD_BYTES
    # Function name -> its Lambda timeout (s); a function not named here is not cut.
    timeouts: Mapping[str, float] = field(default_factory=dict)

    @classmethod
    def deployed(cls, project_dir: Path = _PROJECT_DIR) -> AwsLimits:
        return cls(timeouts=function_timeouts(project_dir))

    def timeout(self, function: str) -> float | None:
        return self.timeouts.get(function)

    def summary(self) -> str:
        """One line for the banner."""
        tasks = {t for n, t in self.timeouts.items() if n not in (API_FUNCTION, "s3_gateway")}
        task_text = f", workflow tasks cut at {'/'.join(f'{t:g}' for t in sorted(tasks))} s" if tasks else ""
        return (
            f"AWS limits on: API body {self.api_body_bytes:,} B, Lambda payload {self.lambda_request_bytes:,} B in / "
            f"{self.lambda_response_bytes:,} B out, API timeout {self.integration_timeout_s:g} s, state payload "
            f"{self.state_payload_bytes:,} B{task_text}"
        )
