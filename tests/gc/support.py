"""Helpers of the GC tests: one local Spark session per test process, the job module, a moto server, and the
Lakelet services wired to it (refs and staging in memory, blobs in the moto server's S3, where Spark's Python
workers, separate processes, can reach them)."""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import functools
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import boto3
from moto.server import ThreadedMotoServer

from chalicelib import wiring
from chalicelib.adapters.s3 import S3BlockStore
from chalicelib.graveler.committed import CommittedManager
from chalicelib.graveler.engine import build_engine, engine_parts
from chalicelib.settings import Settings
from lakelet.stack.local_gc import load_job, local_session

REGION = "us-east-1"


@functools.cache
def shared_spark() -> Any:
    """Spark starts in several seconds: one local[2] session serves every GC test of the process."""
    spark = local_session(address_partitions=4)
    atexit.register(_stop_quietly, spark)
    return spark


def _stop_quietly(spark: Any) -> None:
    """At exit; the Spark tier may have shut this session's JVM down already (it starts one with its jars)."""
    with contextlib.suppress(Exception):
        spark.stop()


@functools.cache
def job() -> ModuleType:
    return load_job()


@functools.cache
def moto_url() -> str:
    """A moto server for the GC tests (separate from the e2e stack's), started once per process."""
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    atexit.register(server.stop)
    host, port = server.get_host_and_port()
    return f"http://{host}:{port}"


def s3_client() -> Any:
    return boto3.client("s3", region_name=REGION, endpoint_url=moto_url())


def new_bucket() -> str:
    name = f"gc-{uuid.uuid4().hex[:16]}"
    s3_client().create_bucket(Bucket=name)
    return name


def keys_under(bucket: str, prefix: str) -> set[str]:
    keys: set[str] = set()
    for page in s3_client().get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        keys.update(item["Key"] for item in page.get("Contents", []))
    return keys


def addresses_under(namespace: str, directory: str = "data/") -> set[str]:
    """Every ``s3://`` address stored under ``<namespace>/<directory>``."""
    bucket, _, prefix = namespace.removeprefix("s3://").partition("/")
    return {f"s3://{bucket}/{key}" for key in keys_under(bucket, f"{prefix}/{directory}")}


def moto_services(bucket: str) -> wiring.Services:
    """Refs, staging and auth in memory; blobs (data, ranges, GC files) in the moto server's S3."""
    settings = Settings(bucket=bucket, region=REGION, endpoint_url=moto_url())
    base = wiring.memory_services(settings)
    blocks = S3BlockStore(s3_client())
    committed = CommittedManager(blocks, wiring.range_params(settings))
    return dataclasses.replace(
        base, engine=build_engine(engine_parts(base.engine.ports.refs, base.engine.ports.staging, blocks, committed))
    )


@dataclass(frozen=True)
class JobRun:
    """How a test runs the job: everything but the mode, the run id and the min age is fixed."""

    namespace: str

    def options(self, run_id: str, mode: str, min_age_seconds: int = 0, single_task_objects: int | None = None) -> Any:
        extra = {} if single_task_objects is None else {"single_task_objects": single_task_objects}
        return job().JobOptions(
            **extra,
            storage_namespace=self.namespace,
            run_id=run_id,
            mode=mode,
            min_age_seconds=min_age_seconds,
            commit_partitions=2,
            address_partitions=4,
            list_slices=4,
            endpoint_url=moto_url(),
            region=REGION,
            record_lead_seconds=0,  # no API caches the sweep records here: nothing to wait for
        )

    def run(
        self,
        run_id: str,
        mode: str = "mark-and-sweep",
        min_age_seconds: int = 0,
        single_task_objects: int | None = None,
    ) -> dict[str, Any]:
        options = self.options(run_id, mode, min_age_seconds, single_task_objects)
        summary: dict[str, Any] = job().run(shared_spark(), options)
        return summary


@contextmanager
def installed(services: wiring.Services) -> Iterator[wiring.Services]:
    wiring.set_services(services)
    try:
        yield services
    finally:
        wiring.set_services(None)
