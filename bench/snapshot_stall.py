"""How long writes to the local stack's moto wait while a snapshot of a ~100 MB state is taken.

    .venv/bin/python bench/snapshot_stall.py [--megabytes 100] [--seconds 2]

A moto server behind lakelet.persistence (as ``lakelet up`` runs it) is filled with ``--megabytes`` of S3 objects;
then one thread writes small objects in a loop while a snapshot is taken, and the slowest write during the
snapshot is compared with the median write before it. Two ways: the snapshot written in this process under the
write lock (what the stack did before snapshot_writer.py, and still does where it cannot fork), and written by a
forked child (what it does on Linux). With ``--spill``, moto's values above 64 KiB live in files
(lakelet/stack/moto_memory.py), as in ``lakelet up``. Not a test (timings); not part of ``make bench``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
import types
from pathlib import Path
from typing import Any

PROJECT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PROJECT))


def _client(url: str, service: str = "s3") -> Any:
    import boto3
    from botocore.config import Config

    return boto3.client(
        service,
        endpoint_url=url,
        region_name="us-east-1",
        aws_access_key_id="k",
        aws_secret_access_key="s",
        config=Config(retries={"max_attempts": 1}),
    )


def measure(megabytes: int, seconds: float, fork: bool, scratch: Path) -> dict[str, float]:
    from lakelet.persistence import Persistence, snapshot_writer

    data_dir = scratch / ("fork" if fork else "in-process")
    persistence = Persistence(data_dir)
    persistence.open()
    server = persistence.server("127.0.0.1", 0)
    server.start()
    host, port = server.get_host_and_port()
    s3 = _client(f"http://{host}:{port}")
    s3.create_bucket(Bucket="bench")
    # Half object bytes (256 KiB each: ranges, uploads), half DynamoDB items (~500 bytes: staged entries,
    # commits), whose many small Python objects are what makes pickling slow.
    body = os.urandom(256 * 1024)
    for i in range(megabytes * 2):
        s3.put_object(Bucket="bench", Key=f"fill/{i}", Body=body)
    dynamodb = _client(f"http://{host}:{port}", "dynamodb")
    dynamodb.create_table(
        TableName="bench",
        KeySchema=[{"AttributeName": "p", "KeyType": "HASH"}, {"AttributeName": "k", "KeyType": "RANGE"}],
        AttributeDefinitions=[
            {"AttributeName": "p", "AttributeType": "S"},
            {"AttributeName": "k", "AttributeType": "S"},
        ],
        BillingMode="PAY_PER_REQUEST",
    )
    for batch in range(megabytes * 40):
        items = [
            {
                "PutRequest": {
                    "Item": {
                        "p": {"S": f"token-{batch % 50}"},
                        "k": {"S": f"key/{batch}/{i}"},
                        "v": {"S": "x" * 400},
                        "n": {"N": str(i)},
                    }
                }
            }
            for i in range(25)
        ]
        dynamodb.batch_write_item(RequestItems={"bench": items})
    latencies: list[tuple[float, float]] = []  # (start, seconds)
    stop = threading.Event()

    def write() -> None:
        writer = _client(f"http://{host}:{port}")
        n = 0
        while not stop.is_set():
            started = time.monotonic()
            writer.put_object(Bucket="bench", Key=f"during/{n % 100}", Body=b"x" * 100)
            latencies.append((started, time.monotonic() - started))
            n += 1

    saved = snapshot_writer.sys
    held: list[float] = []  # how long the snapshot's start held the write lock (the fork, or the whole write)
    real_init = snapshot_writer.SnapshotWriter.__init__

    def timed_init(self: Any, *args: Any) -> None:
        started = time.monotonic()
        real_init(self, *args)
        held.append(time.monotonic() - started)

    snapshot_writer.SnapshotWriter.__init__ = timed_init  # type: ignore[method-assign]
    if not fork:
        snapshot_writer.sys = types.SimpleNamespace(platform="in-process")  # type: ignore[assignment]
    thread = threading.Thread(target=write)
    thread.start()
    try:
        time.sleep(seconds)
        began = time.monotonic()
        persistence.snapshot()
        ended = time.monotonic()
        time.sleep(seconds)
    finally:
        stop.set()
        thread.join()
        snapshot_writer.sys = saved
        snapshot_writer.SnapshotWriter.__init__ = real_init  # type: ignore[method-assign]
        server.stop()
        persistence.close()
    before = [d for s, d in latencies if s + d < began]
    during = [d for s, d in latencies if s < ended and s + d > began]
    size = max(p.stat().st_size for p in (data_dir / "moto").glob("snapshot-*.bin"))
    return {
        "snapshot_mb": size / 1e6,
        "snapshot_s": ended - began,
        "median_write_s": statistics.median(before),
        "slowest_write_during_s": max(during) if during else 0.0,
        "writes_during": len(during),
        "lock_held_s": held[0],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--megabytes", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=2.0, help="writes before and after the snapshot")
    parser.add_argument("--spill", action="store_true", help="values above 64 KiB in files, as lakelet up has them")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="lakelet-stall-"))
    if args.spill:
        from lakelet.stack import moto_memory

        moto_memory.install(scratch)
    print(
        f"{'snapshot':>12} {'MB':>6} {'took s':>7} {'lock held s':>12} {'median write s':>15}"
        f" {'slowest during s':>17} {'writes':>7}"
    )
    for fork in (False, True):
        row = measure(args.megabytes, args.seconds, fork, scratch)
        name = "forked" if fork else "in process"
        print(
            f"{name:>12} {row['snapshot_mb']:6.0f} {row['snapshot_s']:7.2f} {row['lock_held_s']:12.3f}"
            f" {row['median_write_s']:15.3f}"
            f" {row['slowest_write_during_s']:17.3f} {row['writes_during']:7.0f}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
