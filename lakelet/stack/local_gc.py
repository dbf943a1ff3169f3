"""``lakelet gc run REPO``: garbage collection on the embedded stack, with Spark in local mode.

The same steps as the scheduled Lambda, with the local stack standing in for AWS: the lakeFS API prepares the
run (POST .../gc/prepare_commits, so the repository needs GC rules), then the GC job (emr/lakelet_gc/, the very code
EMR Serverless runs) marks and sweeps in a local Spark session against the stack's moto server, and the summary is
printed. With no flags it finds the running stack through its state file (lakelet/stack/statefile.py); flags and the
LAKECTL_* / LAKELET_AWS_ENDPOINT_URL variables win over it. Before Spark starts it checks, in a second or two,
that the stack answers, that the S3 endpoint is the stack's moto server and that Java 17 is installed
(lakelet/stack/gc_preflight.py); the first run then installs Spark (pyspark, the [gc] extra, which `make run` leaves
out: lakelet/stack/spark_local.py); then it reports each phase (prepare, list, mark, sweep) on stderr as it starts.
"""

from __future__ import annotations

import base64
import importlib.util
import json
import shlex
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from lakelet.defaults import (
    DEFAULT_ACCESS_KEY_ID,
    DEFAULT_API_PORT,
    DEFAULT_SECRET_ACCESS_KEY,
    LOCAL_HOST,
    LOCAL_REGION,
)
from lakelet.stack.spark_local import LOCAL_SPARK_MASTER, SparkInstallError, ensure_pyspark, local_session, local_spark
from lakelet.stack.statefile import read_state
from lakelet.units import human_bytes

__all__ = [
    "GCCommandError",
    "GCRunOptions",
    "LakeFSApi",
    "load_job",
    "local_session",
    "local_spark",
    "run_command",
    "run_gc",
]

JOB_PACKAGE = Path(__file__).resolve().parents[2] / "emr" / "lakelet_gc"
JOB_MODULE = "lakelet_gc"
ENV_SERVER = "LAKECTL_SERVER_ENDPOINT_URL"
ENV_ACCESS_KEY_ID = "LAKECTL_CREDENTIALS_ACCESS_KEY_ID"
ENV_SECRET_ACCESS_KEY = "LAKECTL_CREDENTIALS_SECRET_ACCESS_KEY"
ENV_S3_ENDPOINT = "LAKELET_AWS_ENDPOINT_URL"  # what chalicelib reads for the moto URL, too
DEFAULT_ENDPOINT = f"http://{LOCAL_HOST}:{DEFAULT_API_PORT}"
PHASES = ("prepare", "list", "mark", "sweep")
Progress = Callable[[str, str], None]


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
            url,
            method=method,
            data=b"" if method == "POST" else None,
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


def load_job(path: Path = JOB_PACKAGE) -> ModuleType:
    """The GC job (emr/lakelet_gc/, the package beside EMR's entry point emr/gc_job.py) as the package
    ``lakelet_gc``, loaded from the checkout by path: it is shipped to EMR as a zip, not installed."""
    loaded = sys.modules.get(JOB_MODULE)
    if loaded is not None and Path(getattr(loaded, "__file__", "")).resolve() == (path / "__init__.py").resolve():
        return loaded
    # Another copy (bench/gc_mark.py --compare) replaces this one with its submodules, so no module of one copy
    # runs with those of the other.
    for name in [name for name in sys.modules if name == JOB_MODULE or name.startswith(JOB_MODULE + ".")]:
        del sys.modules[name]
    spec = importlib.util.spec_from_file_location(
        JOB_MODULE, path / "__init__.py", submodule_search_locations=[str(path)]
    )
    if spec is None or spec.loader is None:
        raise GCCommandError(f"cannot load the GC job from {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[JOB_MODULE] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[JOB_MODULE]
        raise
    return module


def print_progress(phase: str, message: str) -> None:
    """One line per phase on stderr, so stdout keeps only the summary (or its JSON)."""
    print(f"[{PHASES.index(phase) + 1}/{len(PHASES)}] {phase:<8} {message}", file=sys.stderr, flush=True)


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
    progress: Progress | None = None,
    check_namespace: Callable[[str], None] | None = None,
    s3_keys: tuple[str, str] | None = None,
) -> dict[str, Any]:
    """Prepares (unless sweeping an earlier mark) and runs the GC job locally; returns its summary.

    ``progress(phase, message)`` hears of each phase as it starts; ``check_namespace`` may refuse the storage
    namespace before anything is prepared (lakelet gc run checks its bucket is on the given moto server)."""
    report: Progress = progress or (lambda phase, message: None)
    job = load_job()
    namespace = api.storage_namespace(repository)
    if check_namespace is not None:
        check_namespace(namespace)
    started = time.monotonic()
    if sweep_run:
        run_id = sweep_run
        report("prepare", f"sweeping run {run_id}, marked earlier: nothing to prepare")
    else:
        run_id = api.prepare(repository)
        report(
            "prepare",
            f"run {run_id}: active commits and staged objects of {repository} written "
            f"({time.monotonic() - started:.1f} s); starting Spark ({LOCAL_SPARK_MASTER})",
        )
    mode = job.MODE_SWEEP if sweep_run else job.MODE_MARK if mark_only else job.MODE_MARK_AND_SWEEP
    try:
        options = job.JobOptions(
            storage_namespace=namespace,
            run_id=run_id,
            mode=mode,
            min_age_seconds=min_age_seconds,
            commit_partitions=commit_partitions,
            address_partitions=address_partitions,
            list_slices=list_slices,
            endpoint_url=s3_endpoint,
            region=region,
        )
        keys = s3_keys if s3_keys is not None else (api.access_key_id, api.secret_access_key)
        with local_spark(address_partitions, s3_endpoint, keys) as spark:
            summary: dict[str, Any] = job.run(spark, options, progress=report)
        if mode == job.MODE_MARK:
            report("sweep", "skipped: a dry run (--mark-only) deletes nothing")
    except job.GCJobError as e:
        raise GCCommandError(str(e)) from e
    summary["repository"] = repository
    return summary


def format_summary(summary: Mapping[str, Any], command: str = "lakelet", flags: Sequence[str] = ()) -> str:
    """The summary for a human: what was listed, kept, marked and (unless a dry run) deleted. The sweep command of
    a dry run is ``command gc run REPO --sweep-run RUN_ID flags...``, to paste as is."""
    mark = summary.get("mark", {})
    lines = [
        (
            f"GC run {summary['run_id']} of {summary.get('repository', '?')} ({summary['storage_namespace']}), "
            f"mode {summary['mode']}"
        ),
        f"  active commits        {mark.get('active_commits', 0)}",
        f"  objects listed        {mark.get('objects_listed', 0)} ({human_bytes(mark.get('bytes_listed', 0))})",
        f"  too young to collect  {mark.get('objects_too_young', 0)} (min age {mark.get('min_age_seconds', 0)} s)",
        f"  still referenced      {mark.get('objects_protected', 0)}",
        f"  marked                {mark.get('objects_marked', 0)} ({human_bytes(mark.get('bytes_marked', 0))})",
    ]
    sweep = summary.get("sweep")
    if sweep is None:
        sweep_command = shlex.join(
            ["gc", "run", str(summary.get("repository", "REPO")), "--sweep-run", str(summary["run_id"]), *flags]
        )
        lines.append(
            f"  dry run: a sweep would reclaim {human_bytes(mark.get('bytes_marked', 0))}; "
            f"run `{command} {sweep_command}`"
        )
    else:
        lines.append(f"  deleted               {sweep['objects_deleted']} ({human_bytes(sweep['bytes_deleted'])})")
        lines.append(f"  failed                {sweep['objects_failed']}")
        for failure in sweep.get("failures", [])[:10]:
            lines.append(f"    {failure['address']}: {failure['code']} {failure['message']}")
    lines.append(f"  summary               {summary.get('summary_location', '')}")
    return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class GCRunOptions:
    """What ``lakelet gc run`` was given (lakelet/stack/cli.py parses the flags and their environment)."""

    repository: str
    data_dir: Path
    # Where the data directory is without --data-dir: a printed command repeats the flag only when it was given.
    implied_data_dir: Path
    endpoint: str | None = None
    access_key_id: str | None = None
    secret_access_key: str | None = None
    s3_endpoint: str | None = None
    s3_access_key_id: str | None = None
    s3_secret_access_key: str | None = None
    mark_only: bool = False
    sweep_run: str | None = None
    min_age_seconds: int = 86_400
    region: str = LOCAL_REGION
    commit_partitions: int = 2
    address_partitions: int = 4
    list_slices: int = 1
    json: bool = False


@dataclass(frozen=True, slots=True)
class Target:
    """Where ``lakelet gc run`` works: the API, its key pair, the moto URL, and flags a printed command repeats."""

    api: LakeFSApi
    s3_endpoint: str | None
    from_state: bool
    repeat_flags: tuple[str, ...]
    # The key pair of the stack's AWS stand-in (its state file names it); the API's pair when no state is used.
    s3_keys: tuple[str, str] = ("", "")

    @property
    def moto_keys(self) -> tuple[str, str]:
        return self.s3_keys if all(self.s3_keys) else (self.api.access_key_id, self.api.secret_access_key)


def resolve_target(options: GCRunOptions) -> Target:
    """Flags and environment first, then the running stack's state file (when it is the same API), then the
    defaults of a stack on its default ports."""
    state = read_state(options.data_dir)
    endpoint = (options.endpoint or "").rstrip("/") or None
    use_state = state is not None and endpoint in (None, str(state.get("api_url", "")).rstrip("/"))
    known = state if use_state and state is not None else {}
    api = LakeFSApi(
        endpoint or str(known.get("api_url") or DEFAULT_ENDPOINT),
        options.access_key_id or str(known.get("access_key_id") or DEFAULT_ACCESS_KEY_ID),
        options.secret_access_key or str(known.get("secret_access_key") or DEFAULT_SECRET_ACCESS_KEY),
    )
    s3_endpoint = options.s3_endpoint or known.get("moto_url") or None
    # A command printed for the user to paste must reach the same stack: repeat what did not come from the state.
    repeat: list[str] = []
    if options.endpoint:
        repeat += ["--endpoint", options.endpoint]
    if options.s3_endpoint:
        repeat += ["--s3-endpoint", options.s3_endpoint]
    if Path(options.data_dir) != Path(options.implied_data_dir) and use_state:
        repeat += ["--data-dir", str(options.data_dir)]
    s3_keys = (str(known.get("aws_access_key_id") or ""), str(known.get("aws_secret_access_key") or ""))
    if options.s3_endpoint and options.s3_endpoint != known.get("moto_url"):
        s3_keys = ("", "")  # another moto than the state file's: its keys are not the state's
    if options.s3_access_key_id and options.s3_secret_access_key:
        s3_keys = (options.s3_access_key_id, options.s3_secret_access_key)
    return Target(api, str(s3_endpoint) if s3_endpoint else None, use_state, tuple(repeat), s3_keys)


def print_setup(message: str) -> None:
    print(f"[setup] {message}", file=sys.stderr, flush=True)


def preflight(target: Target, options: GCRunOptions) -> None:
    """The checks that take a second or two, before the prepare and Spark's start, which take much longer; then
    Spark's install on the first run (last: a missing Java or stack should not cost a 317 MB download first)."""
    from lakelet.stack import gc_preflight

    running = read_state(options.data_dir)
    if target.from_state:
        hint = "the stack's state file is stale: restart `lakelet up`"
    elif running is not None:
        hint = (
            f"the running stack (state file in {options.data_dir}) is at {running.get('api_url')}: "
            "leave out --endpoint to use it"
        )
    else:
        hint = (
            f"start one with `lakelet up` (or `make run`): there is no state file of a running stack in "
            f"{options.data_dir}"
        )
    gc_preflight.check_api(target.api.endpoint, hint)
    if not target.s3_endpoint:
        raise gc_preflight.PreflightError(
            f"no moto URL for {target.api.endpoint}: pass --s3-endpoint, the 'AWS stand-in' URL that `lakelet up` "
            f"prints (no state file of a running stack in {options.data_dir})"
        )
    gc_preflight.check_moto(target.s3_endpoint, target.moto_keys)
    gc_preflight.check_java()
    ensure_pyspark(print_setup)


def run_command(options: GCRunOptions) -> int:
    """``lakelet gc run``: 0 when done, 1 when refused, 3 when some deletes failed (as the job exits)."""
    from lakelet.stack import gc_preflight

    target = resolve_target(options)
    try:
        preflight(target, options)
        summary = run_gc(
            target.api,
            options.repository,
            target.s3_endpoint,
            mark_only=options.mark_only,
            sweep_run=options.sweep_run,
            min_age_seconds=options.min_age_seconds,
            commit_partitions=options.commit_partitions,
            address_partitions=options.address_partitions,
            list_slices=options.list_slices,
            region=options.region,
            progress=print_progress,
            check_namespace=lambda namespace: gc_preflight.check_bucket(
                str(target.s3_endpoint), namespace, target.moto_keys
            ),
            s3_keys=target.moto_keys,
        )
    except (GCCommandError, gc_preflight.PreflightError, SparkInstallError) as e:
        print(f"lakelet gc run: {e}", file=sys.stderr)
        return 1
    if options.json:
        print(json.dumps(summary, indent=2, sort_keys=True), flush=True)
    else:
        from lakelet.stack.banner import lakelet_command

        print(format_summary(summary, lakelet_command(), target.repeat_flags), flush=True)
    return int(load_job().exit_status(summary))
