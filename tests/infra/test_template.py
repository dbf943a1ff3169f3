"""The template ``make package`` writes: valid (cfn-lint), and naming what the code expects."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from chalicelib import settings
from chalicelib import settings as gc_settings
from infra import access, build, state_machines
from tests.infra.conftest import STAGE, Package
from tests.infra.support import (
    PROJECT_DIR,
    SAMPLE_ASL,
    merge,
    model_key_schemas,
    stage_environment,
    sub_stage,
)

CFN_LINT = Path(sys.executable).with_name("cfn-lint")


def _lint(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(CFN_LINT), "--", str(path)], capture_output=True, text=True, timeout=120, check=False)


def _functions(template: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {k: v for k, v in template["Resources"].items() if v["Type"] == "AWS::Serverless::Function"}


def test_cfn_lint_is_clean_on_the_packaged_template(package: Package) -> None:
    result = _lint(package.template_path)
    assert result.returncode == 0, result.stdout + result.stderr


def test_cfn_lint_sees_errors_in_a_template_like_it(package: Package, tmp_path: Path) -> None:
    # The lint above must be able to fail: break one property the merge added.
    template = package.template()
    template["Resources"]["GCApplication"]["Properties"]["AutoStopConfiguration"]["IdleTimeoutMinutes"] = "soon"
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(template))
    result = _lint(broken)
    assert result.returncode != 0 and "E3012" in result.stdout


def test_state_machines_from_stepfunctions_files_are_built_and_lint_clean(package: Package, tmp_path: Path) -> None:
    directory = tmp_path / "stepfunctions"
    directory.mkdir()
    (directory / "sample-flow.asl.json").write_text(json.dumps(SAMPLE_ASL, indent=2))
    app = build.read_app(PROJECT_DIR, STAGE)
    template = merge(build.build(app, directory), package.template())
    machine = template["Resources"]["SampleFlowStateMachine"]
    definition, substitutions = machine["Properties"]["DefinitionString"]["Fn::Sub"]
    assert json.loads(definition) == SAMPLE_ASL
    assert substitutions == {
        "api_handler": {"Fn::GetAtt": ["APIHandler", "Arn"]},
        "collect_garbage": {"Fn::GetAtt": ["CollectGarbage", "Arn"]},
    }
    role = template["Resources"]["SampleFlowStateMachineRole"]["Properties"]["Policies"][0]["PolicyDocument"]
    (statement,) = role["Statement"]
    assert statement["Action"] == ["lambda:InvokeFunction"]
    assert {"Fn::GetAtt": ["APIHandler", "Arn"]} in statement["Resource"]
    assert {"Fn::GetAtt": ["S3Gateway", "Arn"]} not in statement["Resource"]  # only what its tasks name
    api_env = template["Resources"]["APIHandler"]["Properties"]["Environment"]["Variables"]
    assert api_env["LAKELET_SAMPLE_FLOW_STATE_MACHINE_ARN"] == {
        "Fn::Sub": "arn:${AWS::Partition}:states:${AWS::Region}:${AWS::AccountId}"
        ":stateMachine:lakelet-${Stage}-sample-flow"
    }
    out = tmp_path / "with-state-machines.json"
    out.write_text(json.dumps(template))
    result = _lint(out)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_state_machine_naming_an_unknown_function_stops_the_build(tmp_path: Path) -> None:
    (tmp_path / "broken.asl.json").write_text(
        json.dumps({"StartAt": "A", "States": {"A": {"Type": "Task", "Resource": "${no_such_function}", "End": True}}})
    )
    with pytest.raises(state_machines.StateMachineError, match="no_such_function"):
        build.build(build.read_app(PROJECT_DIR, STAGE), tmp_path)


def test_the_repository_state_machines_are_all_built(package: Package) -> None:
    # Whatever stepfunctions/*.asl.json exist when the suite runs (issue 4 adds them) are in the template.
    files = sorted((PROJECT_DIR / "stepfunctions").glob("*.asl.json"))
    built = {k for k, v in package.template()["Resources"].items() if v["Type"] == "AWS::StepFunctions::StateMachine"}
    assert len(built) == len(files)


def test_every_table_the_models_declare_is_in_the_template_with_the_same_keys(package: Package) -> None:
    prefix = stage_environment(STAGE)[settings.ENV_TABLE_PREFIX]
    expected = model_key_schemas(prefix)
    tables = {
        sub_stage(v["Properties"]["TableName"], STAGE): v
        for v in package.template()["Resources"].values()
        if v["Type"] == "AWS::DynamoDB::Table"
    }
    assert set(tables) == set(expected)
    for name, table in tables.items():
        properties = table["Properties"]
        keys = sorted(((k["AttributeName"], k["KeyType"]) for k in properties["KeySchema"]), key=lambda k: k[1])
        assert keys == expected[name]["KeySchema"], name
        types = {d["AttributeName"]: d["AttributeType"] for d in properties["AttributeDefinitions"]}
        assert types == expected[name]["AttributeTypes"], name
        assert properties["BillingMode"] == "PAY_PER_REQUEST"
        assert properties["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": True}
        assert table["DeletionPolicy"] == "Retain"
    assert set(access.TABLES.values()) == {
        k for k, v in package.template()["Resources"].items() if v["Type"] == "AWS::DynamoDB::Table"
    }


def test_the_bucket_is_encrypted_private_and_tls_only(package: Package) -> None:
    resources = package.template()["Resources"]
    bucket = resources["DataBucket"]["Properties"]
    assert bucket["BucketEncryption"]["ServerSideEncryptionConfiguration"][0]["ServerSideEncryptionByDefault"]
    assert set(bucket["PublicAccessBlockConfiguration"].values()) == {True}
    assert len(bucket["PublicAccessBlockConfiguration"]) == 4
    (statement,) = resources["DataBucketPolicy"]["Properties"]["PolicyDocument"]["Statement"]
    assert statement["Effect"] == "Deny"
    assert statement["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}


def test_every_function_runs_python_3_12_with_its_own_role_log_group_and_environment(package: Package) -> None:
    template = package.template()
    functions = _functions(template)
    assert set(functions) >= {"APIHandler", "S3Gateway", "CollectGarbage"}
    roles = set()
    for logical_id, function in functions.items():
        properties = function["Properties"]
        assert properties["Runtime"] == "python3.12"
        assert properties["Tracing"] == "Active"
        role = properties["Role"]["Fn::GetAtt"][0]
        roles.add(role)
        log_group = properties["LoggingConfig"]["LogGroup"]["Ref"]
        assert template["Resources"][log_group]["Properties"]["RetentionInDays"] == {"Ref": "LogRetentionDays"}
        assert sub_stage(template["Resources"][log_group]["Properties"]["LogGroupName"], STAGE) == (
            "/aws/lambda/" + sub_stage(properties["FunctionName"], STAGE)
        )
        policy = template["Resources"][logical_id + "Access"]["Properties"]
        assert policy["Roles"] == [{"Ref": role}]
        env = properties["Environment"]["Variables"]
        assert env[settings.ENV_STAGE] == STAGE
        assert env[settings.ENV_TABLE_PREFIX] == f"lakelet-{STAGE}-"
        assert env[settings.ENV_BUCKET] == {"Ref": "DataBucket"}
        assert env[settings.ENV_KMS_KEY_ID] == {"Fn::GetAtt": ["SecretsKey", "Arn"]}
    assert len(roles) == len(functions)  # one role per function


def test_the_gc_function_is_scheduled_by_parameter_and_knows_its_emr_application(package: Package) -> None:
    template = package.template()
    gc = template["Resources"]["CollectGarbage"]["Properties"]
    (event,) = gc["Events"].values()
    assert event == {"Type": "Schedule", "Properties": {"Schedule": {"Ref": "GCSchedule"}}}
    env = gc["Environment"]["Variables"]
    assert env[gc_settings.ENV_APPLICATION_ID] == {"Ref": "GCApplication"}
    assert env[gc_settings.ENV_EXECUTION_ROLE_ARN] == {"Fn::GetAtt": ["GCJobRole", "Arn"]}
    assert env[gc_settings.ENV_ENTRY_POINT] == {"Fn::Sub": "s3://${ArtifactBucket}/lakelet/${Stage}/emr/gc_job.py"}
    # The entry point's package, where make deploy uploads it (the job's role reads emr/*).
    assert env[gc_settings.ENV_PY_FILES] == {"Fn::Sub": "s3://${ArtifactBucket}/lakelet/${Stage}/emr/lakelet_gc.zip"}
    application = template["Resources"]["GCApplication"]["Properties"]
    assert application["AutoStartConfiguration"] == {"Enabled": True}
    assert application["AutoStopConfiguration"]["Enabled"] is True
    assert "InitialCapacity" not in application  # nothing pre-initialized: free when idle


def test_the_s3_gateway_has_a_public_function_url_and_the_api_an_endpoint_for_clients(package: Package) -> None:
    template = package.template()
    url = template["Resources"]["S3GatewayUrl"]["Properties"]
    assert url == {"TargetFunctionArn": {"Ref": "S3Gateway"}, "AuthType": "NONE", "InvokeMode": "BUFFERED"}
    actions = {
        v["Properties"]["Action"]
        for v in template["Resources"].values()
        if v["Type"] == "AWS::Lambda::Permission" and v["Properties"]["FunctionName"] == {"Ref": "S3Gateway"}
    }
    assert actions == {"lambda:InvokeFunctionUrl", "lambda:InvokeFunction"}
    endpoint = template["Outputs"]["LakeFSEndpoint"]["Value"]["Fn::Sub"]
    config = json.loads((PROJECT_DIR / ".chalice" / "config.json").read_text())
    api_stage = config["stages"][STAGE]["api_gateway_stage"]
    assert endpoint == "https://${RestAPI}.execute-api.${AWS::Region}.${AWS::URLSuffix}/" + api_stage + "/api/v1"
    assert template["Resources"]["RestAPI"]["Properties"]["StageName"] == api_stage
    assert template["Resources"]["RestAPI"]["Properties"]["TracingEnabled"] is True
    # The Iceberg catalog hands engines the gateway's URL as the tables' s3.endpoint (docs/iceberg.md).
    api_env = template["Resources"]["APIHandler"]["Properties"]["Environment"]["Variables"]
    assert api_env[settings.ENV_ICEBERG_S3_ENDPOINT] == {"Fn::GetAtt": ["S3GatewayUrl", "FunctionUrl"]}


def test_the_iceberg_catalog_vends_credentials_by_a_role_only_the_api_assumes(package: Package) -> None:
    """docs/iceberg.md, "Data files": the API assumes the role with a session policy per table; the role reaches
    the objects under the repositories' data/ only."""
    resources = package.template()["Resources"]
    role = resources["IcebergDataRole"]["Properties"]
    api_role = resources["APIHandler"]["Properties"]["Role"]
    (trust,) = role["AssumeRolePolicyDocument"]["Statement"]
    assert trust["Principal"] == {"AWS": api_role} and trust["Action"] == "sts:AssumeRole"
    (policy,) = role["Policies"]
    granted = {
        tuple(sorted(s["Action"])) if isinstance(s["Action"], list) else s["Action"]
        for s in policy["PolicyDocument"]["Statement"]
    }
    assert "s3:ListBucket" in granted and tuple(sorted(access_actions())) in granted
    api_env = resources["APIHandler"]["Properties"]["Environment"]["Variables"]
    assert api_env[settings.ENV_ICEBERG_DATA_ROLE_ARN] == {"Fn::GetAtt": ["IcebergDataRole", "Arn"]}
    assumers = [
        name
        for name, resource in resources.items()
        if resource["Type"] == "AWS::IAM::Policy"
        for statement in resource["Properties"]["PolicyDocument"]["Statement"]
        if "sts:AssumeRole" in statement["Action"]
    ]
    assert assumers == ["APIHandlerAccess"]


def access_actions() -> list[str]:
    from infra.iceberg_role import TABLE_FILE_ACTIONS

    return TABLE_FILE_ACTIONS


def test_the_template_is_for_its_stage_only(package: Package) -> None:
    stage = package.template()["Parameters"]["Stage"]
    assert stage["AllowedValues"] == [STAGE] and stage["Default"] == STAGE


def test_a_function_without_decided_permissions_stops_the_build(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(access.FUNCTION_ACCESS, "s3_gateway")
    with pytest.raises(build.BuildError, match="s3_gateway"):
        build.build(build.read_app(PROJECT_DIR, STAGE), PROJECT_DIR / "stepfunctions")


def test_the_bucket_lets_the_web_ui_upload_from_the_api_origin(package: Package) -> None:
    """The web UI's presigned PUTs come from the API's origin and need to read the ETag back."""
    bucket = package.template()["Resources"]["DataBucket"]["Properties"]
    (rule,) = bucket["CorsConfiguration"]["CorsRules"]
    assert "PUT" in rule["AllowedMethods"] and "ETag" in rule["ExposedHeaders"]
    (origin,) = rule["AllowedOrigins"]
    assert origin == {"Fn::Sub": "https://*.execute-api.${AWS::Region}.${AWS::URLSuffix}"}


def test_api_gateway_answers_unknown_routes_with_a_lakefs_404_that_quotes_nothing(package: Package) -> None:
    resources = package.template()["Resources"]
    missing = resources["GatewayResponseMissingRoute"]["Properties"]
    assert missing["ResponseType"] == "MISSING_AUTHENTICATION_TOKEN"
    assert missing["StatusCode"] == "404"
    assert missing["RestApiId"] == {"Ref": "RestAPI"}
    for name in ("GatewayResponseMissingRoute", "GatewayResponseDefault4xx", "GatewayResponseDefault5xx"):
        template = resources[name]["Properties"]["ResponseTemplates"]["application/json"]
        assert template.startswith('{"message": ')
        assert "$context.error.message" not in template  # the message that can quote the Authorization header
