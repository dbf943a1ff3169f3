"""JobStarter contract (gc/ports.py): the in-memory twin and EmrServerlessStarter (on moto's EMR Serverless)
start job runs alike, and both refuse a start on an application that does not exist with StorageError."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import boto3
import pytest
from moto import mock_aws

from chalicelib.adapters.emr import EmrServerlessStarter
from chalicelib.adapters.memory import MemoryJobStarter
from chalicelib.gc.ports import JobRunRequest, JobStarter
from chalicelib.graveler import errors

from .conftest import REGION, set_fake_aws_env

ROLE = "arn:aws:iam::123456789012:role/lakelet-gc"
REQUEST = JobRunRequest("gc-repo1", "s3://bucket/gc_job.py", ("--run-id", "r1"), "--conf a=b", {"repo": "repo1"})

Starters = Callable[[bool], JobStarter]


@pytest.fixture(params=["memory", "aws"])
def starters(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[Starters]:
    """``starters(True)``: a starter on an application that exists; ``starters(False)``: on one that does not."""
    if request.param == "memory":
        yield lambda exists: MemoryJobStarter(refuse=not exists)
        return
    set_fake_aws_env(monkeypatch)
    with mock_aws():
        client = boto3.client("emr-serverless", region_name=REGION)
        app_id = client.create_application(name="gc", releaseLabel="emr-7.0.0", type="SPARK")["applicationId"]
        yield lambda exists: EmrServerlessStarter(client, app_id if exists else "00nosuchapp", ROLE)


def test_a_start_answers_a_run_id(starters: Starters) -> None:
    starter = starters(True)
    first = starter.start(REQUEST)
    second = starter.start(JobRunRequest("gc-repo2", "s3://bucket/gc_job.py", ("--run-id", "r2")))
    assert first and second and first != second


def test_a_missing_application_is_a_storage_error(starters: Starters) -> None:
    with pytest.raises(errors.StorageError):
        starters(False).start(REQUEST)
