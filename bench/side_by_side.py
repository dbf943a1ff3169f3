"""Lakelet's ``lakelet up`` beside the real lakeFS on the same machine, driven by the same client (issue 43).

Runs when ``LAKEFS_BIN`` names a lakeFS server binary (built from lakeFS's source beside the project, never part of
it); says it was skipped otherwise. Both servers start fresh in temporary directories: lakeFS with its local KV
store and local blockstore, Lakelet as ``lakelet up`` in a process of its own (a data directory, so journaled as a
user runs it). One plain-HTTP client (``requests``, a kept-alive session each) calls both, alternating call by
call (the order flips every round), and the table gives each operation's p50 on either side and their ratio. Then
the bulk rows, one server at a time: uploads through the API and through the S3 gateway from 8 threads, and a
commit of many staged objects.

Usage: .venv/bin/python bench/side_by_side.py [--rounds N] [--bulk-uploads N] [--bulk-commit N] [--out PATH]
       (``make bench-lakefs``; ``--quick`` for a small run). The last line printed is the result as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import requests
from botocore.exceptions import ClientError

PROJECT = Path(__file__).resolve().parent.parent
REPO = "sbs"
# 20 characters, as AWS's keys are: lakeFS's S3 gateway reads at most 20 in a SigV4 credential (a longer key
# fails to parse and every gateway request answers MissingFields).
ACCESS_KEY_ID = "AKIAIOSFOLSIDEBYSIDE"
SECRET_ACCESS_KEY = "SideBySideBenchSecretKeyOnlyForLocalRuns01"
# The goal (issue 43): every per-operation p50 within this many times lakeFS's.
WORST_RATIO = 3.0
OPERATIONS = (
    "stat object",
    "get small object",
    "upload small object",
    "list 1,000 objects",
    "create branch",
    "commit of 1 change",
    "log of 100 commits",
    "diff of 1 change",
    "diff of 1 change (uncommitted)",
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_healthy(url: str, process: subprocess.Popen[bytes], what: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited with {process.returncode}")
        try:
            if requests.get(f"{url}/api/v1/healthcheck", timeout=2).status_code == 204:
                return
        except requests.RequestException:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"{what} did not answer its healthcheck within {timeout} s")


@dataclass
class Server:
    """One running server: its API root, its S3 endpoint and the namespace a new repository takes."""

    name: str
    url: str
    s3_url: str
    namespace: str
    process: subprocess.Popen[bytes]
    session: requests.Session = field(default_factory=requests.Session)

    def __post_init__(self) -> None:
        self.session.auth = (ACCESS_KEY_ID, SECRET_ACCESS_KEY)

    def call(self, method: str, path: str, expect: int, **kwargs: Any) -> Any:
        response = self.session.request(method, f"{self.url}/api/v1{path}", timeout=600, **kwargs)
        if response.status_code != expect:
            raise RuntimeError(f"{self.name}: {method} {path}: {response.status_code} {response.text[:500]}")
        return response

    def upload(self, branch: str, path: str, data: bytes, session: requests.Session | None = None) -> None:
        response = (session or self.session).post(
            f"{self.url}/api/v1/repositories/{REPO}/branches/{branch}/objects",
            params={"path": path},
            data=data,
            headers={"Content-Type": "application/octet-stream"},
            timeout=600,
        )
        if response.status_code != 201:
            raise RuntimeError(f"{self.name}: upload {path}: {response.status_code} {response.text[:500]}")

    def commit(self, branch: str, message: str) -> str:
        body = self.call("POST", f"/repositories/{REPO}/branches/{branch}/commits", 201, json={"message": message})
        return str(body.json()["id"])


@contextmanager
def lakefs_server(binary: str, work: Path) -> Iterator[Server]:
    port = free_port()
    env = {
        **os.environ,
        "LAKEFS_LISTEN_ADDRESS": f"127.0.0.1:{port}",
        "LAKEFS_DATABASE_TYPE": "local",
        "LAKEFS_DATABASE_LOCAL_PATH": str(work / "lakefs-metadata"),
        "LAKEFS_BLOCKSTORE_TYPE": "local",
        "LAKEFS_BLOCKSTORE_LOCAL_PATH": str(work / "lakefs-block"),
        "LAKEFS_AUTH_ENCRYPT_SECRET_KEY": "side-by-side-bench-local-only-secret",
        "LAKEFS_INSTALLATION_USER_NAME": "admin",
        "LAKEFS_INSTALLATION_ACCESS_KEY_ID": ACCESS_KEY_ID,
        "LAKEFS_INSTALLATION_SECRET_ACCESS_KEY": SECRET_ACCESS_KEY,
        "LAKEFS_STATS_ENABLED": "false",
        "LAKEFS_USAGE_REPORT_ENABLED": "false",
        "LAKEFS_SECURITY_CHECK_LATEST_VERSION": "false",
        "LAKEFS_LOGGING_LEVEL": "WARN",
    }
    log = (work / "lakefs.log").open("wb")
    process = subprocess.Popen([binary, "run"], env=env, stdout=log, stderr=subprocess.STDOUT, cwd=work)
    try:
        url = f"http://127.0.0.1:{port}"
        wait_healthy(url, process, "lakeFS")
        yield Server("lakeFS", url, url, "local://sbs", process)
    finally:
        stop(process)
        log.close()


@contextmanager
def lakelet_server(work: Path) -> Iterator[Server]:
    api, s3 = free_port(), free_port()
    env = {
        **os.environ,
        "PYTHONPATH": str(PROJECT),
        "LAKELET_ACCESS_KEY_ID": ACCESS_KEY_ID,
        "LAKELET_SECRET_ACCESS_KEY": SECRET_ACCESS_KEY,
    }
    command = [sys.executable, "-m", "lakelet", "up", "--api-port", str(api), "--s3-port", str(s3)]
    command += ["--data-dir", str(work / "lakelet-data")]
    log = (work / "lakelet.log").open("wb")
    process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=PROJECT)
    try:
        url = f"http://127.0.0.1:{api}"
        wait_healthy(url, process, "lakelet up")
        namespace = requests.get(f"{url}/api/v1/config", auth=(ACCESS_KEY_ID, SECRET_ACCESS_KEY), timeout=30).json()
        prefix = namespace["storage_config"]["default_namespace_prefix"]
        yield Server("Lakelet", url, f"http://127.0.0.1:{s3}", f"{prefix}/sbs", process)
    finally:
        stop(process)
        log.close()


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def prepare(server: Server, list_size: int) -> None:
    """The repository every operation reads: list_size objects under list/, 101 commits for the log."""
    server.call("POST", "/repositories", 201, json={"name": REPO, "storage_namespace": server.namespace})
    with ThreadPoolExecutor(8) as pool:
        sessions = threading.local()

        def one(i: int) -> None:
            if not hasattr(sessions, "s"):
                sessions.s = requests.Session()
                sessions.s.auth = (ACCESS_KEY_ID, SECRET_ACCESS_KEY)
            server.upload("main", f"list/{i:05d}", b"x" * 100, sessions.s)

        list(pool.map(one, range(list_size)))
    server.commit("main", "seed")
    for i in range(100):
        server.upload("main", f"log/{i % 10}", f"v{i}".encode())
        server.commit("main", f"log {i}")


class Operations:
    """Each operation on one server; ``run(name, i)`` times one call (the i-th of the run), setup excluded."""

    def __init__(self, server: Server) -> None:
        self.s = server

    def run(self, name: str, i: int) -> float:
        s = self.s
        q = f"/repositories/{REPO}"
        if name == "stat object":
            return timed(
                lambda: s.call("GET", f"{q}/refs/main/objects/stat", 200, params={"path": f"list/{i % 1000:05d}"})
            )
        if name == "get small object":
            return timed(lambda: s.call("GET", f"{q}/refs/main/objects", 200, params={"path": f"list/{i % 1000:05d}"}))
        if name == "upload small object":
            return timed(lambda: s.upload("main", f"up/{i}", b"small object"))
        if name == "list 1,000 objects":
            return timed(
                lambda: s.call("GET", f"{q}/refs/main/objects/ls", 200, params={"prefix": "list/", "amount": 1000})
            )
        if name == "create branch":
            return timed(lambda: s.call("POST", f"{q}/branches", 201, json={"name": f"b{i}", "source": "main"}))
        if name == "commit of 1 change":
            s.upload("main", f"c/{i}", b"one change")
            return timed(lambda: s.commit("main", f"one change {i}"))
        if name == "log of 100 commits":
            return timed(lambda: s.call("GET", f"{q}/refs/main/commits", 200, params={"amount": 100}))
        if name == "diff of 1 change":
            return timed(lambda: s.call("GET", f"{q}/refs/main~1/diff/main", 200, params={"amount": 100}))
        if name == "diff of 1 change (uncommitted)":
            s.upload("main", "d/one", f"uncommitted {i}".encode())
            return timed(lambda: s.call("GET", f"{q}/branches/main/diff", 200, params={"amount": 100}))
        raise ValueError(name)


def timed(what: Callable[[], Any]) -> float:
    started = time.perf_counter()
    what()
    return time.perf_counter() - started


def per_operation(servers: list[Server], rounds: int) -> dict[str, dict[str, float]]:
    """Each operation ``rounds`` times on every server, alternating call by call, the order flipped each round;
    one warm-up call each first."""
    ops = [Operations(s) for s in servers]
    table: dict[str, dict[str, float]] = {}
    for name in OPERATIONS:
        times: dict[str, list[float]] = {s.name: [] for s in servers}
        for op in ops:
            op.run(name, 10_000)  # warm: caches a long-running server keeps
        for i in range(rounds):
            order = ops if i % 2 == 0 else ops[::-1]
            for op in order:
                times[op.s.name].append(op.run(name, i))
        table[name] = {side: statistics.median(t) * 1000 for side, t in times.items()}
        print(f"  {name}: " + ", ".join(f"{side} {ms:.1f} ms" for side, ms in table[name].items()), file=sys.stderr)
    return table


def bulk_api(server: Server, count: int, threads: int, branch: str = "main", prefix: str = "bulk-api") -> float:
    """Objects a second staged by ``threads`` threads each uploading through the API."""
    local = threading.local()

    def one(i: int) -> None:
        if not hasattr(local, "s"):
            local.s = requests.Session()
            local.s.auth = (ACCESS_KEY_ID, SECRET_ACCESS_KEY)
        server.upload(branch, f"{prefix}/{i:06d}", b"bulk object " + str(i).encode(), local.s)

    started = time.perf_counter()
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(one, range(count)))
    return count / (time.perf_counter() - started)


def s3_client(server: Server, threads: int) -> Any:
    import boto3
    from botocore.config import Config

    return boto3.client(
        "s3",
        endpoint_url=server.s3_url,
        region_name="us-east-1",
        aws_access_key_id=ACCESS_KEY_ID,
        aws_secret_access_key=SECRET_ACCESS_KEY,
        # Checksums only where S3 requires them: lakeFS's gateway refuses botocore's default streamed CRC32 trailer.
        config=Config(
            s3={"addressing_style": "path"},
            max_pool_connections=threads,
            retries={"max_attempts": 1},
            request_checksum_calculation="when_required",
            response_checksum_validation="when_required",
        ),
    )


def bulk_gateway(server: Server, count: int, threads: int, branch: str = "main", prefix: str = "bulk-s3") -> float:
    """Objects a second staged through the S3 gateway's PutObject from ``threads`` threads."""
    s3 = s3_client(server, threads)

    def one(i: int) -> None:
        s3.put_object(Bucket=REPO, Key=f"{branch}/{prefix}/{i:06d}", Body=b"bulk object " + str(i).encode())

    started = time.perf_counter()
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(one, range(count)))
    return count / (time.perf_counter() - started)


def bulk_commit(server: Server, count: int, threads: int) -> float:
    """Seconds for one commit of ``count`` staged objects (staged through the API, not timed)."""
    server.call("POST", f"/repositories/{REPO}/branches", 201, json={"name": "bulk-commit", "source": "main"})
    bulk_api(server, count, threads, branch="bulk-commit", prefix="many")
    return timed(lambda: server.commit("bulk-commit", f"{count} objects"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=30, help="calls of each operation on each server")
    parser.add_argument("--list-size", type=int, default=1000)
    parser.add_argument("--bulk-uploads", type=int, default=2000, help="objects of each bulk upload row")
    parser.add_argument("--bulk-commit", type=int, default=10_000, help="staged objects of the bulk commit row")
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--quick", action="store_true", help="5 rounds, 200 uploads, a commit of 1,000")
    parser.add_argument("--out", type=Path, help="also write the JSON result here")
    parser.add_argument("--no-bulk", action="store_true", help="the per-operation table only")
    args = parser.parse_args(argv)
    if args.quick:
        args.rounds, args.bulk_uploads, args.bulk_commit = 5, 200, 1000
    binary = os.environ.get("LAKEFS_BIN", "")
    if not binary or not Path(binary).is_file():
        why = "LAKEFS_BIN is not set" if not binary else f"LAKEFS_BIN={binary} is not a file"
        print(f"side-by-side bench skipped: {why} (build lakeFS from its source beside the project)")
        print(json.dumps({"skipped": why}))
        return 0
    work = Path(tempfile.mkdtemp(prefix="lakelet-sbs-"))
    result: dict[str, Any] = {"rounds": args.rounds, "threads": args.threads}
    try:
        with lakefs_server(binary, work) as lakefs, lakelet_server(work) as lakelet:
            servers = [lakelet, lakefs]
            for server in servers:
                print(f"preparing {server.name}", file=sys.stderr)
                prepare(server, args.list_size)
            table = per_operation(servers, args.rounds)
            result["operations"] = {
                name: {
                    "lakelet_ms": row["Lakelet"],
                    "lakefs_ms": row["lakeFS"],
                    "ratio": row["Lakelet"] / row["lakeFS"],
                }
                for name, row in table.items()
            }
            bulk: dict[str, dict[str, float | None]] = {}
            for server in [] if args.no_bulk else servers:  # one at a time
                print(f"bulk rows on {server.name}", file=sys.stderr)
                bulk.setdefault("uploads through the API (objects/s)", {})[server.name] = bulk_api(
                    server, args.bulk_uploads, args.threads
                )
                bulk.setdefault("uploads through the S3 gateway (objects/s)", {})[server.name] = refused_as_none(
                    bulk_gateway, server, args.bulk_uploads, args.threads
                )
                bulk.setdefault(f"commit of {args.bulk_commit:,} objects (s)", {})[server.name] = bulk_commit(
                    server, args.bulk_commit, args.threads
                )
                figures = ", ".join(f"{k} {_figure(v[server.name])}" for k, v in bulk.items())
                print(f"  {server.name}: {figures}", file=sys.stderr)
            result["bulk"] = {
                name: {
                    "lakelet": row["Lakelet"],
                    "lakefs": row["lakeFS"],
                    "ratio": _ratio(row["Lakelet"], row["lakeFS"]),
                }
                for name, row in bulk.items()
            }
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(render(result))
    if args.out:
        args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result))
    return 0


def refused_as_none(run: Callable[[Server, int, int], float], server: Server, count: int, threads: int) -> float | None:
    """The row's figure, or None where the server refused the requests: the row then says so instead of ending
    the bench (lakeFS's gateway refused every PutObject while the bench's key was longer than 20 characters)."""
    try:
        return run(server, count, threads)
    except ClientError as e:
        print(f"  {server.name} refused the row: {e}", file=sys.stderr)
        return None


def _ratio(lakelet: float | None, lakefs: float | None) -> float | None:
    return None if lakelet is None or lakefs is None else lakelet / lakefs


def _figure(value: float | None) -> str:
    return "refused" if value is None else f"{value:.2f}"


def render(result: dict[str, Any]) -> str:
    lines = ["| operation | Lakelet p50 | lakeFS p50 | ratio |", "|---|---|---|---|"]
    for name, row in result["operations"].items():
        mark = "" if row["ratio"] <= WORST_RATIO else " (over 3x)"
        lines.append(f"| {name} | {row['lakelet_ms']:.1f} ms | {row['lakefs_ms']:.1f} ms | {row['ratio']:.1f}x{mark} |")
    lines += ["", "| bulk | Lakelet | lakeFS | Lakelet / lakeFS |", "|---|---|---|---|"]
    for name, row in result["bulk"].items():
        cells = [_figure(row["lakelet"]), _figure(row["lakefs"]), _figure(row["ratio"])]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
