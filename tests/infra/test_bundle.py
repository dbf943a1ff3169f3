"""The Lambda bundle ``make package`` writes: under Lambda's 250 MB unzipped limit, and complete enough that every
handler imports from it alone (as the python3.12 runtime would, with no site-packages of ours)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from infra import bytecode
from tests.infra.conftest import Package, checkout_state

LAMBDA_UNZIPPED_LIMIT_BYTES = 250 * 1024 * 1024
# Cold-start imports of every handler in app.py, and what each needs at run time.
HANDLER_IMPORTS = [
    "app",
    "chalicelib.adapters.dynamodb",
    "chalicelib.adapters.s3",
    "chalicelib.adapters.kms",
    "chalicelib.adapters.emr",
    "chalicelib.s3proxy.function_url",
    "chalicelib.gc.schedule",
    "aws_xray_sdk.core",  # Powertools' Tracer
]


def test_the_unzipped_bundle_is_under_the_lambda_limit(package: Package) -> None:
    with zipfile.ZipFile(package.bundle_path) as bundle:
        unzipped = sum(info.file_size for info in bundle.infolist())
        names = set(bundle.namelist())
        bytecode_size = sum(info.file_size for info in bundle.infolist() if info.filename.endswith(".pyc"))
    print(
        f"Lambda bundle: {package.bundle_path.stat().st_size / 1e6:.1f} MB zipped, {unzipped / 1e6:.1f} MB unzipped "
        f"({bytecode_size / 1e6:.1f} MB of it bytecode)"
    )
    assert unzipped < LAMBDA_UNZIPPED_LIMIT_BYTES
    assert "app.py" in names and "chalicelib/settings.py" in names
    # GC runs on EMR Serverless, not in Lambda; the local stack and the tests stay out of the bundle.
    assert not any(name.startswith(("pyspark/", "moto/", "lakelet/", "tests/", "infra/")) for name in names)


def test_every_module_of_the_app_ships_compiled_for_the_runtime(package: Package) -> None:
    """make package compiles the bundle (infra/bytecode.py): a cold start reads bytecode, never compiles."""
    with zipfile.ZipFile(package.bundle_path) as bundle:
        names = set(bundle.namelist())
        own = sorted(n for n in names if n.endswith(".py") and (n == "app.py" or n.startswith("chalicelib/")))
        missing = [n for n in own if bytecode.cached_name(n) not in names]
        headers = {n: bundle.read(bytecode.cached_name(n))[:8] for n in own if n not in missing}
        third_party = [n for n in names if n.endswith(".py") and n.startswith(("pynamodb/", "aws_lambda_powertools/"))]
        third_party_missing = [n for n in third_party if bytecode.cached_name(n) not in names]
    assert len(own) > 100 and not missing, missing
    for name, header in headers.items():
        assert header[:4] == importlib.util.MAGIC_NUMBER, name
        assert int.from_bytes(header[4:8], "little") == 0b01, name  # unchecked hash: never rewritten
    assert third_party and not third_party_missing, third_party_missing  # the dependencies too


def test_the_bundle_carries_the_built_web_ui(package: Package) -> None:
    """make package builds the UI first (make webui), and Chalice packages chalicelib/ with it."""
    with zipfile.ZipFile(package.bundle_path) as bundle:
        names = set(bundle.namelist())
    assert "chalicelib/webui_dist/index.html" in names
    assets = [n for n in names if n.startswith("chalicelib/webui_dist/assets/")]
    assert any(n.endswith(".js") for n in assets) and any(n.endswith(".css") for n in assets)
    assert not any("node_modules" in n or n.startswith("webui/") for n in names)


@pytest.fixture(scope="module")
def unpacked(package: Package, tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("bundle")
    with zipfile.ZipFile(package.bundle_path) as bundle:
        bundle.extractall(target)
    return target


# Run from the unpacked bundle: import every handler's modules, then answer GET /api/v1/healthcheck through
# app.app(event, context), the handler Lambda calls, and print the answer.
_INVOKE = """
import json, sys
sys.path.insert(0, sys.argv[1])
for module in sys.argv[2].split(","):
    __import__(module)
import app
class Context:
    aws_request_id = "lambda-request-1"
    function_name = "lakelet-dev-api-handler"
event = {
    "requestContext": {"httpMethod": "GET", "resourcePath": "/api/v1/healthcheck", "requestId": "apigw-request-1",
                       "path": "/dev/api/v1/healthcheck"},
    "headers": {"accept": "*/*"}, "multiValueQueryStringParameters": None, "pathParameters": None,
    "stageVariables": None, "body": None, "isBase64Encoded": False,
}
answer = app.app(event, Context())
import os
source_only = sorted(
    name for name, module in list(sys.modules.items())
    if getattr(module, "__spec__", None) is not None and module.__spec__.origin
    and module.__spec__.origin.startswith(sys.argv[1]) and module.__spec__.origin.endswith(".py")
    and not os.path.exists(module.__spec__.cached or "")
)
print(json.dumps({"answer": {"statusCode": answer["statusCode"], "headers": answer["headers"]},
                  "source_only": source_only}))
"""


def test_the_api_handler_runs_from_the_bundle_alone(unpacked: Path) -> None:
    # -S: no site-packages, so nothing outside the bundle (but the standard library) can be imported.
    result = subprocess.run(
        [sys.executable, "-S", "-c", _INVOKE, str(unpacked), ",".join(HANDLER_IMPORTS)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=unpacked,
        env={
            "AWS_DEFAULT_REGION": "us-east-1",
            "PATH": "/usr/bin:/bin",
            "LAKELET_STAGE": "dev",
            # Only the bytecode the bundle ships can be found: none is written while it runs.
            "PYTHONDONTWRITEBYTECODE": "1",
        },
    )
    hint = " (Powertools' Tracer needs aws-xray-sdk in requirements.txt)" if "aws_xray_sdk" in result.stderr else ""
    assert result.returncode == 0, result.stderr[-3000:] + hint
    lines = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]  # every line is JSON
    answer = next(line["answer"] for line in lines if "answer" in line)
    # Every module the handler imported from the bundle had its bytecode there.
    assert next(line["source_only"] for line in lines if "answer" in line) == []
    assert answer["statusCode"] == 204
    assert answer["headers"]["X-Request-Id"] == "apigw-request-1"
    (emf,) = [line for line in lines if "_aws" in line]
    assert emf["correlation_id"] == "apigw-request-1"
    assert emf["function_request_id"] == "lambda-request-1"
    assert emf["stage"] == "dev"
    assert emf["http"] == {
        "method": "GET",
        "route": "/api/v1/healthcheck",
        "path": "/dev/api/v1/healthcheck",
        "status": 204,
    }


def test_packaging_leaves_nothing_in_the_checkout(package: Package, checkout_before_packaging: dict[str, int]) -> None:
    """chalice package caches each bundle in the project's .chalice/deployments/ (74 MB a run): the fixture
    packages a copy, so the checkout's .chalice/ and build/ are as they were."""
    assert checkout_state() == checkout_before_packaging
    assert package.bundle_path.exists()
