"""What persistence costs a small upload: an ephemeral stack and a persistent one, side by side in one run.

Usage: .venv/bin/python bench/persistence.py [N] [SIZE]   (default 200 uploads of 1,024 bytes)

Two ``lakelet up`` processes run at once, one ``--ephemeral`` and one with a fresh ``--data-dir`` (journal
and group-committed fsync on); the official lakefs client uploads the same objects to each, one request at a
time, alternating between them, so a slow moment of the machine hits both. An upload through the client is
what users do: GET /config once, then per object a presigned upload link, a PUT to moto and a link call (each
of the moto writes journaled on the persistent side). Prints p50 and p95 latency per side and the p50 ratio,
then a commit of everything on each side, and the time the persistent stack takes to stop (final snapshot) and
to start again from its data directory. Last, the same for single S3 PUTs sent straight to each moto server
(boto3): the journaling middleware's own cost per write, without the API around it.
"""

from __future__ import annotations

import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import boto3
import lakefs
from botocore.config import Config
from lakefs.client import Client

PROJECT_DIR = Path(__file__).resolve().parent.parent
_API = re.compile(r"^\s*lakeFS API\s+(?P<url>http://\S+)/api/v1\s*$", re.MULTILINE)
_KEY = re.compile(r"^\s*Access key ID\s+(\S+)", re.MULTILINE)
_SECRET = re.compile(r"^\s*Secret access key\s+(\S+)", re.MULTILINE)
_MOTO = re.compile(r"moto at (http://[\d.:]+)")


class Stack:
    """``python -m lakelet up`` on free ports with ARGS, until stop()."""

    def __init__(self, log: Path, *args: str) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("LAKELET_")}
        self.out = log.with_suffix(".out")
        self.started = time.perf_counter()
        with open(self.out, "wb") as out, open(log.with_suffix(".err"), "wb") as err:
            self.process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "lakelet",
                    "local",
                    "--api-port",
                    "0",
                    "--s3-port",
                    "0",
                    "--moto-port",
                    "0",
                    *args,
                ],
                cwd=PROJECT_DIR,
                env=env,
                stdout=out,
                stderr=err,
                stdin=subprocess.DEVNULL,
            )
        while "Press Ctrl-C to stop." not in (text := self.out.read_text()):
            if self.process.poll() is not None:
                raise RuntimeError(f"lakelet up {args} exited: {text}")
            time.sleep(0.05)
        self.ready_seconds = time.perf_counter() - self.started
        api, key, secret = _API.search(text), _KEY.search(text), _SECRET.search(text)
        assert api and key and secret, text
        self.client = Client(host=api.group("url"), username=key.group(1), password=secret.group(1))
        self.banner = text
        moto = _MOTO.search(text)
        self.moto_url = moto.group(1) if moto else None

    def stop(self) -> float:
        started = time.perf_counter()
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=300)
        return time.perf_counter() - started


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def main(count: int, size: int) -> None:
    with tempfile.TemporaryDirectory(prefix="lakelet-bench-persist-") as tmp:
        logs = Path(tmp)
        data_dir = logs / "data"
        sides = {
            "ephemeral": Stack(logs / "ephemeral", "--ephemeral"),
            "persistent": Stack(logs / "persistent", "--data-dir", str(data_dir)),
        }
        try:
            branches = {}
            for name, stack in sides.items():
                prefix = stack.client.storage_config.default_namespace_prefix
                repo = lakefs.Repository("bench", client=stack.client).create(storage_namespace=f"{prefix}/bench")
                branches[name] = repo.branch("main")
                for i in range(10):  # warm: connections, caches of credentials and policies
                    branches[name].object(f"warm/{i}").upload(os.urandom(size))
            latencies: dict[str, list[float]] = {name: [] for name in sides}
            for i in range(count):
                body = os.urandom(size)
                order = list(sides) if i % 2 == 0 else list(reversed(sides))
                for name in order:
                    started = time.perf_counter()
                    branches[name].object(f"data/{i:05d}").upload(body)
                    latencies[name].append(time.perf_counter() - started)
            direct: dict[str, list[float]] = {name: [] for name in sides}
            s3 = {
                name: boto3.client(
                    "s3",
                    endpoint_url=stack.moto_url,
                    region_name="us-east-1",
                    aws_access_key_id="x",
                    aws_secret_access_key="x",
                    config=Config(retries={"max_attempts": 1}),
                )
                for name, stack in sides.items()
                if stack.moto_url
            }
            for i in range(count if len(s3) == 2 else 0):
                body = os.urandom(size)
                for name in list(s3) if i % 2 == 0 else list(reversed(s3)):
                    started = time.perf_counter()
                    s3[name].put_object(Bucket="lakelet-local", Key=f"direct/{i}", Body=body)
                    direct[name].append(time.perf_counter() - started)
            commits = {}
            for name in sides:
                started = time.perf_counter()
                branches[name].commit(message="bench")
                commits[name] = time.perf_counter() - started
        finally:
            stop_seconds = {name: stack.stop() for name, stack in sides.items()}
        journal = sum(p.stat().st_size for p in (data_dir / "moto").glob("*"))
        restarted = Stack(logs / "restart", "--data-dir", str(data_dir))
        restored = [line for line in restarted.banner.splitlines() if line.startswith("Data directory")]
        restarted.stop()

    print(f"{count} uploads of {size} bytes through the lakefs client, alternating between the two stacks")
    for name, values in latencies.items():
        print(
            f"  {name:<11} p50 {1000 * statistics.median(values):6.2f} ms   p95 {1000 * percentile(values, 95):6.2f} ms"
            f"   commit {commits[name]:.2f} s   ready in {sides[name].ready_seconds:.1f} s"
            f"   stop {stop_seconds[name]:.2f} s"
        )
    ratio = statistics.median(latencies["persistent"]) / statistics.median(latencies["ephemeral"])
    print(f"  p50 persistent / ephemeral = {ratio:.3f} (+{100 * (ratio - 1):.1f}%)")
    if all(direct.values()):
        print(f"{count} S3 PUTs of {size} bytes straight to each stack's moto server")
        for name, values in direct.items():
            print(
                f"  {name:<11} p50 {1000 * statistics.median(values):6.2f} ms"
                f"   p95 {1000 * percentile(values, 95):6.2f} ms"
            )
        moto_ratio = statistics.median(direct["persistent"]) / statistics.median(direct["ephemeral"])
        print(f"  p50 persistent / ephemeral = {moto_ratio:.3f} (+{100 * (moto_ratio - 1):.1f}%)")
    print(
        f"  data directory after the clean stop: {journal / 1024:.0f} KiB; restart ready in "
        f"{restarted.ready_seconds:.1f} s ({restored[0] if restored else '?'})"
    )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200, int(sys.argv[2]) if len(sys.argv) > 2 else 1024)
