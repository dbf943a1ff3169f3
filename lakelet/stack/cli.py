"""The stack's commands in the ``lakelet`` typer tree: ``lakelet up`` (run the embedded stack until Ctrl-C or
SIGTERM) and ``lakelet gc run`` (the local Spark GC). lakelet/cli.py hangs them on the tree.

Every flag has an environment variable (named in its help) and a default printed by ``--help``; a flag given on
the command line wins over the environment. This module imports only the standard library, typer and the
state file at start-up: the heavy parts (moto, Chalice, Spark) load when a command runs.
"""

from __future__ import annotations

import importlib
import logging
import os
import signal
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Annotated

import typer

from lakelet.defaults import (
    DEFAULT_ACCESS_KEY_ID,
    DEFAULT_API_PORT,
    DEFAULT_S3_PORT,
    DEFAULT_SECRET_ACCESS_KEY,
    LOCAL_REGION,
)
from lakelet.stack.statefile import ENV_DATA_DIR, default_data_dir, read_state

ENV_API_PORT = "LAKELET_API_PORT"
ENV_S3_PORT = "LAKELET_S3_PORT"
ENV_MOTO_PORT = "LAKELET_MOTO_PORT"
ENV_AWS_LIMITS = "LAKELET_AWS_LIMITS"
ENV_ACCESS_KEY_ID = "LAKELET_ACCESS_KEY_ID"
ENV_SECRET_ACCESS_KEY = "LAKELET_SECRET_ACCESS_KEY"
# `lakelet gc run` takes lakectl's variables for the server, as the rest of the CLI.
ENV_GC_SERVER = "LAKECTL_SERVER_ENDPOINT_URL"
ENV_GC_ACCESS_KEY_ID = "LAKECTL_CREDENTIALS_ACCESS_KEY_ID"
ENV_GC_SECRET_ACCESS_KEY = "LAKECTL_CREDENTIALS_SECRET_ACCESS_KEY"
ENV_GC_S3_ENDPOINT = "LAKELET_AWS_ENDPOINT_URL"
ENV_GC_S3_ACCESS_KEY_ID = "LAKELET_AWS_ACCESS_KEY_ID"
ENV_GC_S3_SECRET_ACCESS_KEY = "LAKELET_AWS_SECRET_ACCESS_KEY"
DATA_DIR_DEFAULT_TEXT = f"${ENV_DATA_DIR}, else $XDG_DATA_HOME/lakelet or ~/.local/share/lakelet"
NOT_INSTALLED_HINT = "pip install 'lakelet[local]' (make run does)"


@dataclass(frozen=True, slots=True)
class LocalOptions:
    """What ``lakelet up`` was given. ``data_dir`` None means --ephemeral."""

    api_port: int = DEFAULT_API_PORT
    s3_port: int = DEFAULT_S3_PORT
    moto_port: int = 0
    access_key_id: str = DEFAULT_ACCESS_KEY_ID
    secret_access_key: str = DEFAULT_SECRET_ACCESS_KEY
    data_dir: Path | None = None
    sample_data: bool = False
    verbose: bool = False
    accept_journal_loss: bool = False
    aws_limits: bool = False


def resolve_data_dir(data_dir: Path | None, ephemeral: bool = False, *, flag_given: bool = False) -> Path | None:
    """None with --ephemeral, else --data-dir, else $LAKELET_DATA_DIR or the per-user folder (read when the
    command runs, so the environment of the moment counts). --ephemeral overrides the variable, not the flag."""
    if ephemeral:
        if flag_given:
            raise typer.BadParameter(
                "--ephemeral keeps no data directory: give --data-dir or --ephemeral, not both",
                param_hint="'--data-dir' / '--ephemeral'",
            )
        return None
    return (data_dir if data_dir is not None else default_data_dir()).expanduser()


def _given_on_command_line(ctx: typer.Context, name: str) -> bool:
    """Whether the option was typed (not its default, nor its environment variable). Compared by name: click's
    ParameterSource enum lives in typer's private copy of click, which has no public import path."""
    source = ctx.get_parameter_source(name)
    return source is not None and source.name == "COMMANDLINE"


def up(
    ctx: typer.Context,
    api_port: Annotated[
        int,
        typer.Option(
            min=0, max=65535, envvar=ENV_API_PORT, show_envvar=True, help="port of the lakeFS API, 0 for any free port"
        ),
    ] = DEFAULT_API_PORT,
    s3_port: Annotated[
        int,
        typer.Option(
            min=0, max=65535, envvar=ENV_S3_PORT, show_envvar=True, help="port of the S3 gateway, 0 for any free port"
        ),
    ] = DEFAULT_S3_PORT,
    moto_port: Annotated[
        int,
        typer.Option(
            min=0,
            max=65535,
            envvar=ENV_MOTO_PORT,
            show_envvar=True,
            help="port of the moto server standing in for AWS, 0 for any free port",
        ),
    ] = 0,
    access_key_id: Annotated[
        str, typer.Option(envvar=ENV_ACCESS_KEY_ID, show_envvar=True, help="access key ID of the admin user")
    ] = DEFAULT_ACCESS_KEY_ID,
    secret_access_key: Annotated[
        str, typer.Option(envvar=ENV_SECRET_ACCESS_KEY, show_envvar=True, help="secret access key of the admin user")
    ] = DEFAULT_SECRET_ACCESS_KEY,
    data_dir: Annotated[
        Path | None,
        typer.Option(
            envvar=ENV_DATA_DIR,
            show_envvar=True,
            show_default=DATA_DIR_DEFAULT_TEXT,
            file_okay=False,
            help="where the stack keeps its state across restarts and its state file, read by the CLI and "
            "`lakelet gc run`",
        ),
    ] = None,
    ephemeral: Annotated[
        bool,
        typer.Option(
            "--ephemeral",
            help="keep everything in memory and lose it on stop (tests use this); no data directory is touched",
        ),
    ] = False,
    sample_data: Annotated[
        bool,
        typer.Option(
            "--sample-data",
            help="create the quickstart repository with sample data, once per data directory (make run passes it)",
        ),
    ] = False,
    accept_journal_loss: Annotated[
        bool,
        typer.Option(
            "--accept-journal-loss",
            help="start even though a journal of the data directory is damaged, from the "
            "changes before the damage; the damaged files are set aside in the data directory first (without it, such "
            "a start is refused)",
        ),
    ] = False,
    verbose: Annotated[
        bool,
        typer.Option(
            "--verbose",
            help="also print each request's metrics (the EMF line CloudWatch reads) and moto's own request log",
        ),
    ] = False,
    aws_limits: Annotated[
        bool,
        typer.Option(
            "--aws-limits/--no-aws-limits",
            envvar=ENV_AWS_LIMITS,
            show_envvar=True,
            help="answer as the deployed stack does past AWS's limits: API Gateway's 10 MB body and 29 s, Lambda's "
            "6 MB payload each way (API and S3 gateway, whose reads stop at 4 MiB), each function's timeout from "
            "the template (workflow tasks are cut at theirs), Step Functions' 256 KiB state (docs/local-stack.md)",
        ),
    ] = False,
) -> None:
    """Run the embedded local stack (moto, the lakeFS API and the S3 gateway) on 127.0.0.1 until Ctrl-C or
    SIGTERM. Its state (repositories, objects, users, ...) is kept in a data directory and survives restarts,
    unless --ephemeral. 'lakelet local export|import' copy a data directory."""
    options = LocalOptions(
        api_port,
        s3_port,
        moto_port,
        access_key_id,
        secret_access_key,
        resolve_data_dir(data_dir, ephemeral, flag_given=_given_on_command_line(ctx, "data_dir")),
        sample_data,
        verbose,
        accept_journal_loss,
        aws_limits,
    )
    raise typer.Exit(run_local(options))


def run_local(options: LocalOptions) -> int:
    """Start the stack, print how to connect, serve until SIGINT or SIGTERM, then stop it and return 0."""
    try:
        from lakelet.persistence import DataDirError
        from lakelet.stack.app_environment import Credentials
        from lakelet.stack.aws_limits import AwsLimits
        from lakelet.stack.local import LocalStack
    except ImportError as error:  # `pip install .` alone: the CLI without the local stack
        print(f"lakelet up: the local stack is not installed ({error}): {NOT_INSTALLED_HINT}", file=sys.stderr)
        return 1
    from lakelet.stack.banner import connection_info

    # One line per request on stderr: the API's (the dev server's own log) and the S3 gateway's (below).
    # moto's HTTP server logs every AWS call the app makes at INFO: only with --verbose.
    logging.getLogger("werkzeug").setLevel(logging.INFO if options.verbose else logging.WARNING)
    _log_gateway_requests()
    running = read_state(options.data_dir) if options.data_dir is not None else None
    if running is not None and running.get("pid") != os.getpid():
        print(
            f"lakelet up: cannot start: another stack (pid {running.get('pid')}, API at "
            f"{running.get('api_url')}) uses the data directory {options.data_dir}; stop it or pass another "
            "--data-dir",
            file=sys.stderr,
        )
        return 1
    use_system_allocator()
    stop_requested = threading.Event()

    def request_stop(signum: int, frame: FrameType | None) -> None:
        stop_requested.set()

    # Installed before starting, so a signal during start-up still ends in a clean stop.
    previous = {sig: signal.signal(sig, request_stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    stack = LocalStack(
        api_port=options.api_port,
        moto_port=options.moto_port,
        credentials=Credentials(options.access_key_id, options.secret_access_key),
        s3_port=options.s3_port,
        data_dir=options.data_dir,
        sample_data=options.sample_data,
        verbose=options.verbose,
        accept_journal_loss=options.accept_journal_loss,
        aws_limits=AwsLimits.deployed() if options.aws_limits else None,
    )
    try:
        try:
            stack.start()
        except (OSError, DataDirError) as error:
            print(f"lakelet up: cannot start: {error}", file=sys.stderr)
            return 1
        if stack.persistence is not None:
            print(f"Data directory {stack.data_dir}: {stack.persistence.recovery.summary()}", flush=True)
        if stack.admin_notice is not None:
            print(f"lakelet local: {stack.admin_notice}", file=sys.stderr, flush=True)
        print(connection_info(stack), flush=True)
        warm_range_writes()
        # A timed wait, so the main thread returns to the interpreter often enough to run signal handlers.
        while not stop_requested.wait(0.5):
            pass
        print("Stopping...", flush=True)
        return 0
    finally:
        stack.stop()
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def use_system_allocator() -> None:
    """pyarrow's buffers (ranges read and written by every commit) from the C library's malloc, not mimalloc,
    which kept freed pages: in a paired 3-minute soak (bench/soak.py) the stack grew 39 MiB with mimalloc and
    27 MiB with the system allocator for the same 1,500 operations. Only the ``lakelet local`` process: the
    Lambda functions and the tests keep pyarrow's default."""
    import pyarrow

    pyarrow.set_memory_pool(pyarrow.system_memory_pool())


def warm_range_writes() -> threading.Thread:
    """pyarrow imports pandas, when it is installed, on its first conversion of a Python list, and a commit
    converts the rows it writes: a py-spy profile of the first commit (10,000 objects) of a fresh ``lakelet up``
    spent 35% of it importing pandas, seconds on a loaded machine, and once that was gone 9% importing
    pyarrow.parquet (and pyarrow.fs through it), which the range writer loads on its first range. A daemon thread
    pays both once the stack answers, so that the first commit does not. Lambda functions have no pandas to
    import."""
    import pyarrow

    def warm() -> None:
        for name in ("pyarrow.parquet", "pyarrow.compute"):
            importlib.import_module(name)
        pyarrow.array([], pyarrow.string())

    thread = threading.Thread(target=warm, name="warm-pyarrow", daemon=True)
    thread.start()
    return thread


def _log_gateway_requests() -> None:
    """The S3 gateway logs each request at INFO on ``lakelet.stack.s3server``; print those lines as the API does."""
    gateway = logging.getLogger("lakelet.stack.s3server")
    if not gateway.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(message)s"))
        gateway.addHandler(handler)
    gateway.setLevel(logging.INFO)
    gateway.propagate = False


def gc_run(
    repository: Annotated[str, typer.Argument(help="the repository (it needs GC rules: lakelet gc set-config)")],
    mark_only: Annotated[bool, typer.Option("--mark-only", help="dry run: mark and report, delete nothing")] = False,
    sweep_run: Annotated[
        str | None, typer.Option(metavar="RUN_ID", help="sweep what an earlier --mark-only run marked")
    ] = None,
    min_age_seconds: Annotated[
        int, typer.Option(show_default=True, help="never collect objects written less than this long before the run")
    ] = 86_400,
    data_dir: Annotated[
        Path | None,
        typer.Option(
            envvar=ENV_DATA_DIR,
            show_envvar=True,
            show_default=DATA_DIR_DEFAULT_TEXT,
            help="the data directory of the running `lakelet up`, whose state file says how to reach it",
        ),
    ] = None,
    # Connection flags default to None: unset ones come from the running stack's state file, then the defaults.
    endpoint: Annotated[
        str | None,
        typer.Option(
            envvar=ENV_GC_SERVER,
            show_envvar=True,
            help=f"the lakeFS API server (default: the running stack's, else http://127.0.0.1:{DEFAULT_API_PORT})",
        ),
    ] = None,
    access_key_id: Annotated[
        str | None, typer.Option(envvar=ENV_GC_ACCESS_KEY_ID, show_envvar=True, help="(default: the running stack's)")
    ] = None,
    secret_access_key: Annotated[
        str | None,
        typer.Option(envvar=ENV_GC_SECRET_ACCESS_KEY, show_envvar=True, help="(default: the running stack's)"),
    ] = None,
    s3_endpoint: Annotated[
        str | None,
        typer.Option(
            envvar=ENV_GC_S3_ENDPOINT,
            show_envvar=True,
            help="the stack's moto URL, the 'AWS stand-in' line of `lakelet up` (default: the running stack's)",
        ),
    ] = None,
    s3_access_key_id: Annotated[
        str | None,
        typer.Option(
            envvar=ENV_GC_S3_ACCESS_KEY_ID,
            show_envvar=True,
            help="the key moto trusts, the stack's own (aws_access_key_id in its state.json; default: the running "
            "stack's)",
        ),
    ] = None,
    s3_secret_access_key: Annotated[
        str | None,
        typer.Option(envvar=ENV_GC_S3_SECRET_ACCESS_KEY, show_envvar=True, help="(default: the running stack's)"),
    ] = None,
    region: Annotated[str, typer.Option(show_default=True, help="the bucket's region")] = LOCAL_REGION,
    commit_partitions: Annotated[
        int, typer.Option(min=1, show_default=True, help="Spark partitions for reading commits")
    ] = 2,
    address_partitions: Annotated[
        int, typer.Option(min=1, show_default=True, help="Spark partitions for addresses")
    ] = 4,
    # moto scans a whole bucket for every listing request, so slicing partitions only slows a local run down.
    list_slices: Annotated[int, typer.Option(show_default=True, help="listing slices per data/ partition (1-16)")] = 1,
    json_out: Annotated[bool, typer.Option("--json", help="print the whole summary as JSON")] = False,
) -> None:
    """Collect a repository's garbage on the local stack, with Spark in local mode: the API prepares the run,
    then emr/gc_job.py (the file EMR Serverless runs) marks and sweeps against the stack's moto server."""
    if mark_only and sweep_run is not None:
        raise typer.BadParameter(
            "a run either marks (--mark-only) or sweeps an earlier run (--sweep-run)",
            param_hint="'--mark-only' / '--sweep-run'",
        )
    from lakelet.stack.local_gc import GCRunOptions, run_command

    implied = default_data_dir()  # the data directory defaults as for ``lakelet up``
    options = GCRunOptions(
        repository=repository,
        data_dir=data_dir if data_dir is not None else implied,
        implied_data_dir=implied,
        endpoint=endpoint or None,
        access_key_id=access_key_id or None,
        secret_access_key=secret_access_key or None,
        s3_endpoint=s3_endpoint or None,
        s3_access_key_id=s3_access_key_id or None,
        s3_secret_access_key=s3_secret_access_key or None,
        mark_only=mark_only,
        sweep_run=sweep_run,
        min_age_seconds=min_age_seconds,
        region=region,
        commit_partitions=commit_partitions,
        address_partitions=address_partitions,
        list_slices=list_slices,
        json=json_out,
    )
    raise typer.Exit(run_command(options))
