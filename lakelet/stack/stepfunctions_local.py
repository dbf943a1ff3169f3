"""Runs the workflows of stepfunctions/ on moto's Step Functions interpreter, locally.

moto executes state machines when its config says ``{"stepfunctions": {"execute_state_machine": True}}``; with
``{"lambda": {"use_docker": False}}`` its Lambda backend is the "simple" one, whose invoke this module routes to
the app's in-process handlers (by function name or ARN). An exception becomes a Lambda function error whose
errorType is the exception's class name, as the Python runtime reports it, so Retry and Catch see the same
error names as in AWS. This relies on moto internals: moto is pinned exactly (requirements-dev.txt).

The definitions are the files that deploy: ``${<function>}`` placeholders become the local function ARNs.

moto's interpreter calls Lambda (and S3, for a Distributed Map) back over HTTP on moto's port with a fixed fake
key pair; the stack's moto takes only the stack's key (lakelet/moto_guard.py), so while the workflows run here
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

from lakelet.stack.moto_guard import signed_headers

Handler = Callable[[dict[str, Any]], Any]

STATE_MACHINES = Path(__file__).resolve().parents[2] / "stepfunctions"
ACCOUNT = "123456789012"
_PLACEHOLDER = re.compile(r"\$\{([^}!][^}]*)\}")
# moto's default config keys for executing state machines and Lambda without Docker.
MOTO_CONFIG: dict[str, Any] = {"stepfunctions": {"execute_state_machine": True}, "lambda": {"use_docker": False}}

_lock = threading.Lock()
_routes: dict[str, Handler] = {}
_process_state: dict[str, Any] = {}


def function_arn(name: str, region: str, account: str = ACCOUNT) -> str:
    return f"arn:aws:lambda:{region}:{account}:function:{name}"


def local_definition(text: str, region: str, account: str = ACCOUNT) -> str:
    """The ASL text with each ``${function}`` placeholder replaced by that function's local ARN."""
    return _PLACEHOLDER.sub(lambda m: function_arn(m.group(1), region, account), text)


def _invoke(
    self: Any, function_name: str, qualifier: str | None, body: Any, headers: Any, response_headers: Any
) -> bytes:
    name = function_name.rsplit(":function:", 1)[-1].split(":", 1)[0]
    handler = _routes.get(name)
    if handler is None:
        response_headers["x-amz-function-error"] = "Unhandled"
        return json.dumps({"errorType": "ResourceNotFoundException", "errorMessage": f"no handler {name}"}).encode()
    event = json.loads(body) if body else {}
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


def create_state_machines(
    sfn: Any, region: str, directory: Path = STATE_MACHINES, prefix: str = "lakelet-local-", account: str = ACCOUNT
) -> dict[str, str]:
    """Creates (or updates) one state machine per ``*.asl.json``; {file name stem: ARN}."""
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
    moto_url: str, region: str, environ: dict[str, str] | Any, saved: dict[str, str | None] | None = None
) -> dict[str, str]:
    """For the embedded stack's moto server (in this process): turns on executing state machines, creates them
    from stepfunctions/, routes their Lambda tasks to the app's handlers until stop_local_workflows, and sets
    the variables the settings read (``saved`` records their earlier values, for the stack to restore)."""
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
