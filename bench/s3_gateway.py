"""Small PUTs and GETs through the S3 gateway, against the same operations on the underlying S3 (moto), in one run.

Usage: .venv/bin/python bench/s3_gateway.py [N] [SIZE]   (default 500 objects of 1,024 bytes)

Both sides are served by the same embedded local stack (moto and the gateway share one process, as they do
under ``lakelet up``), driven by one boto3 client each over HTTP, one request at a time; each side runs
the same keys and bodies, interleaved in rounds so that a slow moment of the machine hits both. A gateway PUT
does one S3 PUT plus DynamoDB writes (staging) and reads (repository, branch); a GET does one S3 GET plus
DynamoDB reads (repository, branch, staged entry). Prints operations per second and the ratios.
"""

from __future__ import annotations

import logging
import os
import sys
import time

import boto3
from botocore.client import BaseClient
from botocore.config import Config

from lakelet.stack.local import LocalStack

ROUNDS = 5


def _timed(call: object, keys: list[str]) -> float:
    started = time.perf_counter()
    for key in keys:
        call(key)  # type: ignore[operator]
    return time.perf_counter() - started


def _over_the_socket(moto_url: str) -> str:
    """The same server under another name (localhost for 127.0.0.1), which the in-process transport does not take."""
    return moto_url.replace("//127.0.0.1:", "//localhost:", 1)


def measure_on(stack: LocalStack, count: int, size: int, repository: str = "bench") -> dict[str, float]:
    """Operations per second on each side and the gateway / moto ratios, on a started stack whose repository
    ``repository`` exists."""
    body = os.urandom(size)
    config = Config(retries={"max_attempts": 1})
    gateway: BaseClient = boto3.client(
        "s3",
        endpoint_url=stack.s3_url,
        aws_access_key_id=stack.credentials.access_key_id,
        aws_secret_access_key=stack.credentials.secret_access_key,
        config=config,
    )
    direct: BaseClient = boto3.client(
        "s3",
        # Over moto's port, as a client outside the stack reaches it: the stack's own calls to its moto URL are
        # answered in process (lakelet/stack/inprocess_aws.py), which this process's calls to that URL would be too.
        endpoint_url=_over_the_socket(stack.moto_url),
        region_name=stack.region,
        config=config,
        # moto takes the stack's own AWS key pair (lakelet/stack/stack_keys.py), not the lakeFS admin's.
        aws_access_key_id=stack.aws_credentials.access_key_id,
        aws_secret_access_key=stack.aws_credentials.secret_access_key,
    )
    # Warm both paths (connections, caches of credentials and policies) before measuring.
    gateway.put_object(Bucket=repository, Key="main/warm", Body=body)
    gateway.get_object(Bucket=repository, Key="main/warm")["Body"].read()
    direct.put_object(Bucket=stack.bucket, Key="direct/warm", Body=body)
    direct.get_object(Bucket=stack.bucket, Key="direct/warm")["Body"].read()

    totals = {"gateway put": 0.0, "moto put": 0.0, "gateway get": 0.0, "moto get": 0.0}
    per_round = max(1, count // ROUNDS)
    for round_number in range(ROUNDS):
        keys = [f"r{round_number}/k{i:06d}" for i in range(per_round)]
        totals["gateway put"] += _timed(
            lambda k: gateway.put_object(Bucket=repository, Key=f"main/{k}", Body=body), keys
        )
        totals["moto put"] += _timed(
            lambda k: direct.put_object(Bucket=stack.bucket, Key=f"direct/{k}", Body=body), keys
        )
        totals["gateway get"] += _timed(
            lambda k: gateway.get_object(Bucket=repository, Key=f"main/{k}")["Body"].read(), keys
        )
        totals["moto get"] += _timed(
            lambda k: direct.get_object(Bucket=stack.bucket, Key=f"direct/{k}")["Body"].read(), keys
        )
    measured = per_round * ROUNDS
    rates = {name: measured / seconds for name, seconds in totals.items()}
    return {
        "objects": measured,
        "size": size,
        **{name.replace(" ", "_"): rate for name, rate in rates.items()},
        "put_ratio": rates["gateway put"] / rates["moto put"],
        "get_ratio": rates["gateway get"] / rates["moto get"],
    }


def main(count: int, size: int) -> None:
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # moto's per-request log would drown the figures
    with LocalStack(api_port=0) as stack:
        from chalicelib.wiring import get_services

        get_services().engine.repositories.create_repository("bench", f"{stack.default_namespace_prefix}/bench")
        m = measure_on(stack, count, size)
    print(f"objects: {m['objects']} of {size} bytes, one client per side, {ROUNDS} interleaved rounds")
    for name in ("gateway_put", "moto_put", "gateway_get", "moto_get"):
        print(f"{name.replace('_', ' '):12s} {m[name]:8.1f} ops/s")
    print(f"ratio gateway / moto, PUT: {m['put_ratio']:.3f}")
    print(f"ratio gateway / moto, GET: {m['get_ratio']:.3f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 500, int(sys.argv[2]) if len(sys.argv) > 2 else 1024)
