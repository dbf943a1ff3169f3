"""What the counting tests under tests/perf share: a botocore call counter and app.py on moto in process with the
deployed wiring (DynamoDB through PynamoDB, S3 and KMS through boto3)."""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import boto3
import botocore.session
import pytest
from chalice.test import Client
from moto import mock_aws

from chalicelib import wiring
from chalicelib.adapters.dynamodb.tables import TableNames, create_tables
from chalicelib.adapters.kms import create_local_key
from chalicelib.settings import Settings
from chalicelib.wiring import Services
from tests.api.support import Api, app

REGION = "us-east-1"


class CallCounter:
    """Counts the calls of every botocore client created while installed, by (service, operation)."""

    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()
        # DynamoDB Query answers: "rows" read out (Items), "counted" only (Select=COUNT's Count).
        self.queried: Counter[str] = Counter()

    def _count(self, model: Any, **_: Any) -> None:
        self.calls[f"{model.service_model.service_name}.{model.name}"] += 1

    def _rows(self, parsed: dict[str, Any], **_: Any) -> None:
        if "Items" in parsed:
            self.queried["rows"] += len(parsed["Items"])
        else:
            self.queried["counted"] += int(parsed.get("Count", 0))

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        create_client = botocore.session.Session.create_client
        counter = self

        def counting_create_client(session: Any, *args: Any, **kwargs: Any) -> Any:
            client = create_client(session, *args, **kwargs)
            client.meta.events.register("before-call", counter._count)
            client.meta.events.register("after-call.dynamodb.Query", counter._rows)
            return client

        monkeypatch.setattr(botocore.session.Session, "create_client", counting_create_client)

    def during(self, action: Callable[[], object]) -> Counter[str]:
        before = Counter(self.calls)
        action()
        return self.calls - before


@contextmanager
def app_on_moto(bucket: str, repository: str, table_prefix: str) -> Iterator[tuple[Api, Services]]:
    """app.py on moto with the deployed wiring, an admin's Api and the repository ``repository`` in ``bucket``.

    What a warm container remembers for a short while (repositories, the branch of upload addresses) is
    remembered for the whole test: a loaded machine can take longer than those 2 s between a warm-up run and the
    counted one, and the count, not the machine's speed, is what is measured.
    """
    with mock_aws():
        boto3.client("s3", region_name=REGION).create_bucket(Bucket=bucket)
        key_id = create_local_key(boto3.client("kms", region_name=REGION))
        # A prefix of its own: the PynamoDB models (and their clients) are cached per table names.
        prefix = f"{table_prefix}-{uuid.uuid4().hex[:8]}-"
        settings = Settings(region=REGION, table_prefix=prefix, bucket=bucket, kms_key_id=key_id)
        create_tables(TableNames.from_prefix(settings.table_prefix), REGION)
        services = wiring.aws_services(settings)
        services.engine.ports.refs._repositories.ttl_seconds = 600.0
        services.engine.ports.upload_branches.ttl_seconds = 600.0
        wiring.set_services(services)
        try:
            credential, secret = services.auth.setup("admin")
            with Client(app) as client:
                api = Api(client, (credential.access_key_id, secret))
                api.create_repo(repository, storage_namespace=f"s3://{bucket}/{repository}")
                yield api, services
        finally:
            wiring.set_services(None)
