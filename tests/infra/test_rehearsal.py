"""``make deploy-rehearsal``: the packaged template, SAM transform expanded by aws-sam-translator, created in moto's
CloudFormation; every name the code reads resolves, and what moto cannot create is listed by type."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from chalicelib import settings
from infra import rehearsal
from tests.infra.conftest import PROJECT_DIR, STAGE, Package

# What moto 5.2.5's CloudFormation has no implementation of, in the template as packaged today.
MOTO_CANNOT_CREATE = {
    "AWS::ApiGateway::GatewayResponse",
    "AWS::ApiGateway::Stage",
    "AWS::EMRServerless::Application",
    "AWS::Lambda::Url",
    "AWS::S3::BucketPolicy",
}


def _make_rehearsal(package: Package, *parameters: str) -> subprocess.CompletedProcess[str]:
    venv = Path(sys.executable).parents[1]
    return subprocess.run(
        [
            "make",
            "--no-print-directory",
            f"VENV={venv}",
            f"--old-file={venv}/.lakelet-dev-installed",
            "deploy-rehearsal",
            f"STAGE={STAGE}",
            f"PACKAGE_DIR={package.directory}",
            f"DEPLOY_PARAMETERS={' '.join(parameters)}",
        ],
        cwd=PROJECT_DIR,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_make_deploy_rehearsal_exits_0_and_lists_what_moto_cannot_create(package: Package) -> None:
    done = _make_rehearsal(package)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    out = done.stdout
    assert "stack: CREATE_COMPLETE" in out
    section = out.split("moto cannot create (left out, by type):")[1].split("\n\n")[0]
    listed = {line.strip().split(": ")[0] for line in section.strip().splitlines()}
    assert listed == MOTO_CANNOT_CREATE
    assert "GCApplication" in section and "S3GatewayUrl" in section
    assert " 0 failed" in out
    # The names that refer to what moto cannot create are reported as such, not passed.
    assert "not created by moto  CollectGarbage env LAKELET_GC_EMR_APPLICATION_ID" in out


@pytest.fixture(scope="module")
def report(package: Package) -> rehearsal.Report:
    return rehearsal.rehearse(package.template_path.parent, STAGE, {"ImportLocations": "source-bucket:raw/"})


def _checks(report: rehearsal.Report, subject: str) -> list[rehearsal.Check]:
    return [c for c in report.checks if c.subject == subject]


def test_every_name_the_functions_read_resolves(report: rehearsal.Report) -> None:
    assert report.ok, report.failures
    functions = {c.subject.split(" env")[0] for c in report.checks if " env" in c.subject}
    assert {"APIHandler", "S3Gateway", "CollectGarbage", "CommitSeal", "MergePlan", "ImportPlan"} <= functions
    for function in functions:
        # Every function gets the bucket, the tables and the key, and its whole environment parses.
        for name in (settings.ENV_BUCKET, settings.ENV_TABLE_PREFIX, settings.ENV_KMS_KEY_ID):
            (check,) = _checks(report, f"{function} env {name}")
            assert check.status == "ok", check
        assert [c.detail for c in _checks(report, f"{function} env")] == [
            "Settings.from_env parses",
            "GCSettings.from_env parses",
        ]
    assert _checks(report, "APIHandler env LAKELET_TABLE_PREFIX")[0].detail == "7 tables exist"
    for machine in ("COMMIT", "MERGE", "IMPORT"):
        (check,) = _checks(report, f"APIHandler env LAKELET_{machine}_STATE_MACHINE_ARN")
        assert check.status == "ok" and check.detail == f"state machine lakelet-{STAGE}-{machine.lower()}"
    for name in (settings.ENV_EXECUTION_ROLE_ARN, settings.ENV_ENTRY_POINT, settings.ENV_LOG_URI):
        assert _checks(report, f"CollectGarbage env {name}")[0].status == "ok"
    (application,) = _checks(report, f"CollectGarbage env {settings.ENV_APPLICATION_ID}")
    assert application.status == "not created by moto"


def test_outputs_the_api_and_the_schedule_resolve(report: rehearsal.Report) -> None:
    outputs = {c.subject.removeprefix("output "): c for c in report.checks if c.subject.startswith("output ")}
    assert {"DataBucketName", "TablePrefix", "SecretsKeyArn", "GCJobRoleArn", "LakeFSEndpoint"} <= set(outputs)
    assert {k for k, c in outputs.items() if c.status != "ok"} == {"GCApplicationId", "S3GatewayEndpoint"}
    routes = _checks(report, "REST API routes")[0]
    assert routes.status == "ok" and int(routes.detail.split()[0]) > 50
    assert _checks(report, "REST API integrations")[0].status == "ok"
    schedules = [c for c in report.checks if c.subject.startswith("schedule ")]
    assert sorted(c.detail for c in schedules) == ["targets CollectGarbage", "targets DropRetired"]
    assert schedules[0].value == "rate(1 day)"
    # With one import location, its listing policy is created and the other nine slots are not.
    assert "ImportListSource0Access (AWS::IAM::Policy)" not in report.condition_false
    assert "ImportListSource1Access (AWS::IAM::Policy)" in report.condition_false


def test_a_name_that_resolves_to_nothing_fails_the_rehearsal(package: Package, tmp_path: Path) -> None:
    template: dict[str, Any] = copy.deepcopy(package.template())
    variables = template["Resources"]["APIHandler"]["Properties"]["Environment"]["Variables"]
    variables[settings.ENV_BUCKET] = "a-bucket-nobody-created"
    variables["LAKELET_MERGE_STATE_MACHINE_ARN"] = "arn:aws:states:us-east-1:123456789012:stateMachine:gone"
    (tmp_path / "sam.json").write_text(json.dumps(template))
    (tmp_path / "deployment.zip").symlink_to(package.bundle_path)
    broken = rehearsal.rehearse(tmp_path, STAGE)
    assert not broken.ok
    failed = {c.subject for c in broken.failures}
    assert failed == {"APIHandler env LAKELET_BUCKET", "APIHandler env LAKELET_MERGE_STATE_MACHINE_ARN"}
    assert rehearsal.main([str(tmp_path)]) == 1
