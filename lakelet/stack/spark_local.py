"""A quiet Spark session in local mode, for ``lakelet gc run``, the GC tests and the benchmark.

Spark's start-up prints a page of noise on a terminal; each line is silenced at its source:
- log4j's "Using Spark's default log4j profile" and the NativeCodeLoader warning: the driver JVM gets our own
  log4j2 configuration (errors only, on stderr), so Spark neither falls back to its default profile nor logs
  warnings about a missing native Hadoop library, which local mode never uses;
- three lines printed straight to the JVM's stderr, not through a logger, so no level turns them off: the JVM's
  "WARNING: Using incubator modules: jdk.incubator.vector" (Spark's launcher adds that module on every start), and
  the shell's "Setting default log level to ..." with "To adjust logging level ..." (Spark treats pyspark as a
  shell): the driver JVM's stderr goes through a pipe that drops exactly those lines and passes every other one;
- pyspark's FutureWarning that it "does not yet fully support pandas >= 3.0.0": the dev dependencies pin pandas 3
  (for lakefs-spec); the GC job never converts to or from pandas, so the warning is filtered, by its message and
  for pyspark's modules only.

Spark itself is not part of the local stack's install (its sdist alone is ~317 MB, most of a first ``make run``):
it is the ``[gc]`` extra, and :func:`ensure_pyspark` installs it with pip into the running interpreter's
environment the first time ``lakelet gc run`` needs it, at the version pinned in requirements-gc.txt.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

LOCAL_HOST = "127.0.0.1"
LOCAL_SPARK_MASTER = "local[2]"
DISTRIBUTION = "lakelet"
GC_REQUIREMENTS = "requirements-gc.txt"
# The checkout this module runs from, when it runs from one (an editable install, or PYTHONPATH): its pin file is
# the truth even when the installed metadata is older. In a wheel install this is site-packages, with no such file.
_CHECKOUT = Path(__file__).resolve().parents[2]
# "pyspark==3.5.9" in requirements-gc.txt, or "pyspark==3.5.9; extra == \"gc\"" in the package's metadata.
_PIN = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*\s*==\s*[0-9A-Za-z.!+_-]+)\s*(?:;(.*))?$")
_GC_EXTRA = re.compile(r"extra\s*==\s*['\"]gc['\"]")
# What the GC job imports beyond pyspark itself: pandas, which pyspark's mapInArrow requires.
_MODULES = ("pyspark", "pandas")
# What pip prints when it cannot reach the index: the last ERROR line alone would only say "no matching
# distribution", which reads like a wrong pin.
_OFFLINE = ("NewConnectionError", "Failed to establish a new connection", "Temporary failure in name resolution")
HEARTBEAT_SECONDS = 15.0
# The stack's moto takes requests signed with the stack's key pair only (lakelet/stack/moto_guard.py): the caller
# gives that pair, which also keeps a developer's real AWS credentials out of local calls.
_NOISE = (
    b"WARNING: Using incubator modules: jdk.incubator.vector",
    b'Setting default log level to "',
    b"To adjust logging level use sc.setLogLevel(newLevel).",
)
_LOG4J2 = """\
# lakelet gc run: Spark logs errors only, on stderr (lakelet/spark_local.py).
status = error
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n%ex
rootLogger.level = error
rootLogger.appenderRef.stdout.ref = console
"""
_config_lock = threading.Lock()
_config_path: Path | None = None


def _log4j2_config() -> Path:
    """Our log4j2 configuration, written once per process to a private temporary file."""
    global _config_path
    with _config_lock:
        if _config_path is None or not _config_path.is_file():
            fd, name = tempfile.mkstemp(prefix="lakelet-log4j2-", suffix=".properties")
            with os.fdopen(fd, "w") as out:
                out.write(_LOG4J2)
            _config_path = Path(name)
        return _config_path


def _forward_stderr(source: IO[bytes]) -> None:
    """Copies the driver JVM's stderr to ours (file descriptor 2, whatever it is now), line by line, without the
    known start-up noise."""
    for line in iter(source.readline, b""):
        if not line.rstrip().startswith(_NOISE):
            os.write(2, line)
    source.close()


def _quiet_spark_context(conf: Any) -> Any:
    """A SparkContext whose driver JVM is launched with its stderr filtered (see the module docstring)."""
    from pyspark import SparkContext
    from pyspark.java_gateway import launch_gateway

    # pyspark.java_gateway has no annotations.
    gateway = launch_gateway(conf, popen_kwargs={"stderr": subprocess.PIPE})  # type: ignore[no-untyped-call]
    threading.Thread(target=_forward_stderr, args=(gateway.proc.stderr,), name="spark-stderr", daemon=True).start()
    return SparkContext(conf=conf, gateway=gateway)


def local_session(address_partitions: int = 4) -> Any:
    """A quiet local[2] SparkSession for the GC job (also what tests and the benchmark start)."""
    from pyspark import SparkConf, SparkContext
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", LOCAL_HOST)
    warnings.filterwarnings(
        "ignore", message="PySpark does not yet fully support pandas", category=FutureWarning, module=r"pyspark(\.|$)"
    )
    conf = (
        SparkConf()
        .setMaster(LOCAL_SPARK_MASTER)
        .setAppName("lakelet-gc-local")
        .set("spark.ui.enabled", "false")
        .set("spark.ui.showConsoleProgress", "false")
        .set("spark.sql.shuffle.partitions", str(address_partitions))
        .set("spark.driver.bindAddress", LOCAL_HOST)
        .set("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile=file:{_log4j2_config()}")
    )
    if SparkContext._active_spark_context is None:  # pyspark's own "is one running" flag
        _quiet_spark_context(conf)
    spark = SparkSession.builder.config(conf=conf).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


@contextmanager
def local_spark(address_partitions: int, s3_endpoint: str | None, keys: tuple[str, str] | None = None) -> Iterator[Any]:
    """A Spark session in local mode: the active one if there is one (left running), else a new one that is
    stopped on exit. Environment first: Spark's Python workers inherit it when the session starts, and they sign
    their requests to ``s3_endpoint`` with ``keys`` (access key id, secret)."""
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        yield active
        return
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", LOCAL_HOST)
    if s3_endpoint and keys is not None:
        os.environ.update({"AWS_ACCESS_KEY_ID": keys[0], "AWS_SECRET_ACCESS_KEY": keys[1]})
        for name in ("AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN", "AWS_PROFILE"):
            os.environ.pop(name, None)
        import boto3

        boto3.DEFAULT_SESSION = None  # the driver's clients too: the default session keeps its first keys
    spark = local_session(address_partitions)
    try:
        yield spark
    finally:
        spark.stop()


class SparkInstallError(Exception):
    """One line for the user: Spark is not installed and could not be, and what to do about it."""


def pyspark_installed() -> bool:
    """pyspark and what the job needs with it (pandas) can both be imported."""
    return all(importlib.util.find_spec(name) is not None for name in _MODULES)


def _pins_in(lines: Iterable[str], gc_extra_only: bool = False) -> tuple[str, ...]:
    pins = []
    for line in lines:
        found = _PIN.match(line.partition("#")[0])
        if found and (not gc_extra_only or _GC_EXTRA.search(found.group(2) or "")):
            pins.append(re.sub(r"\s+", "", found.group(1)))
    return tuple(pins)


def gc_requirements(checkout: Path | None = None) -> tuple[str, ...]:
    """The pinned requirements of the ``[gc]`` extra, pyspark's first, e.g. ``("pyspark==3.5.9", "pandas==3.1.1")``:
    from requirements-gc.txt when this code runs from a checkout, else from the installed package's metadata (its
    Requires-Dist lines are built from that file, so a wheel install carries the pins without the file)."""
    root = _CHECKOUT if checkout is None else checkout
    pin_file = root / GC_REQUIREMENTS
    if pin_file.is_file() and (root / "pyproject.toml").is_file():
        pins = _pins_in(pin_file.read_text().splitlines())
        where = str(pin_file)
    else:
        try:
            requires = importlib.metadata.requires(DISTRIBUTION) or []
        except importlib.metadata.PackageNotFoundError:
            requires = []
        pins = _pins_in(requires, gc_extra_only=True)
        where = ""
    spark = [pin for pin in pins if pin.lower().startswith("pyspark==")]
    if not spark:
        if where:
            raise SparkInstallError(f"{where} pins no pyspark version (expected a line like pyspark==X.Y.Z)")
        raise SparkInstallError(
            f"cannot tell which pyspark local GC needs: neither {GC_REQUIREMENTS} nor the installed {DISTRIBUTION} "
            f"package's metadata pins it; install it yourself: pip install '{DISTRIBUTION}[gc]'"
        )
    return (spark[0], *(pin for pin in pins if pin != spark[0]))


def pyspark_requirement(checkout: Path | None = None) -> str:
    """The pinned pyspark of the ``[gc]`` extra, e.g. ``pyspark==3.5.9``."""
    return gc_requirements(checkout)[0]


def pip_install_command(*requirements: str) -> list[str]:
    """pip of the running interpreter, so Spark lands in the environment ``lakelet`` runs in (a venv, pipx's)."""
    return [sys.executable, "-m", "pip", "install", "--disable-pip-version-check", "--no-input", *requirements]


def _quoted(requirement: str) -> str:
    return " ".join(f"'{r}'" for r in requirement.split())


def _pip_failure(requirement: str, returncode: int, output: str) -> str:
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    errors = [line.removeprefix("ERROR:").strip() for line in lines if line.startswith("ERROR:")]
    detail = errors[-1] if errors else (lines[-1] if lines else "no output")
    if any(marker in output for marker in _OFFLINE):
        detail = f"pip cannot reach the package index (offline?): {detail}"
    return (
        f"Spark is not installed and pip could not install {requirement} (exit {returncode}): {detail}; "
        f"install it once the network is back: {sys.executable} -m pip install {_quoted(requirement)}"
    )


def ensure_pyspark(progress: Callable[[str], None], heartbeat_seconds: float = HEARTBEAT_SECONDS) -> bool:
    """Installs pyspark at its pin when it is missing; False if it was there already, True once installed.

    pip's own output is kept (a download bar for 317 MB is not line-oriented) and its last error is the one line
    of :class:`SparkInstallError`; meanwhile ``progress`` hears a line at the start, every ``heartbeat_seconds``
    and at the end, so the wait is never silent."""
    if pyspark_installed():
        return False
    requirements = gc_requirements()
    requirement = " ".join(requirements)
    environment = sys.prefix
    progress(
        f"Spark for local GC is not installed yet: installing {requirement} into {environment} with pip, once "
        "(a ~317 MB download and a wheel build: a minute or two)"
    )
    started = time.monotonic()
    done = threading.Event()

    def tick() -> None:
        while not done.wait(heartbeat_seconds):
            progress(f"still installing {requirement} ({time.monotonic() - started:.0f} s)")

    ticker = threading.Thread(target=tick, name="pyspark-install-progress", daemon=True)
    ticker.start()
    try:
        finished = subprocess.run(
            pip_install_command(*requirements), check=False, capture_output=True, text=True, stdin=subprocess.DEVNULL
        )
    except OSError as error:
        raise SparkInstallError(
            f"Spark is not installed and pip could not be started ({error}); install it yourself: "
            f"{sys.executable} -m pip install {_quoted(requirement)}"
        ) from None
    finally:
        done.set()
        ticker.join()
    if finished.returncode != 0:
        raise SparkInstallError(_pip_failure(requirement, finished.returncode, finished.stdout + finished.stderr))
    importlib.invalidate_caches()
    if not pyspark_installed():
        raise SparkInstallError(
            f"pip installed {requirement}, but {sys.executable} still cannot import pyspark or pandas (pip "
            "installed them elsewhere?); install them into this environment: "
            f"{sys.executable} -m pip install {_quoted(requirement)}"
        )
    progress(f"{requirement} installed in {time.monotonic() - started:.0f} s; it stays for later runs")
    return True
