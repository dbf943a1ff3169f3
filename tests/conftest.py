"""Settings for the whole suite: no test may reach real AWS with a developer's own credentials.

moto accepts any key pair, so fixed fake ones are set before any test builds a boto3 or PynamoDB client: the
local stack's default pair, which the e2e stack's moto requires (lakelet/stack/moto_guard.py), so that a Spark session
started by any test of the process (its workers keep the environment they started with) can sign for it.
"""

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from lakelet.defaults import DEFAULT_ACCESS_KEY_ID, DEFAULT_SECRET_ACCESS_KEY

os.environ["AWS_ACCESS_KEY_ID"] = DEFAULT_ACCESS_KEY_ID
os.environ["AWS_SECRET_ACCESS_KEY"] = DEFAULT_SECRET_ACCESS_KEY
for _name in ("AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN", "AWS_PROFILE"):
    os.environ.pop(_name, None)


@pytest.fixture(autouse=True)
def _forget_boto3_default_session() -> Iterator[None]:
    """boto3's default session keeps the credentials it first resolved. A test that makes a default client while
    other keys are in the environment (moto's mock_aws sets its own while active) would leave it signing every
    later default client with those keys, which the e2e stack's moto refuses: each test starts without one."""
    yield
    boto3 = sys.modules.get("boto3")
    if boto3 is not None:
        boto3.DEFAULT_SESSION = None


def _own_storage_configurations() -> None:
    """The lakefs package keeps every server's storage configurations in one class-level dict
    (``lakefs.client.ServerConfiguration._storage_conf``), so the last Client of the process to read /config decides
    what every other Client's ``storage_config`` answers: a test that reads another server's /config (another
    bucket) made later tests of that worker create repositories outside their own stack's bucket. Each instance gets
    its own dict here, as each Client has its own server."""
    try:
        from lakefs.client import ServerConfiguration
    except ImportError:  # the fast tier's install may leave the official client out
        return
    read_config = ServerConfiguration.__init__

    def own_dict(self: ServerConfiguration, client: object) -> None:
        self._storage_conf = {}
        read_config(self, client)  # type: ignore[arg-type]

    ServerConfiguration.__init__ = own_dict  # type: ignore[method-assign]


def pytest_configure(config: pytest.Config) -> None:
    _own_storage_configurations()


# Test tiers (markers registered in pyproject.toml). `make test-fast` leaves out every tier below; `make test`
# runs them all. A folder that is one tier is marked here by its path; a test that needs a slow resource through
# a fixture is marked by that fixture; anything else carries its marker in its own module.
_TESTS_DIR = Path(__file__).resolve().parent
_FOLDER_TIERS: dict[str, tuple[str, ...]] = {
    "e2e": ("e2e",),  # the embedded stack on a port, driven by the official clients, boto3 and the aws cli
    "ui": ("browser", "e2e"),  # Chromium driving the web UI served by the embedded stack
    "spark": ("spark", "e2e"),  # Spark (jars of make spark-jars) against the embedded stack
    "iceberg": ("e2e",),  # pyiceberg against the embedded stack's catalog and S3 gateway
}
_FIXTURE_TIERS: dict[str, str] = {
    "spark": "spark",  # tests/gc: a local Spark session (a JVM)
    "package": "package",  # tests/infra: `make package` (chalice package, cfn-lint)
    "cli_stack": "e2e",  # tests/cli: the lakelet command against one embedded stack
    "security_stack": "e2e",  # tests/security: the attacks that need a running stack
}


def _uses_moto(module: object) -> bool:
    """A test module that imports from moto runs AWS adapters or state machines against it (tier "aws")."""
    return any(
        str(getattr(value, "__module__", None) or getattr(value, "__name__", "")).split(".")[0] == "moto"
        for value in vars(module).values()
    )


def tiers_of(item: pytest.Item) -> set[str]:
    """The tiers a collected test belongs to, from its folder, its fixtures and its parameters."""
    tiers: set[str] = set()
    tiers.update(_FOLDER_TIERS.get(_folder(item), ()))
    tiers.update(tier for name, tier in _FIXTURE_TIERS.items() if name in getattr(item, "fixturenames", ()))
    # The contract suites run each test against the in-memory twin and, as variant "aws", the moto-backed adapter:
    # only the latter is tier "aws", even where the module imports moto for it.
    callspec = getattr(item, "callspec", None)
    variant = callspec.params.get("variant") if callspec is not None else None
    module = getattr(item, "module", None)
    if variant == "aws" or (variant is None and module is not None and _uses_moto(module)):
        tiers.add("aws")
    return tiers


# make test runs on pytest-xdist workers (--dist loadfile): a unit of work goes whole to one worker, in collection
# order as workers free up. A unit is a test file, except where files share something one process holds:
# - the in-process Spark session (tests/gc/support.shared_spark, the Spark tier's sessions, the e2e GC run): its
#   Python workers keep the environment the session started with, and a session one file stops is gone for the
#   next, so these files run on one worker in the order a serial run gives them;
# - tests/infra: one `make package` (its fixture also builds once per run under a lock, whatever the scheduling).
_SHARED_UNITS: tuple[tuple[str, str], ...] = (
    ("tests/e2e/test_gc_local.py", "spark-session"),
    ("tests/gc/", "spark-session"),
    ("tests/iceberg/test_gc.py", "spark-session"),
    ("tests/spark/", "spark-session"),
    ("tests/infra/", "infra"),
)
# The longest units first, so that no worker is left alone with one at the end; a unit keeps its tests' order.
# tests/lakelet last: its tests install the local stack's moto patches inside the test process, and the serial
# order only ever ran the later folders after them (tests/infra's moto stack, run after them, once lost its state
# machines).
_SLOW_UNITS_FIRST = ("spark-session", "infra", "tests/e2e/", "tests/bench/", "tests/cli/")
_LAST_UNITS = ("tests/lakelet/",)


def xdist_unit(nodeid: str) -> str:
    """The unit of work a test belongs to under make test's scheduling (above)."""
    path = nodeid.split("::", 1)[0]
    return next((unit for prefix, unit in _SHARED_UNITS if path.startswith(prefix)), path)


def _unit_rank(nodeid: str) -> int:
    unit = xdist_unit(nodeid)
    if unit.startswith(_LAST_UNITS):
        return len(_SLOW_UNITS_FIRST) + 1
    return next((at for at, slow in enumerate(_SLOW_UNITS_FIRST) if unit.startswith(slow)), len(_SLOW_UNITS_FIRST))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class SharedUnits(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return xdist_unit(nodeid)

    return SharedUnits(config, log)  # type: ignore[arg-type]


def _folder(item: pytest.Item) -> str:
    try:
        return Path(str(item.path)).resolve().relative_to(_TESTS_DIR).parts[0]
    except ValueError:
        return ""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        for tier in sorted(tiers_of(item) - {mark.name for mark in item.iter_markers()}):
            item.add_marker(tier)
    if hasattr(config, "workerinput"):  # an xdist worker: every worker collects, and all sort alike
        items.sort(key=lambda item: _unit_rank(item.nodeid))
