"""Lambda hooks: a synchronous invoke (RequestResponse) of ``function_name`` (a name or an ARN, with an optional
``qualifier``) with the event's JSON. The answer decides as a webhook's status does: a function error fails the
hook, and so does an answer whose ``statusCode`` is not 2xx (the shape of a Lambda behind API Gateway, so one
function can serve both); any other answer passes.

Only functions in the configured set may be invoked (IAM grants lambda:InvokeFunction on that set and nothing
else, infra/): a hook naming another one fails without a call. The comparison is of whole functions: partition,
region, account, name and qualifier, as IAM compares ARNs (an unqualified ARN grants the unqualified function only,
``name:live`` grants the alias live only). A hook naming a function by its bare name means the deployment's region
and the account of the one allowed function of that name; the call then goes to that allowed ARN, never to what
Lambda would make of the name. Comparing names alone once let ``arn:aws:lambda:<other region>:<other account>:
function:check`` through because ``check`` was allowed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError, ReadTimeoutError

from chalicelib.graveler.actions import HookOutcome, HookSpec

MAX_OUTPUT_BYTES = 64 * 1024


_NAME = r"[A-Za-z0-9_-]{1,64}"
_QUALIFIER = r"(?::(?P<qualifier>\$LATEST|[A-Za-z0-9_-]{1,128}))?"
_FULL = re.compile(
    r"arn:(?P<partition>aws[a-z-]*):lambda:(?P<region>[a-z0-9-]+):(?P<account>\d{12}):function:(?P<name>"
    + _NAME
    + ")"
    + _QUALIFIER
)
_PARTIAL = re.compile(r"(?P<account>\d{12}):function:(?P<name>" + _NAME + ")" + _QUALIFIER)
_BARE = re.compile(r"(?P<name>" + _NAME + ")" + _QUALIFIER)


@dataclass(frozen=True, slots=True)
class FunctionRef:
    """A Lambda function as IAM sees it; ``account`` empty for a bare name (the deployment's own account)."""

    partition: str
    region: str
    account: str
    name: str
    qualifier: str

    @property
    def arn(self) -> str:
        """The ARN to invoke (a bare name when no account is known: the deployment's own)."""
        if not self.account:
            return self.name + (f":{self.qualifier}" if self.qualifier else "")
        arn = f"arn:{self.partition}:lambda:{self.region}:{self.account}:function:{self.name}"
        return arn + (f":{self.qualifier}" if self.qualifier else "")


def parse_function(text: str, region: str, qualifier: str = "") -> FunctionRef:
    """A full ARN, a partial one (account:function:name) or a bare name, each with an optional qualifier (in the
    text or given apart; both and different is an error). Raises ValueError."""
    text = text.strip()
    for pattern in (_FULL, _PARTIAL, _BARE):
        m = pattern.fullmatch(text)
        if m is None:
            continue
        found = m.groupdict()
        inline = found.get("qualifier") or ""
        if inline and qualifier and inline != qualifier:
            raise ValueError(f"{text} names qualifier {inline}, the hook's qualifier is {qualifier}")
        return FunctionRef(
            found.get("partition") or "aws",
            found.get("region") or region,
            found.get("account") or "",
            found["name"],
            inline or qualifier,
        )
    raise ValueError(f"{text!r} is not a Lambda function name or ARN")


class LambdaHooks:
    def __init__(
        self, allowed: Iterable[str], region: str, endpoint_url: str | None = None, session: Any = None
    ) -> None:
        self.region = region
        self.allowed = tuple(parse_function(a, region) for a in allowed if a.strip())
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

    def allowed_function(self, name: str, qualifier: str = "") -> FunctionRef | None:
        """The allowed function the hook names, or None: a full or partial ARN must equal an allowed one whole;
        a bare name must be the name of exactly one allowed function in the deployment's region."""
        try:
            wanted = parse_function(name, self.region, qualifier)
        except ValueError:
            return None
        if wanted.account:
            return wanted if wanted in self.allowed else None
        same = [
            a for a in self.allowed if (a.region, a.name, a.qualifier) == (wanted.region, wanted.name, wanted.qualifier)
        ]
        return same[0] if len(same) == 1 else None

    def invoke(self, hook: HookSpec, payload: bytes, timeout_seconds: float) -> HookOutcome:
        name = str(hook.properties["function_name"])
        target = self.allowed_function(name, str(hook.properties.get("qualifier") or ""))
        if target is None:
            return HookOutcome(
                False,
                f"function {name} is not among the functions hooks may invoke\n",
                f"lambda function {name} is not allowed (the deployment's HookFunctions, compared as whole ARNs)",
            )
        args: dict[str, Any] = {"FunctionName": target.arn, "InvocationType": "RequestResponse", "Payload": payload}
        request = f"Request:\nInvoke {target.arn}\n{payload.decode('utf-8')}\n\n"
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
