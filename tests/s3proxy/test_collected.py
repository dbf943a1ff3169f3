"""Objects whose data garbage collection deleted, through the S3 gateway: HEAD answers 404 (NoSuchVersion, as a
GET does), never 200 with the headers of data that is gone."""

from __future__ import annotations

import pytest
from botocore.client import BaseClient
from botocore.exceptions import ClientError

from chalicelib.graveler.reads.collected import sweeps_prefix
from chalicelib.graveler.records import Repository
from chalicelib.graveler.writes.addressing import partition_of
from tests.clocks import engine_clock

from .conftest import Harness

DAY = 86_400


def test_head_and_get_of_collected_data(s3: BaseClient, harness: Harness, repo: Repository) -> None:
    engine = harness.services.engine
    clock = engine_clock(harness.services)
    real_clock = clock.source
    clock.source = lambda: real_clock() - 10 * DAY
    engine.objects.upload_object("repo", "main", "old.txt", b"old")
    clock.source = real_clock
    engine.objects.upload_object("repo", "main", "new.txt", b"new")
    namespace = repo.storage_namespace
    engine.ports.blocks.put(
        f"{sweeps_prefix(namespace)}partition={partition_of(real_clock() - DAY + 3600)}/run_id=r.json", b"{}"
    )
    engine.ports.blocks.delete(engine.objects.stat_object("repo", "main", "old.txt").physical_address)

    with pytest.raises(ClientError) as head:
        s3.head_object(Bucket="repo", Key="main/old.txt")
    assert head.value.response["ResponseMetadata"]["HTTPStatusCode"] == 404
    assert harness.responses[-1].status == 404
    with pytest.raises(ClientError) as get:
        s3.get_object(Bucket="repo", Key="main/old.txt")
    assert get.value.response["Error"]["Code"] == "NoSuchVersion"
    assert s3.head_object(Bucket="repo", Key="main/new.txt")["ContentLength"] == 3
