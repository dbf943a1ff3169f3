"""Runs the workflows of stepfunctions/ on moto's Step Functions interpreter, locally.

moto executes state machines when its config says ``{"stepfunctions": {"execute_state_machine": True}}``; with
``{"lambda": {"use_docker": False}}`` its Lambda backend is the "simple" one, whose invoke this module routes to
the app's in-process handlers (by function name or ARN). An exception becomes a Lambda function error whose
errorType is the exception's class name, as the Python runtime reports it, so Retry and Catch see the same
error names as in AWS. This relies on moto internals: moto is pinned exactly (requirements-dev.txt).

The definitions are the files that deploy: ``${<function>}`` placeholders become the local function ARNs.

moto's interpreter calls Lambda (and S3, for a Distributed Map) back over HTTP on moto's port with a fixed fake
key pair; the stack's moto takes only the stack's key (lakelet/stack/moto_guard.py), so while the workflows run here
those clients are built with the key pair of the environment the stack set.
"""

from __future__ import annotations

import copy
import json
import re
import threading
import traceback
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from lakelet.stack.asl_checks import check_definition
from lakelet.stack.aws_limits import AwsLimits
from lakelet.stack.moto_guard import signed_headers
from lakelet.stack.workflow_limits import install_terminal_errors, invoke_with_timeout

Handler = Callable[[dict[str, Any]], Any]

STATE_MACHINES = Path(__file__).resolve().parents[2] / "stepfunctions"
ACCOUNT = "123456789012"
_PLACEHOLDER = re.compile(r"\$\{([^}!][^}]*)\}")
# moto's default config keys for executing state machines and Lambda without Docker.
MOTO_CONFIG: dict[str, Any] = {"stepfunctions": {"execute_state_machine": True}, "lambda": {"use_docker": False}}

_lock = threading.Lock()
_routes: dict[str, Handler] = {}
_process_state: dict[str, Any] = {}
# Set while a stack with --aws-limits runs: each task is cut at its function's deployed timeout.
_limits: AwsLimits | None = None


def function_arn(name: str, region: str, account: str = ACCOUNT) -> str:
    return f"arn:aws:lambda:{region}:{account}:function:{name}"


def local_definition(text: str, region: str, account: str = ACCOUNT) -> str:
    """The ASL text with each ``${function}`` placeholder replaced by that function's local ARN, once
    check_definition has accepted it."""
    checked = json.dumps(check_definition(json.loads(text)), indent=2)
    return _PLACEHOLDER.sub(lambda m: function_arn(m.group(1), region, account), checked)


def _invoke(
    self: Any, function_name: str, qualifier: str | None, body: Any, headers: Any, response_headers: Any
) -> bytes:
    name = function_name.rsplit(":function:", 1)[-1].split(":", 1)[0]
    handler = _routes.get(name)
    if handler is None:
        response_headers["x-amz-function-error"] = "Unhandled"
        return json.dumps({"errorType": "ResourceNotFoundException", "errorMessage": f"no handler {name}"}).encode()
    event = json.loads(body) if body else {}
    limits = _limits
    timeout = limits.timeout(name) if limits is not None else None
    if timeout is not None:
        return invoke_with_timeout(name, handler, event, timeout, response_headers)
    try:
        result = handler(event)
    except Exception as e:  # noqa: BLE001 - the Lambda runtime turns any exception into a function error
        response_headers["x-amz-function-error"] = "Unhandled"
        return json.dumps(
            {
                "errorType": type(e).__name__,
                "errorMessage": str(e),
                "stackTrace": traceback.format_exception(e)[-3:],
            }
        ).encode()
    return json.dumps(result).encode()


@contextmanager
def route_item_reads(read: Callable[[str, str], bytes]) -> Iterator[None]:
    """While active, a Map's ItemReader (s3:getObject) reads ``read(bucket, key)`` instead of moto's S3: for tests
    whose tasks write to an in-memory block store rather than to moto. The local stack needs none of this (its
    block store is moto's S3)."""
    from moto.stepfunctions.parser.asl.component.state.exec.state_map.item_reader.eval.resource_eval_s3 import (
        ResourceEvalS3,
    )

    def get_object(env: Any, runtime_part: Any, credentials: Any) -> None:
        parameters = env.stack.pop()
        env.stack.append(read(str(parameters["Bucket"]), str(parameters["Key"])).decode())

    with _lock:
        original = ResourceEvalS3.__dict__["_handle_get_object"]
        ResourceEvalS3._handle_get_object = staticmethod(get_object)  # type: ignore[method-assign,assignment]
    try:
        yield
    finally:
        with _lock:
            ResourceEvalS3._handle_get_object = original  # type: ignore[method-assign]


@contextmanager
def route_lambda_invokes(handlers: Mapping[str, Handler]) -> Iterator[None]:
    """While active, moto's simple Lambda backend runs ``handlers[function name](event)`` on invoke."""
    from moto.awslambda_simple.models import LambdaSimpleBackend

    with _lock:
        original = LambdaSimpleBackend.invoke
        # Nested routings (a test inside a process that runs the local stack) restore what they replaced.
        replaced = {name: _routes.get(name) for name in handlers}
        _routes.update(handlers)
        LambdaSimpleBackend.invoke = _invoke  # type: ignore[method-assign]
    try:
        yield
    finally:
        with _lock:
            LambdaSimpleBackend.invoke = original  # type: ignore[method-assign]
            for name, previous in replaced.items():
                if previous is None:
                    _routes.pop(name, None)
                else:
                    _routes[name] = previous


TOLERANCE_EXCEEDED = "States.ExceedToleratedFailureThreshold"


def _install_map_failures() -> None:
    """moto's distributed map records a failed item and goes on, succeeding with null for its output. With the
    tolerances of 0 check_definition allows, AWS fails the map run instead, with
    States.ExceedToleratedFailureThreshold: so does this (once per process; moto is pinned exactly)."""
    from moto.stepfunctions.parser.api import ExecutionFailedEventDetails, HistoryEventType
    from moto.stepfunctions.parser.asl.component.common.error_name.failure_event import (
        FailureEvent,
        FailureEventException,
    )
    from moto.stepfunctions.parser.asl.component.common.error_name.states_error_name import StatesErrorName
    from moto.stepfunctions.parser.asl.component.common.error_name.states_error_name_type import (
        StatesErrorNameType,
    )
    from moto.stepfunctions.parser.asl.component.state.exec.state_map.iteration.itemprocessor import (
        distributed_item_processor_worker as worker,
    )
    from moto.stepfunctions.parser.asl.eval.event.event_detail import EventDetails
    from moto.stepfunctions.parser.asl.eval.program_state import ProgramEnded

    cls = worker.DistributedItemProcessorWorker
    if getattr(cls._eval_job, "_lakelet", False):
        return
    original = cls._eval_job

    def eval_job(self: Any, env: Any, job: Any) -> None:
        original(self, env, job)
        state = env.program_state()
        if isinstance(state, ProgramEnded):
            return
        error = getattr(state, "error", None) or {}
        cause = (
            f"item {job.job_index} failed ({error.get('error') or 'no error name'}: {error.get('cause') or ''}); "
            "the map tolerates no failed item"
        )
        job.job_output = FailureEventException(
            FailureEvent(
                env=env,
                error_name=StatesErrorName(typ=StatesErrorNameType.StatesExceedToleratedFailureThreshold),
                event_type=HistoryEventType.MapRunFailed,
                # moto declares all of its ~35 detail keys required; an event carries one, as moto's own do.
                event_details=EventDetails(  # type: ignore[typeddict-item]
                    executionFailedEventDetails=ExecutionFailedEventDetails(error=TOLERANCE_EXCEEDED, cause=cause)
                ),
            )
        )

    eval_job._lakelet = True  # type: ignore[attr-defined]
    cls._eval_job = eval_job  # type: ignore[method-assign]


def create_state_machines(
    sfn: Any, region: str, directory: Path = STATE_MACHINES, prefix: str = "lakelet-local-", account: str = ACCOUNT
) -> dict[str, str]:
    """Creates (or updates) one state machine per ``*.asl.json``; {file name stem: ARN}."""
    _install_map_failures()
    role = f"arn:aws:iam::{account}:role/lakelet-local-states"
    arns: dict[str, str] = {}
    existing = {m["name"]: m["stateMachineArn"] for m in sfn.list_state_machines()["stateMachines"]}
    for path in sorted(directory.glob("*.asl.json")):
        stem = path.name.removesuffix(".asl.json")
        definition = local_definition(path.read_text(), region, account)
        name = prefix + stem
        if name in existing:
            sfn.update_state_machine(stateMachineArn=existing[name], definition=definition, roleArn=role)
            arns[stem] = existing[name]
        else:
            arns[stem] = sfn.create_state_machine(name=name, definition=definition, roleArn=role)["stateMachineArn"]
    return arns


def start_local_workflows(
    moto_url: str,
    region: str,
    environ: dict[str, str] | Any,
    saved: dict[str, str | None] | None = None,
    limits: AwsLimits | None = None,
) -> dict[str, str]:
    """For the embedded stack's moto server (in this process): turns on executing state machines, creates them
    from stepfunctions/, routes their Lambda tasks to the app's handlers until stop_local_workflows, and sets
    the variables the settings read (``saved`` records their earlier values, for the stack to restore). With
    ``limits``, each task is cut at its function's timeout and the 256 KiB state limit is terminal, as on AWS."""
    global _limits
    import boto3
    import requests
    from moto.core.config import default_user_config

    from chalicelib.workflows import tasks

    with _lock:
        if not _process_state:
            # moto's config is process-wide: remember it, so that stopping the stack gives it back.
            _process_state["config"] = copy.deepcopy({k: default_user_config.get(k) for k in MOTO_CONFIG})
            _process_state["routes"] = {name: _routes.get(name) for name in tasks.HANDLERS}
            _process_state["invoke"] = _install_invoke()
            _process_state["boto3"] = _install_keys(environ)
            _routes.update(tasks.HANDLERS)
            if limits is not None:
                _limits = limits
                _process_state["error_equals"] = install_terminal_errors()
    body = json.dumps(MOTO_CONFIG).encode()
    url = f"{moto_url}/moto-api/config"
    headers = signed_headers("POST", url, body, environ["AWS_ACCESS_KEY_ID"], environ["AWS_SECRET_ACCESS_KEY"], region)
    requests.post(
        url, data=body, headers={**headers, "Content-Type": "application/json"}, timeout=10
    ).raise_for_status()
    sfn = boto3.client("stepfunctions", region_name=region, endpoint_url=moto_url)
    arns = create_state_machines(sfn, region)
    # moto's interpreter calls Lambda back on localhost:$MOTO_PORT. Each ARN goes where infra/ puts it.
    values = {"MOTO_PORT": moto_url.rsplit(":", 1)[-1]}
    values.update({f"LAKELET_{name.upper().replace('-', '_')}_STATE_MACHINE_ARN": arn for name, arn in arns.items()})
    for name, value in values.items():
        if saved is not None:
            saved.setdefault(name, environ.get(name))
        environ[name] = value
    return arns


def stop_local_workflows() -> None:
    """Undoes start_local_workflows: moto's config, the routing of Lambda invokes. Harmless if not started."""
    global _limits
    from moto.awslambda_simple.models import LambdaSimpleBackend
    from moto.core.config import default_user_config

    with _lock:
        if not _process_state:
            return
        for key, value in _process_state["config"].items():
            if value is None:
                default_user_config.pop(key, None)  # type: ignore[misc]
            else:
                default_user_config[key] = value  # type: ignore[literal-required]
        for name, previous in _process_state["routes"].items():
            if previous is None:
                _routes.pop(name, None)
            else:
                _routes[name] = previous
        LambdaSimpleBackend.invoke = _process_state["invoke"]  # type: ignore[method-assign]
        from moto.stepfunctions.parser.asl.utils import boto_client

        boto_client.boto3 = _process_state["boto3"]  # type: ignore[attr-defined]
        if "error_equals" in _process_state:
            from moto.stepfunctions.parser.asl.component.common.error_name.error_equals_decl import ErrorEqualsDecl

            ErrorEqualsDecl._eval_body = _process_state["error_equals"]  # type: ignore[method-assign]
        _limits = None
        _process_state.clear()


class _Boto3WithKeys:
    """Stands in for the ``boto3`` module inside moto's interpreter: its clients sign with the given key pair
    instead of moto's fixed fake one."""

    def __init__(self, access_key_id: str, secret_access_key: str) -> None:
        self._keys = {"aws_access_key_id": access_key_id, "aws_secret_access_key": secret_access_key}

    def client(self, *args: Any, **kwargs: Any) -> Any:
        import boto3

        return boto3.client(*args, **{**kwargs, **self._keys})


def _install_keys(environ: Mapping[str, str]) -> Any:
    """moto's interpreter builds its clients through the ``boto3`` global of one module: the stack's keys go
    there. Returns what it replaced."""
    from moto.stepfunctions.parser.asl.utils import boto_client

    original = boto_client.boto3  # type: ignore[attr-defined]
    boto_client.boto3 = _Boto3WithKeys(  # type: ignore[attr-defined]
        environ["AWS_ACCESS_KEY_ID"], environ["AWS_SECRET_ACCESS_KEY"]
    )
    return original


def _install_invoke() -> Any:
    """Routes the simple Lambda backend's invoke to _invoke; the method it replaced."""
    from moto.awslambda_simple.models import LambdaSimpleBackend

    original = LambdaSimpleBackend.invoke
    LambdaSimpleBackend.invoke = _invoke  # type: ignore[method-assign]
    return original
