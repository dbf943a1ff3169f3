"""The scheduled GC handler (EventBridge -> Lambda), called directly as the schedule would (schedules never
fire in moto), with moto's EMR Serverless recording the job runs it starts."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import boto3
import pytest
from chalice.test import Client
from moto import mock_aws

from chalicelib import settings as gc_settings
from chalicelib import wiring
from chalicelib.adapters.emr import EmrServerlessStarter
from chalicelib.gc import layout
from chalicelib.gc.ports import JobRunRequest
from chalicelib.gc.rules import RulesStore
from chalicelib.gc.schedule import job_request, run_scheduled
from chalicelib.graveler import errors
from chalicelib.graveler.reads.retention import RetentionRules
from chalicelib.settings import GCSettings
from tests.api.support import app

REGION = "us-east-1"
ROLE = "arn:aws:iam::123456789012:role/lakelet-gc-job"
ENTRY_POINT = "s3://lakelet-artifacts/gc/gc_job.py"
ARCHIVE = "s3://lakelet-artifacts/gc/lakelet-gc-env.tar.gz"
PY_FILES = "s3://lakelet-artifacts/gc/lakelet_gc.zip"


@pytest.fixture
def emr(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Any, str]]:
    for name in ("AWS_PROFILE", "AWS_ENDPOINT_URL", "LAKELET_AWS_ENDPOINT_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    with mock_aws():
        client = boto3.client("emr-serverless", region_name=REGION)
        application = client.create_application(name="lakelet-gc", releaseLabel="emr-7.5.0", type="SPARK")
        yield client, application["applicationId"]


@pytest.fixture
def repos(memory: wiring.Services) -> wiring.Services:
    """Three repositories: two with rules, one without."""
    g = memory.engine
    for name in ("alpha", "beta", "gamma"):
        g.repositories.create_repository(name, f"s3://test-bucket/repos/{name}")
        g.objects.upload_object(name, "main", "a.txt", b"a")
    for name in ("alpha", "gamma"):
        RulesStore(g.repositories.namespace_files(f"s3://test-bucket/repos/{name}")).set(RetentionRules(7))
    return memory


def configure(monkeypatch: pytest.MonkeyPatch, application_id: str) -> None:
    monkeypatch.setenv(gc_settings.ENV_APPLICATION_ID, application_id)
    monkeypatch.setenv(gc_settings.ENV_EXECUTION_ROLE_ARN, ROLE)
    monkeypatch.setenv(gc_settings.ENV_ENTRY_POINT, ENTRY_POINT)
    monkeypatch.setenv(gc_settings.ENV_ARCHIVE, ARCHIVE)
    monkeypatch.setenv(gc_settings.ENV_PY_FILES, PY_FILES)
    monkeypatch.setenv(gc_settings.ENV_LOG_URI, "s3://lakelet-artifacts/gc/logs/")
    monkeypatch.setenv(gc_settings.ENV_MIN_AGE_SECONDS, "172800")
    monkeypatch.setenv(gc_settings.ENV_ADDRESS_PARTITIONS, "128")


def invoke_schedule() -> dict[str, Any]:
    with Client(app) as client:
        event = client.events.generate_cw_event(
            source="aws.events", detail_type="Scheduled Event", detail={}, resources=["arn:aws:events:rule/gc"]
        )
        response = client.lambda_.invoke("collect_garbage", event)
    return dict(response.payload)


def test_the_schedule_prepares_each_repository_with_rules_and_starts_its_job(
    emr: tuple[Any, str], repos: wiring.Services, gc_job: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    client, application_id = emr
    configure(monkeypatch, application_id)

    result = invoke_schedule()

    runs = {run["repository"]: run for run in result["runs"]}
    assert set(runs) == {"alpha", "gamma"}  # beta has no rules
    assert all(run["error"] == "" for run in runs.values())
    recorded = client.list_job_runs(applicationId=application_id)["jobRuns"]
    assert {r["id"] for r in recorded} == {run["job_run_id"] for run in runs.values()}
    for name, run in runs.items():
        job_run = client.get_job_run(applicationId=application_id, jobRunId=run["job_run_id"])["jobRun"]
        assert job_run["executionRole"] == ROLE
        submit = job_run["jobDriver"]["sparkSubmit"]
        assert submit["entryPoint"] == ENTRY_POINT
        # The arguments are exactly what the job parses, for the run the handler prepared.
        options = gc_job.parse_options(submit["entryPointArguments"])
        namespace = f"s3://test-bucket/repos/{name}"
        assert options.storage_namespace == namespace and options.run_id == run["run_id"]
        assert (options.mode, options.min_age_seconds, options.address_partitions) == ("mark-and-sweep", 172_800, 128)
        manifest = json.loads(repos.engine.ports.blocks.get(layout.prepare_manifest_address(namespace, run["run_id"])))
        assert manifest["repository"] == name and manifest["active_commits"] == 1
        assert f"spark.archives={ARCHIVE}#environment" in submit["sparkSubmitParameters"]
        # The entry point imports the job's package from this zip.
        assert f"--conf spark.submit.pyFiles={PY_FILES}" in submit["sparkSubmitParameters"]
        assert "spark.executorEnv.PYSPARK_PYTHON=./environment/bin/python" in submit["sparkSubmitParameters"]
        assert job_run["tags"] == {"lakelet:repository": name, "lakelet:gc-run-id": run["run_id"]}
        logs = job_run["configurationOverrides"]["monitoringConfiguration"]["s3MonitoringConfiguration"]
        assert logs["logUri"] == "s3://lakelet-artifacts/gc/logs/"


def test_an_unconfigured_schedule_does_nothing(
    emr: tuple[Any, str], repos: wiring.Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    configure(monkeypatch, emr[1])
    monkeypatch.delenv(gc_settings.ENV_APPLICATION_ID)
    answer = invoke_schedule()
    assert (answer["runs"], answer["skipped"]) == ([], "not configured")
    assert "retired" not in answer  # retired staging tokens are the drop_retired schedule's, not GC's
    # Nothing was prepared either.
    assert not any("/retention/gc/runs/" in address for address in repos.engine.ports.blocks.blobs)  # type: ignore[attr-defined]


def test_one_failing_repository_does_not_stop_the_others(emr: tuple[Any, str], repos: wiring.Services) -> None:
    client, application_id = emr
    repos.engine.ports.blocks.put(layout.rules_address("s3://test-bucket/repos/alpha"), b"{broken")
    starter = EmrServerlessStarter(client, application_id, ROLE)
    settings = GCSettings(application_id, ROLE, ENTRY_POINT)

    runs = run_scheduled(repos.engine, starter, settings)

    assert [(r.repository, bool(r.job_run_id), r.error.split(":")[0]) for r in runs] == [
        ("alpha", False, "prepare failed"),
        ("gamma", True, ""),
    ]
    refused = EmrServerlessStarter(client, "00nosuchapp", ROLE)
    alpha, gamma = run_scheduled(repos.engine, refused, settings)
    assert alpha.repository == "alpha" and alpha.error.startswith("prepare failed")
    assert gamma.repository == "gamma" and gamma.error.startswith("job start failed") and gamma.run_id
    assert not gamma.job_run_id


def test_the_starter_translates_refusals(emr: tuple[Any, str]) -> None:
    client, _ = emr
    starter = EmrServerlessStarter(client, "00nosuchapp", ROLE)
    with pytest.raises(errors.StorageError):
        starter.start(JobRunRequest("n", ENTRY_POINT, ("--run-id", "r")))


def test_settings_come_from_the_environment() -> None:
    assert not GCSettings().configured
    parsed = GCSettings.from_env(
        {
            gc_settings.ENV_APPLICATION_ID: "app",
            gc_settings.ENV_EXECUTION_ROLE_ARN: ROLE,
            gc_settings.ENV_ENTRY_POINT: ENTRY_POINT,
            gc_settings.ENV_PY_FILES: PY_FILES,
            gc_settings.ENV_MODE: "mark",
            gc_settings.ENV_COMMIT_PARTITIONS: "4",
        }
    )
    # Without its package the entry point cannot import the job: not configured.
    assert not dataclasses.replace(parsed, job_py_files="").configured
    assert parsed.configured and parsed.mode == "mark" and parsed.commit_partitions == 4
    assert parsed.min_age_seconds == 86_400 and parsed.job_archive == ""
    for mode in ("delete-everything", "sweep"):
        with pytest.raises(ValueError):
            GCSettings.from_env({gc_settings.ENV_MODE: mode})
    with pytest.raises(ValueError):
        GCSettings(min_age_seconds=-1)


def test_without_an_archive_no_spark_parameters_are_sent(repos: wiring.Services) -> None:
    from chalicelib.gc.prepare import prepare

    prepared = prepare(repos.engine, "alpha")
    request = job_request(prepared, GCSettings("app", ROLE, ENTRY_POINT))
    assert request.spark_submit_parameters == "" and request.idempotency_token == prepared.run_id
    packaged = job_request(prepared, GCSettings("app", ROLE, ENTRY_POINT, job_py_files=PY_FILES))
    assert packaged.spark_submit_parameters == f"--conf spark.submit.pyFiles={PY_FILES}"
    image_python = "--conf spark.executorEnv.PYSPARK_PYTHON=/usr/bin/python3.11"
    custom = job_request(prepared, GCSettings("app", ROLE, ENTRY_POINT, spark_parameters=f" {image_python} "))
    assert custom.spark_submit_parameters == image_python
    assert request.arguments[:4] == ("--storage-namespace", "s3://test-bucket/repos/alpha", "--run-id", prepared.run_id)
