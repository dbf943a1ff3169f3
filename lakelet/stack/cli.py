"""The ``lakelet`` command line. ``lakelet local`` runs the embedded stack until Ctrl-C or SIGTERM.

Every flag has an environment variable (named in its help) and a default printed by ``--help``;
a flag given on the command line wins over the environment.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import FrameType

from lakelet.defaults import DEFAULT_ACCESS_KEY_ID, DEFAULT_API_PORT, DEFAULT_S3_PORT, DEFAULT_SECRET_ACCESS_KEY
from lakelet.stack.statefile import ENV_DATA_DIR, default_data_dir, read_state

ENV_API_PORT = "LAKELET_API_PORT"
ENV_S3_PORT = "LAKELET_S3_PORT"
ENV_MOTO_PORT = "LAKELET_MOTO_PORT"
ENV_ACCESS_KEY_ID = "LAKELET_ACCESS_KEY_ID"
ENV_SECRET_ACCESS_KEY = "LAKELET_SECRET_ACCESS_KEY"


def port(text: str) -> int:
    """argparse type: a TCP port number, 0 meaning "any free port"."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"port out of range 0-65535: {value}")
    return value


def build_parser(environ: Mapping[str, str] | None = None) -> argparse.ArgumentParser:
    """The parser; defaults come from ``environ`` (the process environment unless given)."""
    env = os.environ if environ is None else environ
    parser = argparse.ArgumentParser(
        prog="lakelet", description="Lakelet: git-like version control for a data lake, on serverless AWS."
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    local = commands.add_parser(
        "local",
        help="run the embedded local stack (moto, the lakeFS API and the S3 gateway) on 127.0.0.1",
        description="Run the embedded local stack on 127.0.0.1 until Ctrl-C or SIGTERM. Its state (repositories, "
        "objects, users, ...) is kept in a data directory and survives restarts, unless --ephemeral.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    # String defaults go through `type`, so a bad value in the environment is reported like a bad flag.
    local.add_argument(
        "--api-port", type=port, default=env.get(ENV_API_PORT, str(DEFAULT_API_PORT)),
        help=f"port of the lakeFS API, 0 for any free port (env {ENV_API_PORT})",
    )
    local.add_argument(
        "--s3-port", type=port, default=env.get(ENV_S3_PORT, str(DEFAULT_S3_PORT)),
        help=f"port of the S3 gateway, 0 for any free port (env {ENV_S3_PORT})",
    )
    local.add_argument(
        "--moto-port", type=port, default=env.get(ENV_MOTO_PORT, "0"),
        help=f"port of the moto server standing in for AWS, 0 for any free port (env {ENV_MOTO_PORT})",
    )
    local.add_argument(
        "--access-key-id", default=env.get(ENV_ACCESS_KEY_ID, DEFAULT_ACCESS_KEY_ID),
        help=f"access key ID of the admin user (env {ENV_ACCESS_KEY_ID})",
    )
    local.add_argument(
        "--secret-access-key", default=env.get(ENV_SECRET_ACCESS_KEY, DEFAULT_SECRET_ACCESS_KEY),
        help=f"secret access key of the admin user (env {ENV_SECRET_ACCESS_KEY})",
    )
    storage = local.add_mutually_exclusive_group()
    storage.add_argument(
        "--data-dir", type=Path, default=str(default_data_dir(env)),
        help=f"where the stack keeps its state across restarts and its state file, read by the CLI and `lakelet gc run` (env {ENV_DATA_DIR}, else a per-user folder)",
    )
    storage.add_argument(
        "--ephemeral", action="store_true",
        help="keep everything in memory and lose it on stop (tests use this); no data directory is touched",
    )
    local.add_argument(
        "--sample-data", action="store_true",
        help="create the quickstart repository with sample data, once per data directory (make run passes it)",
    )
    local.add_argument(
        "--verbose", action="store_true",
        help="also print each request's metrics (the EMF line CloudWatch reads) and moto's own request log",
    )
    from lakelet.stack.local_gc import add_gc_command  # `lakelet gc run`; imports nothing heavy until it runs

    add_gc_command(commands, env)
    return parser


def local_data_dir(options: argparse.Namespace) -> Path | None:
    """The data directory of ``lakelet local``: None with --ephemeral, else --data-dir (whose default is
    $LAKELET_DATA_DIR or the per-user folder, see lakelet.stack.statefile.default_data_dir)."""
    if options.ephemeral:
        return None
    return Path(options.data_dir).expanduser()


def run_local(options: argparse.Namespace) -> int:
    """Start the stack, print how to connect, serve until SIGINT or SIGTERM, then stop it and return 0."""
    try:
        from lakelet.stack.local import Credentials, LocalStack
        from lakelet.persistence import DataDirError
    except ImportError as error:  # `pip install .` alone: the CLI without the local stack
        print(f"lakelet local: the local stack is not installed ({error}): pip install 'lakelet[local]' "
              "(make run does)", file=sys.stderr)
        return 1
    from lakelet.stack.banner import connection_info

    # One line per request on stderr: the API's (the dev server's own log) and the S3 gateway's (below).
    # moto's HTTP server logs every AWS call the app makes at INFO: only with --verbose.
    logging.getLogger("werkzeug").setLevel(logging.INFO if options.verbose else logging.WARNING)
    _log_gateway_requests()
    data_dir = local_data_dir(options)
    running = read_state(data_dir) if data_dir is not None else None
    if running is not None and running.get("pid") != os.getpid():
        print(f"lakelet local: cannot start: another stack (pid {running.get('pid')}, API at "
              f"{running.get('api_url')}) uses the data directory {options.data_dir}; stop it or pass another "
              "--data-dir", file=sys.stderr)
        return 1
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
        data_dir=local_data_dir(options),
        sample_data=options.sample_data,
        verbose=options.verbose,
    )
    try:
        try:
            stack.start()
        except (OSError, DataDirError) as error:
            print(f"lakelet local: cannot start: {error}", file=sys.stderr)
            return 1
        if stack.persistence is not None:
            print(f"Data directory {stack.data_dir}: {stack.persistence.recovery.summary()}", flush=True)
        print(connection_info(stack), flush=True)
        # A timed wait, so the main thread returns to the interpreter often enough to run signal handlers.
        while not stop_requested.wait(0.5):
            pass
        print("Stopping...", flush=True)
        return 0
    finally:
        stack.stop()
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _log_gateway_requests() -> None:
    """The S3 gateway logs each request at INFO on ``lakelet.stack.s3server``; print those lines as the API does."""
    gateway = logging.getLogger("lakelet.stack.s3server")
    if not gateway.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(message)s"))
        gateway.addHandler(handler)
    gateway.setLevel(logging.INFO)
    gateway.propagate = False


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``lakelet`` console script and of ``python -m lakelet``."""
    options = build_parser().parse_args(argv)
    if options.command == "local":
        return run_local(options)
    if getattr(options, "handler", None) is not None:
        return int(options.handler(options))
    raise AssertionError(f"unhandled command {options.command!r}")  # argparse rejects unknown commands
