"""One embedded local stack (tests/e2e's launcher) for the Spark tier; each module starts its own Spark session."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest
from lakefs.client import Client

from tests.e2e.conftest import LocalProcess, launch_local


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="session")
def spark_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalProcess]:
    # A data directory of its own (not --ephemeral): its state file names the key pair the stack's moto trusts,
    # which the tests that stage straight into moto need.
    # Without --aws-limits: S3A's parts are 5 MiB at least, more than a deployed gateway's Lambda payload carries
    # (docs/spark.md, "Which path to use deployed"); this tier is Spark against the local stack.
    # The S3 gateway on a port chosen here, not by the stack: as with `lakelet up`'s fixed default and deployed, the
    # Iceberg catalog then names the gateway in each table's config (s3.endpoint), which the engines must cope with
    # (DuckDB's default access delegation builds a secret without keys from it: tests/spark/test_iceberg.py).
    local = launch_local(tmp_path_factory.mktemp("spark-stack"), "--no-aws-limits", "--s3-port", str(_free_port()))
    try:
        yield local
    finally:
        code = local.stop()
    assert code == 0, f"lakelet up exited with {code}:\n{local.stderr_tail()}"


@pytest.fixture(scope="session")
def limited_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalProcess]:
    """A stack under --aws-limits (launch_local's default): API Gateway's and Lambda's payload limits enforced, as
    deployed. The lakefs:// tier runs against it; only the modules that use it start it."""
    local = launch_local(tmp_path_factory.mktemp("limited-stack"))
    assert "AWS limits on" in local.banner, local.banner
    try:
        yield local
    finally:
        code = local.stop()
    assert code == 0, f"lakelet up exited with {code}:\n{local.stderr_tail()}"


@pytest.fixture(scope="session")
def lakefs_client(spark_stack: LocalProcess) -> Client:
    return Client(host=spark_stack.endpoint, username=spark_stack.access_key_id, password=spark_stack.secret_access_key)


_spent: dict[str, float] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Adds up setup, call and teardown of this folder's tests: the tier's wall time (they run one after another)."""
    if "tests/spark/" in report.nodeid.replace("\\", "/") or report.nodeid.startswith("spark/"):
        _spent[report.when] = _spent.get(report.when, 0.0) + report.duration
        if report.when == "call":
            _spent["tests"] = _spent.get("tests", 0.0) + 1


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if _spent:
        total = sum(value for key, value in _spent.items() if key != "tests")
        terminalreporter.write_line(
            f"Spark tier (tests/spark): {int(_spent.get('tests', 0))} tests, {total:.0f} s wall"
        )
