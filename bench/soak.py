"""A soak of ``lakelet local``: mixed load for a number of minutes, printing the stack's resident memory (RSS) as
it goes, so a reader sees whether it levels off. Not a test (it runs for minutes); not part of ``make bench``.

    .venv/bin/python bench/soak.py --minutes 30 [--workers 4] [--data-dir DIR] [--port 8300]
    .venv/bin/python bench/soak.py --minutes 3 --in-process --tracemalloc   # where the memory goes

By default the stack is a ``python -m lakelet local`` child process (with a data directory of its own, removed
at the end unless given), and RSS is its VmRSS. Each worker loops over: uploads through the API and the S3
gateway, stats and reads, a listing, a commit, a branch created, written, merged and deleted, and deletes. RSS
is printed at the start (after a warm-up round), then every ``--every`` minutes (10 by default, or a tenth of a
shorter run), and at the end, with the number of operations done so far.

``--in-process`` runs the stack in this process instead; with ``--tracemalloc`` the 15 source lines whose
allocations grew most between the first report and the last are printed at the end.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import requests

PROJECT = Path(__file__).resolve().parent.parent
KEY, SECRET = "AKIASOAKTESTADMIN000", "soak/test+secret/key/0123456789abcdef"


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for {pid}")


class Load:
    """One worker's loop of mixed operations against the API and the S3 gateway."""

    def __init__(self, api: str, s3: str, repo: str, worker: int) -> None:
        self.api, self.repo, self.worker = api + "/api/v1", repo, worker
        self.session = requests.Session()
        self.session.auth = (KEY, SECRET)
        import boto3
        from botocore.config import Config

        self.s3 = boto3.client(
            "s3",
            endpoint_url=s3,
            region_name="us-east-1",
            aws_access_key_id=KEY,
            aws_secret_access_key=SECRET,
            config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 5, "mode": "standard"}),
        )
        self.operations = 0

    def call(self, method: str, path: str, ok: tuple[int, ...] = (200, 201, 204), **kwargs: Any) -> Any:
        response = self.session.request(method, self.api + path, timeout=120, **kwargs)
        self.operations += 1
        if response.status_code not in ok:
            raise RuntimeError(f"{method} {path}: {response.status_code} {response.text[:200]}")
        return response.json() if response.content and "json" in response.headers.get("content-type", "") else None

    def round(self, n: int) -> None:
        repo, me = self.repo, f"w{self.worker}"
        objects = f"/repositories/{repo}/branches/main/objects"
        for i in range(8):
            body = os.urandom(256 + 64 * i) + f"{me}-{n}-{i}".encode()
            self.call(
                "POST",
                objects,
                params={"path": f"{me}/api/{n % 50}/{i}"},
                data=body,
                headers={"Content-Type": "application/octet-stream"},
            )
            self.s3.put_object(Bucket=repo, Key=f"main/{me}/gw/{n % 50}/{i}", Body=body)
            self.operations += 1
        for i in range(4):
            self.call("GET", f"/repositories/{repo}/refs/main/objects/stat", params={"path": f"{me}/api/{n % 50}/{i}"})
            self.s3.get_object(Bucket=repo, Key=f"main/{me}/gw/{n % 50}/{i}")["Body"].read()
            self.operations += 1
        self.call("GET", f"/repositories/{repo}/refs/main/objects/ls", params={"prefix": f"{me}/", "amount": 100})
        self.s3.list_objects_v2(Bucket=repo, Prefix=f"main/{me}/gw/", MaxKeys=100)
        self.operations += 1
        self.call(
            "POST",
            f"/repositories/{repo}/branches/main/commits",
            ok=(201, 400, 409, 412, 429),
            json={"message": f"{me} round {n}"},
        )
        branch = f"{me}-b{n}"
        self.call("POST", f"/repositories/{repo}/branches", json={"name": branch, "source": "main"})
        self.call(
            "POST",
            f"/repositories/{repo}/branches/{branch}/objects",
            params={"path": f"{me}/branch/{n % 20}"},
            data=f"on a branch {n}".encode(),
            headers={"Content-Type": "application/octet-stream"},
        )
        self.call("POST", f"/repositories/{repo}/branches/{branch}/commits", json={"message": "branch work"})
        # 400: main has uncommitted changes (another worker's uploads), which lakeFS refuses to merge into.
        self.call("POST", f"/repositories/{repo}/refs/{branch}/merge/main", ok=(200, 400, 409, 412, 429), json={})
        self.call("DELETE", f"/repositories/{repo}/branches/{branch}")
        self.call("DELETE", objects, params={"path": f"{me}/api/{n % 50}/0"}, ok=(204, 404))
        self.s3.delete_object(Bucket=repo, Key=f"main/{me}/gw/{n % 50}/1")
        self.operations += 1


def _start_process(port: int, data_dir: Path) -> subprocess.Popen[bytes]:
    data_dir.parent.mkdir(parents=True, exist_ok=True)
    log = open(data_dir.parent / f"{data_dir.name}.log", "wb")  # noqa: SIM115 - lives as long as the stack
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "lakelet",
            "up",
            "--api-port",
            str(port),
            "--s3-port",
            str(port + 1),
            "--moto-port",
            str(port + 2),
            "--data-dir",
            str(data_dir),
            "--access-key-id",
            KEY,
            "--secret-access-key",
            SECRET,
        ],
        cwd=PROJECT,
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        try:
            if requests.get(f"http://127.0.0.1:{port}/api/v1/healthcheck", timeout=2).status_code < 300:
                return process
        except requests.RequestException:
            pass
        if process.poll() is not None:
            raise SystemExit(f"lakelet up exited with {process.returncode}; see {log.name}")
        time.sleep(0.5)
    process.kill()
    raise SystemExit("lakelet up did not start in 180 s")


def _disk_mib(path: Path) -> float:
    """Bytes of the files under ``path`` (the data directory, its spill directory), in MiB."""
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):  # removed meanwhile (a snapshot replaced, a value deleted)
                total += os.stat(os.path.join(root, name)).st_size
    return total / 2**20


def _kinds() -> dict[str, int]:
    """How many objects of each type the collector tracks (in-process runs): what piles up shows here."""
    import collections
    import gc

    gc.collect()
    return dict(collections.Counter(type(o).__qualname__ for o in gc.get_objects()))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--every", type=float, default=None, help="minutes between RSS reports")
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--port", type=int, default=8300, help="API port; the gateway and moto take the next two")
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--in-process", action="store_true")
    parser.add_argument("--tracemalloc", action="store_true")
    parser.add_argument(
        "--out", type=Path, default=PROJECT / "bench" / "soak-results.json", help="where the rows are written"
    )
    args = parser.parse_args()
    every = args.every if args.every is not None else (5.0 if args.minutes >= 30 else args.minutes / 10)
    scratch = Path(tempfile.mkdtemp(prefix="lakelet-soak-"))
    data_dir = args.data_dir or scratch / "data"
    stack: Any = None
    process: subprocess.Popen[bytes] | None = None
    if args.in_process:
        sys.path.insert(0, str(PROJECT))
        from lakelet.stack.local import Credentials, LocalStack

        stack = LocalStack(
            api_port=args.port, s3_port=args.port + 1, credentials=Credentials(KEY, SECRET), data_dir=data_dir
        ).start()
        pid, api, s3 = os.getpid(), stack.endpoint, stack.s3_url
        if args.tracemalloc:
            import tracemalloc

            tracemalloc.start(8)  # after the start-up snapshot: forking while it traces has hung here
    else:
        process = _start_process(args.port, data_dir)
        pid, api, s3 = process.pid, f"http://127.0.0.1:{args.port}", f"http://127.0.0.1:{args.port + 1}"
    repo = f"soak-{uuid.uuid4().hex[:6]}"
    try:
        setup = Load(api, s3, repo, 0)
        setup.call("POST", "/repositories", json={"name": repo, "storage_namespace": f"s3://lakelet-local/{repo}"})
        workers = [Load(api, s3, repo, w) for w in range(args.workers)]
        for worker in workers:
            worker.round(0)  # warm-up: imports, caches, first tables' partitions
        stop = threading.Event()
        errors: list[str] = []

        def run(worker: Load) -> None:
            n = 1
            while not stop.is_set():
                try:
                    worker.round(n)
                except Exception as error:  # noqa: BLE001 - counted and printed; the soak goes on
                    errors.append(str(error)[:200])
                n += 1

        threads = [threading.Thread(target=run, args=(w,), daemon=True) for w in workers]
        started = time.monotonic()
        first = None
        rows: list[dict[str, Any]] = []

        def report(minute: float, ops: int, extra: str = "") -> None:
            row = {
                "minute": round(minute, 1),
                "rss_mib": round(rss_mib(pid)),
                "operations": ops,
                "errors": len(errors),
                "data_dir_mib": round(_disk_mib(data_dir), 1),
                "spill_mib": round(_disk_mib(data_dir / "spill"), 1),
            }
            rows.append(row)
            print(
                f"{row['minute']:7.1f} {row['rss_mib']:8d} {ops:11d} {len(errors):7d} {row['data_dir_mib']:9.0f}"
                f" {row['spill_mib']:9.0f}{extra}",
                flush=True,
            )

        print(
            f"{'minute':>7} {'RSS MiB':>8} {'operations':>11} {'errors':>7} {'data MiB':>9} {'spill MiB':>9}",
            flush=True,
        )
        report(0.0, 0)
        if args.tracemalloc:
            import tracemalloc

            first = tracemalloc.take_snapshot()
        kinds_before = _kinds() if args.in_process else None
        for thread in threads:
            thread.start()
        next_report = every
        while True:
            elapsed = (time.monotonic() - started) / 60
            if elapsed >= next_report or elapsed >= args.minutes:
                ops = sum(w.operations for w in workers)
                extra = ""
                if args.in_process:
                    import pyarrow

                    pool = pyarrow.default_memory_pool()
                    extra = f"  arrow {pool.backend_name} {pool.bytes_allocated() / 2**20:.0f} MiB"
                report(elapsed, ops, extra)
                next_report += every
            if elapsed >= args.minutes:
                break
            time.sleep(1)
        stop.set()
        for thread in threads:
            thread.join(timeout=120)
        for line in sorted(set(errors))[:5]:
            print("error:", line)
        if kinds_before is not None:
            kinds_after = _kinds()
            grown = sorted(((kinds_after[k] - kinds_before.get(k, 0), k) for k in kinds_after), reverse=True)
            print("objects that grew most in number:", ", ".join(f"{k} +{n}" for n, k in grown[:12]))
            import ctypes
            import gc

            gc.collect()
            ctypes.CDLL("libc.so.6").malloc_trim(0)
            before = rss_mib(pid)
            stores = [o for o in gc.get_objects() if type(o).__name__ == "CommittedStorage"]
            rows = [getattr(o._ranges, "_weight", 0) for o in stores]
            for store in stores:
                store.clear_cache()
            gc.collect()
            ctypes.CDLL("libc.so.6").malloc_trim(0)
            print(f"RSS {before:.0f} MiB with the range caches ({rows} rows), {rss_mib(pid):.0f} MiB without")
        if first is not None:
            import tracemalloc

            for stat in tracemalloc.take_snapshot().compare_to(first, "traceback")[:15]:
                print(f"{stat.size_diff / 1024 / 1024:+8.1f} MiB {stat.count_diff:+8d} blocks")
                for line in stat.traceback.format()[-8:]:
                    print("     ", line)
        print(json.dumps({"pid": pid, "data_dir": str(data_dir)}))
        result = {
            "generated_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "minutes": args.minutes,
            "workers": args.workers,
            "in_process": args.in_process,
            "machine": {"cpus": os.cpu_count(), "load_average": os.getloadavg()},
            "rows": rows,
            "errors": sorted(set(errors))[:20],
        }
        args.out.write_text(json.dumps(result, indent=2) + "\n")
        print(f"rows written to {args.out}")
    finally:
        if stack is not None:
            stack.stop()
        if process is not None:
            process.terminate()
            process.wait(timeout=60)
        if args.data_dir is None:
            shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
