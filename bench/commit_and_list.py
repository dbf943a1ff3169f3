"""Commit N staged objects and list them, on the embedded local stack, through the official lakeFS client.

Usage: .venv/bin/python bench/commit_and_list.py [N]   (default 10,000)

Prints the time to stage, commit and list, measured in one run, and the ratios between them. The staged
objects are uploaded through the API (the same path the client uses), several at a time.
"""

from __future__ import annotations

import logging
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import lakefs
from lakefs.client import Client

from lakelet.stack.local import LocalStack

THREADS = 8


def main(count: int) -> None:
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # moto's per-request log would drown the figures
    with LocalStack(api_port=0) as stack:
        client = Client(
            host=stack.endpoint, username=stack.credentials.access_key_id, password=stack.credentials.secret_access_key
        )
        repo = lakefs.Repository("bench", client=client).create(
            storage_namespace=f"{stack.default_namespace_prefix}/bench", exist_ok=False
        )
        main_branch = repo.branch("main")

        def upload(i: int) -> None:
            main_branch.object(f"data/part-{i:06d}.txt").upload(data=f"row {i}\n".encode())

        started = time.perf_counter()
        with ThreadPoolExecutor(THREADS) as pool:
            list(pool.map(upload, range(count)))
        staged = time.perf_counter() - started

        started = time.perf_counter()
        main_branch.commit(message=f"{count} objects")
        committed = time.perf_counter() - started

        started = time.perf_counter()
        listed = sum(1 for _ in main_branch.objects(max_amount=None))
        listing = time.perf_counter() - started
        assert listed == count, (listed, count)

        started = time.perf_counter()
        listed_uncommitted = sum(1 for _ in repo.branch("main").uncommitted())
        diff = time.perf_counter() - started
        assert listed_uncommitted == 0

    print(f"objects:                 {count}")
    print(f"stage (upload, {THREADS} threads): {staged:8.2f} s  ({count / staged:7.0f} objects/s)")
    print(f"commit:                  {committed:8.2f} s  ({count / committed:7.0f} objects/s)")
    print(f"list all (1000/page):    {listing:8.2f} s  ({count / listing:7.0f} objects/s)")
    print(f"uncommitted diff (empty):{diff:8.2f} s")
    print(f"ratio commit / stage:    {committed / staged:8.3f}")
    print(f"ratio list / commit:     {listing / committed:8.3f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 10_000)
