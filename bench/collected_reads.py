"""What knowing "collected or not" costs a presigned read: GET .../objects/stat?presign=true on the embedded stack,
for data GC cannot have touched (no sweep ever, or data younger than the last sweep's cutoff: no HEAD) against data
old enough to have been collected (one S3 HEAD of the data before the URL is handed out), in one run.

Usage: .venv/bin/python bench/collected_reads.py [N]   (default 300 reads per case)

One stack, one HTTP client, one request at a time; the three cases run interleaved in rounds so that a slow moment
of the machine hits each. The sweep record is written the way emr/gc_job.py writes it; nothing is deleted, so every
read answers 200 and the old objects cost their HEAD. Prints reads per second and the ratios.
"""

from __future__ import annotations

import dataclasses
import logging
import sys
import time

import requests

from chalicelib.graveler.engine import build_engine
from lakelet.stack.local import LocalStack

ROUNDS = 5
DAY = 86_400


def main(count: int) -> None:
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    with LocalStack(api_port=0) as stack:
        from chalicelib.graveler.reads.collected import sweeps_prefix
        from chalicelib.graveler.writes.addressing import partition_of
        from chalicelib.wiring import get_services

        engine = get_services().engine
        prefix = stack.default_namespace_prefix
        for repo in ("never", "swept"):
            engine.repositories.create_repository(repo, f"{prefix}/{repo}")
        # The same stores under an engine whose clock is ten days behind.
        past = build_engine(dataclasses.replace(engine.ports, clock=lambda: time.time() - 10 * DAY))
        past.objects.upload_object("never", "main", "old", b"x")
        past.objects.upload_object("swept", "main", "old", b"x")
        engine.objects.upload_object("swept", "main", "young", b"x")
        namespace = engine.repositories.get_repository("swept").storage_namespace
        record = f"{sweeps_prefix(namespace)}partition={partition_of(time.time() - DAY + 3600)}/run_id=bench.json"
        engine.ports.blocks.put(record, b"{}")

        session = requests.Session()
        session.auth = (stack.credentials.access_key_id, stack.credentials.secret_access_key)
        cases = {
            "never swept": ("never", "old"),
            "young data": ("swept", "young"),
            "old data (HEAD)": ("swept", "old"),
        }

        def read(repo: str, path: str) -> None:
            response = session.get(
                f"{stack.api_url}/repositories/{repo}/refs/main/objects/stat", params={"path": path, "presign": "true"}
            )
            assert response.status_code == 200, response.text

        for repo, path in cases.values():
            read(repo, path)  # warm the caches (credentials, policies, the sweep records)
        totals = dict.fromkeys(cases, 0.0)
        per_round = max(1, count // ROUNDS)
        for _ in range(ROUNDS):
            for name, (repo, path) in cases.items():
                started = time.perf_counter()
                for _ in range(per_round):
                    read(repo, path)
                totals[name] += time.perf_counter() - started
        reads = per_round * ROUNDS
        base = totals["never swept"]
        for name, seconds in totals.items():
            print(
                f"{name:18} {reads / seconds:8.1f} reads/s   {1000 * seconds / reads:6.2f} ms/read   "
                f"time ratio to never swept {seconds / base:.2f}"
            )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 300)
