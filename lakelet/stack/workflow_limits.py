"""The workflows' Lambda tasks under AWS's limits, for lakelet/stack/stepfunctions_local.py when the stack runs with
``--aws-limits``: each task is cut at its function's deployed timeout (lakelet/stack/aws_limits.py reads it from the
template's source) and fails as Lambda reports a timeout; a state over Step Functions' 256 KiB payload fails the
execution, past any Catch, as on AWS (moto checks the size, but its States.ALL catches the error).
"""

from __future__ import annotations

import json
import traceback
from collections.abc import Callable
from typing import Any

from lakelet.stack import lambda_clock
from lakelet.stack.aws_limits import DATA_LIMIT_ERROR, LAMBDA_TIMEOUT_ERROR

Handler = Callable[[dict[str, Any]], Any]


def invoke_with_timeout(
    name: str, handler: Handler, event: dict[str, Any], timeout: float, response_headers: Any
) -> bytes:
    """The handler under its function's timeout: past it the invocation is cut where it stands and fails as
    Lambda reports a timeout (errorType Sandbox.Timedout), which the Task's Retry and Catch then see."""
    outcome = lambda_clock.invoke(lambda: handler(event), answer_after=timeout, cut_after=timeout, name=name)
    if outcome.running or isinstance(outcome.error, lambda_clock.LambdaTimedOut):
        response_headers["x-amz-function-error"] = "Unhandled"
        return json.dumps(
            {
                "errorType": LAMBDA_TIMEOUT_ERROR,
                "errorMessage": f"RequestId: local Error: Task timed out after {timeout:.2f} seconds",
            }
        ).encode()
    if outcome.error is not None:
        error = outcome.error
        response_headers["x-amz-function-error"] = "Unhandled"
        return json.dumps(
            {
                "errorType": type(error).__name__,
                "errorMessage": str(error),
                "stackTrace": traceback.format_exception(error)[-3:],
            }
        ).encode()
    return json.dumps(outcome.value).encode()


def install_terminal_errors() -> Any:
    """AWS's States.ALL matches neither States.DataLimitExceeded nor States.Runtime (terminal errors, "Handling
    errors in Step Functions workflows"); moto's matches every error, so a state over the 256 KiB payload
    would be caught by a workflow's Catch. While the limits are on it does not. Returns what it replaced."""
    from moto.stepfunctions.parser.asl.component.common.error_name.error_equals_decl import ErrorEqualsDecl

    original = ErrorEqualsDecl._eval_body

    def eval_body(self: Any, env: Any) -> None:
        error_name = env.stack[-1] if env.stack else None
        name = getattr(error_name, "error_name", None)
        if name in (DATA_LIMIT_ERROR, "States.Runtime") and ErrorEqualsDecl._STATE_ALL_ERROR in self.error_names:
            env.stack.pop()
            env.stack.append(False)
            return
        original(self, env)

    ErrorEqualsDecl._eval_body = eval_body  # type: ignore[method-assign]
    return original
