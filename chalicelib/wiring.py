"""Builds the services once per warm Lambda container; tests swap in their own with ``set_services``."""

from __future__ import annotations

import threading
from dataclasses import dataclass

from .auth.service import AuthService
from .graveler.committed import CommittedManager, RangeParams
from .graveler.ports import BlockStore, RefStore, StagingStore
from .graveler.service import Graveler
from .settings import Settings


@dataclass
class Services:
    settings: Settings
    graveler: Graveler
    auth: AuthService


_lock = threading.Lock()
_services: Services | None = None


def range_params(settings: Settings) -> RangeParams:
    return RangeParams(
        max_range_bytes=settings.range_max_bytes,
        min_range_bytes=settings.range_min_bytes,
        raggedness=settings.range_raggedness,
    )


def assemble(
    settings: Settings, refs: RefStore, staging: StagingStore, blocks: BlockStore, auth: AuthService
) -> Services:
    committed = CommittedManager(blocks, range_params(settings))
    return Services(settings, Graveler(refs, staging, blocks, committed), auth)


def aws_services(settings: Settings) -> Services:
    """The deployed wiring: DynamoDB and S3 (or the moto server that stands in for them locally)."""
    import boto3

    from .adapters.dynamodb import DynamoAuthStore, DynamoRefStore, DynamoStagingStore
    from .adapters.dynamodb.tables import TableNames
    from .adapters.s3 import S3BlockStore

    names = TableNames.from_prefix(settings.table_prefix)
    s3 = boto3.client("s3", region_name=settings.region, endpoint_url=settings.endpoint_url)
    return assemble(
        settings,
        DynamoRefStore(names, settings.region, settings.endpoint_url),
        DynamoStagingStore(names, settings.region, settings.endpoint_url),
        S3BlockStore(s3),
        AuthService(DynamoAuthStore(names, settings.region, settings.endpoint_url)),
    )


def memory_services(settings: Settings | None = None) -> Services:
    """Every port on its in-memory twin: for unit and API tests."""
    from .adapters.memory import MemoryAuthStore, MemoryBlockStore, MemoryRefStore, MemoryStagingStore

    return assemble(
        settings or Settings(),
        MemoryRefStore(),
        MemoryStagingStore(),
        MemoryBlockStore(),
        AuthService(MemoryAuthStore()),
    )


def get_services() -> Services:
    global _services
    with _lock:
        if _services is None:
            _services = aws_services(Settings.from_env())
        return _services


def set_services(services: Services | None) -> None:
    global _services
    with _lock:
        _services = services
