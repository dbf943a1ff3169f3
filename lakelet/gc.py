"""``lakelet gc run REPO``: garbage collection on the embedded stack, with Spark in local mode.

The same steps as the scheduled Lambda, with the local stack standing in for AWS: the lakeFS API prepares the
run (POST .../gc/prepare_commits, so the repository needs GC rules), then emr/gc_job.py, the very file EMR
Serverless runs, marks and sweeps in a local Spark session against the stack's moto server, and the summary is
printed. The moto URL is the "AWS stand-in" line that ``lakelet local`` prints.
"""

from __future__ import annotations

import argparse
import base64
import importlib.util
import json
import os
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from lakelet.local import (
    DEFAULT_ACCESS_KEY_ID,
    DEFAULT_API_PORT,
    DEFAULT_SECRET_ACCESS_KEY,
    LOCAL_HOST,
    LOCAL_REGION,
)

JOB_FILE = Path(__file__).resolve().parent.parent / "emr" / "gc_job.py"
JOB_MODULE = "gc_job"
ENV_SERVER = "LAKECTL_SERVER_ENDPOINT_URL"
ENV_ACCESS_KEY_ID = "LAKECTL_CREDENTIALS_ACCESS_KEY_ID"
ENV_SECRET_ACCESS_KEY = "LAKECTL_CREDENTIALS_SECRET_ACCESS_KEY"
ENV_S3_ENDPOINT = "LAKELET_AWS_ENDPOINT_URL"  # what chalicelib reads for the moto URL, too
LOCAL_SPARK_MASTER = "local[2]"
# moto takes any key pair; fixed fake ones keep a developer's real AWS credentials out of local calls.
_MOTO_KEYS = {"AWS_ACCESS_KEY_ID": "lakelet-local", "AWS_SECRET_ACCESS_KEY": "lakelet-local"}


class GCCommandError(Exception):
    """What ``lakelet gc run`` reports and exits 1 for: the API refused, or the job refused its inputs."""


@dataclass(frozen=True, slots=True)
class LakeFSApi:
    """The two calls the local GC needs, over HTTP Basic (urllib: no dependency beyond the standard library)."""

    endpoint: str
    access_key_id: str
    secret_access_key: str

    def call(self, method: str, path: str) -> dict[str, Any]:
        url = self.endpoint.rstrip("/") + "/api/v1" + path
        token = base64.b64encode(f"{self.access_key_id}:{self.secret_access_key}".encode()).decode()
        request = urllib.request.Request(
            url, method=method, data=b"" if method == "POST" else None,
            headers={"Authorization": f"Basic {token}", "Accept": "application/json"},
        )
        # A proxy from the environment must not see (or swallow) a loopback request.
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        try:
            with opener.open(request, timeout=120) as response:
                return dict(json.loads(response.read() or b"{}"))
        except urllib.error.HTTPError as e:
            try:
                message = json.loads(e.read()).get("message", "")
            except ValueError:
                message = ""
            raise GCCommandError(f"{method} {path} answered {e.code}: {message or e.reason}") from None
        except urllib.error.URLError as e:
            raise GCCommandError(f"cannot reach the lakeFS API at {self.endpoint}: {e.reason}") from None

    def storage_namespace(self, repository: str) -> str:
        return str(self.call("GET", f"/repositories/{urllib.parse.quote(repository, safe='')}")["storage_namespace"])

    def prepare(self, repository: str) -> str:
        """Prepares a GC run; returns its run id."""
        quoted = urllib.parse.quote(repository, safe="")
        return str(self.call("POST", f"/repositories/{quoted}/gc/prepare_commits")["run_id"])


def load_job(path: Path = JOB_FILE) -> ModuleType:
    """emr/gc_job.py as the module ``gc_job`` (it is a script for EMR, not part of an installed package)."""
    loaded = sys.modules.get(JOB_MODULE)
    if loaded is not None and Path(getattr(loaded, "__file__", "")).resolve() == path.resolve():
        return loaded
    spec = importlib.util.spec_from_file_location(JOB_MODULE, path)
    if spec is None or spec.loader is None:
        raise GCCommandError(f"cannot load the GC job from {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[JOB_MODULE] = module
    spec.loader.exec_module(module)
    return module


@contextmanager
def local_spark(address_partitions: int, s3_endpoint: str | None) -> Iterator[Any]:
    """A Spark session in local mode: the active one if there is one (left running), else a new one that is
    stopped on exit. Environment first: Spark's Python workers inherit it when the session starts."""
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        yield active
        return
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", LOCAL_HOST)
    if s3_endpoint:
        os.environ.update(_MOTO_KEYS)
        for name in ("AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN", "AWS_PROFILE"):
            os.environ.pop(name, None)
    spark = local_session(address_partitions)
    try:
        yield spark
    finally:
        spark.stop()


def local_session(address_partitions: int = 4) -> Any:
    """A quiet local[2] SparkSession for the GC job (also what tests and the benchmark start)."""
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", LOCAL_HOST)
    spark = (
        SparkSession.builder.master(LOCAL_SPARK_MASTER)
        .appName("lakelet-gc-local")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", str(address_partitions))
        .config("spark.driver.bindAddress", LOCAL_HOST)
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def run_gc(
    api: LakeFSApi,
    repository: str,
    s3_endpoint: str | None,
    *,
    mark_only: bool = False,
    sweep_run: str | None = None,
    min_age_seconds: int = 86_400,
    commit_partitions: int = 2,
    address_partitions: int = 4,
    list_slices: int = 1,
    region: str = LOCAL_REGION,
) -> dict[str, Any]:
    """Prepares (unless sweeping an earlier mark) and runs the GC job locally; returns its summary."""
    job = load_job()
    namespace = api.storage_namespace(repository)
    run_id = sweep_run or api.prepare(repository)
    mode = job.MODE_SWEEP if sweep_run else job.MODE_MARK if mark_only else job.MODE_MARK_AND_SWEEP
    try:
        options = job.JobOptions(
            storage_namespace=namespace, run_id=run_id, mode=mode, min_age_seconds=min_age_seconds,
            commit_partitions=commit_partitions, address_partitions=address_partitions, list_slices=list_slices,
            endpoint_url=s3_endpoint, region=region,
        )
        with local_spark(address_partitions, s3_endpoint) as spark:
            summary: dict[str, Any] = job.run(spark, options)
    except job.GCJobError as e:
        raise GCCommandError(str(e)) from e
    summary["repository"] = repository
    return summary


def _size(value: int) -> str:
    amount = float(value)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if amount < 1024 or unit == "TiB":
            return f"{amount:.0f} {unit}" if unit == "B" else f"{amount:.1f} {unit}"
        amount /= 1024
    return f"{value} B"


def format_summary(summary: Mapping[str, Any]) -> str:
    """The summary for a human: what was listed, kept, marked and (unless a dry run) deleted."""
    mark = summary.get("mark", {})
    lines = [
        (f"GC run {summary['run_id']} of {summary.get('repository', '?')} ({summary['storage_namespace']}), "
         f"mode {summary['mode']}"),
        f"  active commits        {mark.get('active_commits', 0)}",
        f"  objects listed        {mark.get('objects_listed', 0)} ({_size(mark.get('bytes_listed', 0))})",
        f"  too young to collect  {mark.get('objects_too_young', 0)} (min age {mark.get('min_age_seconds', 0)} s)",
        f"  still referenced      {mark.get('objects_protected', 0)}",
        f"  marked                {mark.get('objects_marked', 0)} ({_size(mark.get('bytes_marked', 0))})",
    ]
    sweep = summary.get("sweep")
    if sweep is None:
        lines.append(f"  dry run: a sweep would reclaim {_size(mark.get('bytes_marked', 0))}; "
                     f"run `lakelet gc run {summary.get('repository', 'REPO')} --sweep-run {summary['run_id']}`")
    else:
        lines.append(f"  deleted               {sweep['objects_deleted']} ({_size(sweep['bytes_deleted'])})")
        lines.append(f"  failed                {sweep['objects_failed']}")
        for failure in sweep.get("failures", [])[:10]:
            lines.append(f"    {failure['address']}: {failure['code']} {failure['message']}")
    lines.append(f"  summary               {summary.get('summary_location', '')}")
    return "\n".join(lines)


def add_gc_command(commands: Any, env: Mapping[str, str]) -> None:
    """Adds ``gc run`` to the ``lakelet`` subcommands; the parsed options carry their handler."""
    gc = commands.add_parser("gc", help="garbage collection", description="Garbage collection of unreferenced data.")
    actions = gc.add_subparsers(dest="gc_command", required=True, metavar="ACTION")
    run = actions.add_parser(
        "run",
        help="collect a repository's garbage on the local stack with Spark in local mode",
        description=__doc__,
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    run.add_argument("repository", help="the repository (it needs GC rules: PUT .../settings/gc_rules)")
    mode = run.add_mutually_exclusive_group()
    mode.add_argument("--mark-only", action="store_true", help="dry run: mark and report, delete nothing")
    mode.add_argument("--sweep-run", metavar="RUN_ID", help="sweep what an earlier --mark-only run marked")
    run.add_argument("--min-age-seconds", type=int, default=86_400,
                     help="never collect objects written less than this long before the run")
    run.add_argument("--endpoint", default=env.get(ENV_SERVER, f"http://{LOCAL_HOST}:{DEFAULT_API_PORT}"),
                     help=f"the lakeFS API server (env {ENV_SERVER})")
    run.add_argument("--access-key-id", default=env.get(ENV_ACCESS_KEY_ID, DEFAULT_ACCESS_KEY_ID),
                     help=f"(env {ENV_ACCESS_KEY_ID})")
    run.add_argument("--secret-access-key", default=env.get(ENV_SECRET_ACCESS_KEY, DEFAULT_SECRET_ACCESS_KEY),
                     help=f"(env {ENV_SECRET_ACCESS_KEY})")
    run.add_argument("--s3-endpoint", default=env.get(ENV_S3_ENDPOINT),
                     help=f"the stack's moto URL, the 'AWS stand-in' line of `lakelet local` (env {ENV_S3_ENDPOINT})")
    run.add_argument("--region", default=LOCAL_REGION, help="the bucket's region")
    run.add_argument("--commit-partitions", type=int, default=2, help="Spark partitions for reading commits")
    run.add_argument("--address-partitions", type=int, default=4, help="Spark partitions for addresses")
    # moto scans a whole bucket for every listing request, so slicing partitions only slows a local run down.
    run.add_argument("--list-slices", type=int, default=1, help="listing slices per data/ partition (1-16)")
    run.add_argument("--json", action="store_true", help="print the whole summary as JSON")
    run.set_defaults(handler=run_command)


def run_command(options: argparse.Namespace) -> int:
    """``lakelet gc run``: 0 when done, 1 when refused, 3 when some deletes failed (as the job exits)."""
    if not options.s3_endpoint:
        print("lakelet gc run: --s3-endpoint is required: the moto URL that `lakelet local` prints as "
              "'AWS stand-in'", file=sys.stderr)
        return 1
    api = LakeFSApi(options.endpoint, options.access_key_id, options.secret_access_key)
    try:
        summary = run_gc(
            api, options.repository, options.s3_endpoint, mark_only=options.mark_only, sweep_run=options.sweep_run,
            min_age_seconds=options.min_age_seconds, commit_partitions=options.commit_partitions,
            address_partitions=options.address_partitions, list_slices=options.list_slices, region=options.region,
        )
    except GCCommandError as e:
        print(f"lakelet gc run: {e}", file=sys.stderr)
        return 1
    print(json.dumps(summary, indent=2, sort_keys=True) if options.json else format_summary(summary), flush=True)
    return int(load_job().exit_status(summary))
