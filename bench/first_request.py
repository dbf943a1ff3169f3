"""The first request of each Lambda function in a fresh interpreter, against the local stack (issue 35, item 5):
what a cold start costs besides the bundle's import (bench/bundle.py measures that part alone, from the bundle).

A local stack runs in this process (ephemeral: moto, the API, the gateway). For each function a new interpreter
starts with the environment the stack gives the app (moto's endpoint and keys, table names, bucket, state
machines), imports ``app`` from the source tree (compiled .pyc, as a warm disk cache has them) and calls the
function's handler once with the event its trigger would send: API Gateway's proxy event for GET of a branch
(api_handler), a SigV4-signed Function URL event for a GET of an object (s3_gateway), Step Functions' input for
a commit's seal (commit_seal). Printed per function: the import, the first call, their sum (median of
``repeats`` fresh interpreters), and the second call in the same interpreter (warm) beside them.

    python bench/first_request.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import statistics
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

PROJECT = Path(__file__).resolve().parents[1]
REPO = "firstreq"
_CHILD = """
import json, sys, time
wall, cpu = time.perf_counter(), time.process_time()
sys.path.insert(0, {project!r})
import app
imported, imported_cpu = time.perf_counter() - wall, time.process_time() - cpu

class Context:
    function_name = {function!r}
    function_version = "$LATEST"
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:" + {function!r}
    memory_limit_in_mb = 1024
    aws_request_id = "bench-first-request"
    log_group_name = log_stream_name = "bench"
    def get_remaining_time_in_millis(self):
        return 30000

handler = app.app if {function!r} == "api_handler" else getattr(app, {function!r})
event = json.loads({event!r})
start, start_cpu = time.perf_counter(), time.process_time()
answer = handler(event, Context())
first, first_cpu = time.perf_counter() - start, time.process_time() - start_cpu
start = time.perf_counter()
handler(json.loads({event!r}), Context())
second = time.perf_counter() - start
status = answer.get("statusCode", "ok") if isinstance(answer, dict) else "ok"
print(json.dumps({{"import": imported, "import_cpu": imported_cpu, "first": first, "first_cpu": first_cpu,
                  "second": second, "status": status}}))
"""


def _api_event(stack: Any) -> dict[str, Any]:
    keys = stack.credentials
    token = base64.b64encode(f"{keys.access_key_id}:{keys.secret_access_key}".encode()).decode()
    path = f"/api/v1/repositories/{REPO}/branches/main"
    headers = {"authorization": f"Basic {token}", "accept": "application/json", "host": "bench"}
    return {
        "resource": "/api/v1/repositories/{repository}/branches/{branch}",
        "path": path,
        "httpMethod": "GET",
        "headers": headers,
        "multiValueHeaders": {k: [v] for k, v in headers.items()},
        "queryStringParameters": None,
        "multiValueQueryStringParameters": None,
        "pathParameters": {"repository": REPO, "branch": "main"},
        "stageVariables": None,
        "requestContext": {
            "resourcePath": "/api/v1/repositories/{repository}/branches/{branch}",
            "httpMethod": "GET",
            "path": path,
            "identity": {"sourceIp": "127.0.0.1"},
            "requestId": "bench",
        },
        "body": None,
        "isBase64Encoded": False,
    }


def _gateway_event(stack: Any) -> dict[str, Any]:
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    keys = stack.credentials
    url = f"{stack.s3_url}/{REPO}/main/data/one.txt"
    request = AWSRequest(method="GET", url=url, headers={"x-amz-content-sha256": "UNSIGNED-PAYLOAD"})
    SigV4Auth(Credentials(keys.access_key_id, keys.secret_access_key), "s3", stack.region).add_auth(request)
    host = url.split("/")[2]
    return {
        "version": "2.0",
        "rawPath": f"/{REPO}/main/data/one.txt",
        "rawQueryString": "",
        "headers": {"host": host, **{k.lower(): v for k, v in request.headers.items()}},
        "requestContext": {"http": {"method": "GET", "sourceIp": "127.0.0.1"}},
        "body": "",
        "isBase64Encoded": False,
    }


def _seal_event(run: int) -> dict[str, Any]:
    return {
        "request": {
            "repository": REPO,
            "branch": "main",
            "request_id": f"bench-seal-{run}",
            "committer": "admin",
            "message": "first request",
            "date": 1_700_000_000,
            "metadata": {},
        }
    }


def _upload(stack: Any, path: str, data: bytes) -> None:
    keys = stack.credentials
    token = base64.b64encode(f"{keys.access_key_id}:{keys.secret_access_key}".encode()).decode()
    request = urllib.request.Request(
        f"{stack.api_url}/repositories/{REPO}/branches/main/objects?path={path}", data=data, method="POST"
    )
    request.add_header("Authorization", f"Basic {token}")
    request.add_header("Content-Type", "application/octet-stream")
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(request, timeout=60) as answer:
        answer.read()


def _child(function: str, event: dict[str, Any]) -> dict[str, Any]:
    code = _CHILD.format(project=str(PROJECT), function=function, event=json.dumps(event))
    done = subprocess.run(
        [sys.executable, "-c", code], env=dict(os.environ), capture_output=True, text=True, check=False, timeout=300
    )
    if done.returncode != 0:
        raise RuntimeError(f"{function}'s first request failed:\n{done.stderr[-3000:]}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def measure(repeats: int = 3) -> dict[str, dict[str, Any]]:
    """Per function: medians of the import, the first call and their sum, and the warm second call (seconds)."""
    sys.path.insert(0, str(PROJECT))
    from chalicelib.wiring import get_services
    from lakelet.stack.app_environment import Credentials
    from lakelet.stack.local import LocalStack

    keys = Credentials("AKIAIOSFODNN7FIRSTRQ1", "first-request-secret")
    results: dict[str, dict[str, Any]] = {}
    with LocalStack(api_port=0, credentials=keys) as stack:
        get_services().engine.repositories.create_repository(REPO, f"{stack.default_namespace_prefix}/{REPO}")
        _upload(stack, "data/one.txt", b"one")
        events = {"api_handler": lambda run: _api_event(stack), "s3_gateway": lambda run: _gateway_event(stack)}
        events["commit_seal"] = _seal_event
        for function, event_for in events.items():
            runs = []
            for run in range(repeats):
                if function == "commit_seal":
                    _upload(stack, f"data/staged-{run}.txt", b"x")  # something to seal, each time
                runs.append(_child(function, event_for(run)))
            results[function] = {
                key: statistics.median(r[key] for r in runs)
                for key in ("import", "import_cpu", "first", "first_cpu", "second")
            }
            results[function]["total"] = statistics.median(r["import"] + r["first"] for r in runs)
            results[function]["total_cpu"] = statistics.median(r["import_cpu"] + r["first_cpu"] for r in runs)
            results[function]["status"] = runs[-1]["status"]
            results[function]["runs"] = repeats
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    results = measure(args.repeats)
    print(f"{'function':<14} {'import s':>9} {'1st call s':>11} {'total s':>8} {'CPU s':>6} {'2nd call s':>11}  answer")
    for function, r in results.items():
        print(
            f"{function:<14} {r['import']:>9.2f} {r['first']:>11.2f} {r['total']:>8.2f} {r['total_cpu']:>6.2f} "
            f"{r['second']:>11.3f}  {r['status']}"
        )
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
