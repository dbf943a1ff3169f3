"""Recursive upload and download with the ``lakelet`` CLI against ``aws s3 sync`` through the S3 gateway, in one
run on one ``lakelet up`` stack.

Usage: .venv/bin/python bench/cli_transfer.py [SMALL_COUNT] [BIG_COUNT] [BIG_MB]
       (default 1,000 files of 1 KiB and 10 files of 50 MB)

Each side runs as a shell runs it (a fresh process, start-up included): ``lakelet fs upload -r`` /
``fs download -r`` with their default parallelism, and ``aws s3 sync`` with its default 10 threads, to and from
the same stack (the same API process serves the lakeFS API and the gateway; S3 is moto). The two sides take
turns per data set, so a slow moment of the shared machine hits both. Prints files/s, MB/s and the ratio of the
CLI's rate to the gateway's (above 1: the CLI is faster).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent
AWS = Path(sys.executable).parent / "aws"


def start_stack(log: Path) -> tuple[subprocess.Popen[bytes], dict[str, str]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LAKELET_", "LAKECTL_"))}
    env["LAKELET_DATA_DIR"] = str(log / "data")
    with open(log / "stack.out", "wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "lakelet", "up", "--api-port", "0", "--s3-port", "0", "--moto-port", "0"],
            cwd=PROJECT,
            env=env,
            stdout=out,
            stderr=subprocess.DEVNULL,
        )
    deadline = time.monotonic() + 120
    while "Press Ctrl-C to stop." not in (text := (log / "stack.out").read_text()):
        if process.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"lakelet up did not start:\n{text}")
        time.sleep(0.2)

    def field(pattern: str) -> str:
        match = re.search(pattern, text, re.MULTILINE)
        assert match, pattern
        return match.group(1)

    return process, {
        "api": field(r"lakeFS API\s+(http://\S+)/api/v1"),
        "s3": field(r"S3 gateway\s+(http://\S+)"),
        "key": field(r"Access key ID\s+(\S+)"),
        "secret": field(r"Secret access key\s+(\S+)"),
    }


def timed(args: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(args, env=env, cwd=PROJECT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args[:4])} failed: {done.stderr.decode()[-2000:]}")
    return elapsed


def rate(count: int, total: int, seconds: float) -> str:
    return f"{count / seconds:7.1f} f/s {total / seconds / 1e6:6.1f} MB/s"


def make_files(root: Path, count: int, size: int) -> int:
    for i in range(count):
        path = root / f"d{i % 10}" / f"f{i:05d}.bin"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(os.urandom(size))
    return count * size


def main(small_count: int, big_count: int, big_mb: int) -> None:
    work = Path(tempfile.mkdtemp(prefix="lakelet-bench-cli-"))
    process, stack = start_stack(work)
    try:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("LAKELET_", "LAKECTL_"))}
        env |= {
            "HOME": str(work),
            "LAKECTL_SERVER_ENDPOINT_URL": stack["api"],
            "LAKECTL_CREDENTIALS_ACCESS_KEY_ID": stack["key"],
            "LAKECTL_CREDENTIALS_SECRET_ACCESS_KEY": stack["secret"],
            "AWS_ACCESS_KEY_ID": stack["key"],
            "AWS_SECRET_ACCESS_KEY": stack["secret"],
            "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_CONFIG_FILE": "/dev/null",
            "AWS_SHARED_CREDENTIALS_FILE": "/dev/null",
        }
        lakelet = [sys.executable, "-m", "lakelet"]
        timed([*lakelet, "repo", "create", "lakefs://bench"], env)
        aws = [str(AWS), "s3", "sync", "--only-show-errors", "--endpoint-url", stack["s3"]]
        print(f"{'data set':<22} {'operation':<9} {'lakelet':>16} {'aws s3 sync':>16}  ratio (lakelet/aws)")
        for name, count, size in (("small", small_count, 1024), ("big", big_count, big_mb * 1000 * 1000)):
            source = work / f"src-{name}"
            total = make_files(source, count, size)
            label = f"{count} x {size // 1000 if size < 10**6 else size // 10**6} {'KB' if size < 10**6 else 'MB'}"
            up_cli = timed(
                [*lakelet, "fs", "upload", "-r", "--source", str(source), f"lakefs://bench/main/cli-{name}/"], env
            )
            up_aws = timed([*aws, str(source), f"s3://bench/main/aws-{name}/"], env)
            down_cli = timed(
                [*lakelet, "fs", "download", "-r", f"lakefs://bench/main/cli-{name}/", str(work / f"cli-back-{name}")],
                env,
            )
            down_aws = timed([*aws, f"s3://bench/main/aws-{name}/", str(work / f"aws-back-{name}")], env)
            for operation, cli_s, aws_s in (("upload", up_cli, up_aws), ("download", down_cli, down_aws)):
                print(
                    f"{label:<22} {operation:<9} {rate(count, total, cli_s):>16} {rate(count, total, aws_s):>16}"
                    f"  {aws_s / cli_s:5.2f}x",
                    flush=True,
                )
            for directory in ("cli-back-", "aws-back-"):
                back = work / (directory + name)
                assert sum(1 for p in back.rglob("*") if p.is_file()) == count, f"{back} is incomplete"
            shutil.rmtree(source)
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    arguments = [int(a) for a in sys.argv[1:4]]
    main(*(arguments + [1000, 10, 50][len(arguments) :]))
