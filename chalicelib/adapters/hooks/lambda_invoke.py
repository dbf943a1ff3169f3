"""Lambda hooks: a synchronous invoke (RequestResponse) of ``function_name`` (a name or an ARN, with an optional
``qualifier``) with the event's JSON. The answer decides as a webhook's status does: a function error fails the
hook, and so does an answer whose ``statusCode`` is not 2xx (the shape of a Lambda behind API Gateway, so one
function can serve both); any other answer passes.

Only functions in the configured set may be invoked (IAM grants lambda:InvokeFunction on that set and nothing
else, infra/): a hook naming another one fails without a call.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError, ReadTimeoutError

from chalicelib.graveler.actions import HookOutcome, HookSpec

MAX_OUTPUT_BYTES = 64 * 1024


def function_key(name_or_arn: str) -> str:
    """The function's name, from a name, a partial ARN or a full ARN (a qualifier after it dropped)."""
    parts = name_or_arn.split(":")
    if "function" in parts:
        return parts[parts.index("function") + 1]
    return parts[0]


class LambdaHooks:
    def __init__(
        self, allowed: Iterable[str], region: str, endpoint_url: str | None = None, session: Any = None
    ) -> None:
        self.allowed = frozenset(function_key(a) for a in allowed if a)
        self.region = region
        self.endpoint_url = endpoint_url
        self._session = session
        self._clients: dict[int, Any] = {}

    def _client(self, timeout_seconds: float) -> Any:
        # The read timeout bounds the wait for a synchronous invoke; one client per whole second of timeout.
        seconds = max(1, int(timeout_seconds + 0.999))
        if seconds not in self._clients:
            import boto3

            session = self._session or boto3.session.Session()
            config = Config(read_timeout=seconds, connect_timeout=min(5, seconds), retries={"max_attempts": 0})
            self._clients[seconds] = session.client(
                "lambda", region_name=self.region, endpoint_url=self.endpoint_url, config=config
            )
        return self._clients[seconds]

    def invoke(self, hook: HookSpec, payload: bytes, timeout_seconds: float) -> HookOutcome:
        name = str(hook.properties["function_name"])
        if function_key(name) not in self.allowed:
            return HookOutcome(
                False,
                f"function {name} is not among the functions hooks may invoke\n",
                f"lambda function {name} is not allowed (the deployment's HookFunctions)",
            )
        args: dict[str, Any] = {"FunctionName": name, "InvocationType": "RequestResponse", "Payload": payload}
        if hook.properties.get("qualifier"):
            args["Qualifier"] = str(hook.properties["qualifier"])
        request = f"Request:\nInvoke {name}\n{payload.decode('utf-8')}\n\n"
        try:
            answer = self._client(timeout_seconds).invoke(**args)
        except ReadTimeoutError:
            return HookOutcome(
                False,
                request + f"Response:\nno answer within {timeout_seconds:g}s\n",
                f"lambda invoke failed: timed out after {timeout_seconds:g}s",
            )
        except ClientError as e:
            code = e.response.get("Error", {}).get("Code", "error")
            return HookOutcome(False, request + f"Response:\n{code}: {e}\n", f"lambda invoke failed ({code})")
        except BotoCoreError as e:
            return HookOutcome(
                False, request + f"Response:\n{type(e).__name__}: {e}\n", f"lambda invoke failed: {type(e).__name__}"
            )
        body = answer["Payload"].read(MAX_OUTPUT_BYTES).decode("utf-8", errors="replace")
        output = request + f"Response:\n{answer.get('StatusCode')}\n{body}\n"
        if answer.get("FunctionError"):
            return HookOutcome(False, output, f"lambda function failed ({answer['FunctionError']})")
        status = _answer_status(body)
        if status is not None and not 200 <= status < 300:
            return HookOutcome(False, output, f"lambda hook failed (status code: {status})")
        return HookOutcome(True, output)


def _answer_status(body: str) -> int | None:
    try:
        answer = json.loads(body)
    except ValueError:
        return None
    if isinstance(answer, dict) and isinstance(answer.get("statusCode"), int):
        return int(answer["statusCode"])
    return None
