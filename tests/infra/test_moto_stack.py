"""The packaged template, created as a stack in moto's CloudFormation: the tables, bucket, key, functions and
state machines it creates are the ones the code expects, and the code works against them."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from chalicelib import settings, wiring
from chalicelib.adapters.dynamodb.tables import TableNames
from chalicelib.settings import Settings
from infra import build
from tests.infra.conftest import STAGE, Package
from tests.infra.moto_stack import for_moto
from tests.infra.support import (
    PROJECT_DIR,
    SAMPLE_ASL,
    merge,
    model_key_schemas,
    stage_environment,
)

REGION = "us-east-1"
ACCOUNT = "123456789012"  # moto's default account
ARTIFACT_BUCKET = "lakelet-artifacts-test"
CODE_KEY = "lakelet/dev/lambda/deployment.zip"
STACK = "lakelet-dev"


@pytest.fixture(scope="module")
def stack(package: Package, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The stack in moto, with one sample state machine; yields what was left out and the live clients."""
    stepfunctions = tmp_path_factory.mktemp("stepfunctions")
    (stepfunctions / "sample-flow.asl.json").write_text(json.dumps(SAMPLE_ASL))
    template = merge(build.build(build.read_app(PROJECT_DIR, STAGE), stepfunctions), package.template())
    with mock_aws():
        s3 = boto3.client("s3", region_name=REGION)
        s3.create_bucket(Bucket=ARTIFACT_BUCKET)
        # What `aws cloudformation package` does before the deploy: the bundle goes to the artifact bucket.
        s3.upload_file(str(package.bundle_path), ARTIFACT_BUCKET, CODE_KEY)
        moto_template, left_out = for_moto(template, ARTIFACT_BUCKET, CODE_KEY)
        cloudformation = boto3.client("cloudformation", region_name=REGION)
        cloudformation.create_stack(
            StackName=STACK,
            TemplateBody=json.dumps(moto_template),
            Parameters=[{"ParameterKey": "ArtifactBucket", "ParameterValue": ARTIFACT_BUCKET}],
            Capabilities=["CAPABILITY_IAM", "CAPABILITY_AUTO_EXPAND"],
        )
        yield {"left_out": left_out, "cloudformation": cloudformation}


def _stack_resources(stack: dict[str, Any]) -> dict[str, dict[str, Any]]:
    answer = stack["cloudformation"].describe_stack_resources(StackName=STACK)
    # moto lists a resource whose Condition is false (the hook policies, with no HookFunctions) without an id.
    return {r["LogicalResourceId"]: r for r in answer["StackResources"] if "LogicalResourceId" in r}


def _function_env(name: str) -> dict[str, str]:
    config = boto3.client("lambda", region_name=REGION).get_function_configuration(FunctionName=name)
    return dict(config["Environment"]["Variables"])


def test_the_stack_is_created_and_only_types_moto_lacks_are_left_out(stack: dict[str, Any]) -> None:
    status = stack["cloudformation"].describe_stacks(StackName=STACK)["Stacks"][0]["StackStatus"]
    assert status == "CREATE_COMPLETE"
    left_types = {entry.split(" (")[1].rstrip(")") for entry in stack["left_out"]}
    assert left_types <= {
        "AWS::EMRServerless::Application",
        "AWS::Lambda::Url",
        "AWS::S3::BucketPolicy",
        "AWS::ApiGateway::GatewayResponse",
    }
    resources = _stack_resources(stack)
    for logical_id in (
        "RepositoriesTable",
        "DataBucket",
        "SecretsKey",
        "GCJobRole",
        "APIHandler",
        "S3Gateway",
        "CollectGarbage",
        "APIHandlerAccess",
        "APIHandlerLogGroup",
        "SampleFlowStateMachine",
    ):
        assert logical_id in resources, logical_id


def test_the_tables_have_the_names_and_keys_of_the_models(stack: dict[str, Any]) -> None:
    dynamodb = boto3.client("dynamodb", region_name=REGION)
    expected = model_key_schemas(stage_environment(STAGE)[settings.ENV_TABLE_PREFIX])
    created = set(dynamodb.list_tables()["TableNames"])
    assert set(expected) <= created
    for name, schema in expected.items():
        table = dynamodb.describe_table(TableName=name)["Table"]
        keys = sorted(((k["AttributeName"], k["KeyType"]) for k in table["KeySchema"]), key=lambda k: k[1])
        assert keys == schema["KeySchema"], name
        types = {d["AttributeName"]: d["AttributeType"] for d in table["AttributeDefinitions"]}
        assert types == schema["AttributeTypes"], name
        assert table["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"


def test_the_bucket_key_and_functions_agree(stack: dict[str, Any]) -> None:
    bucket = f"lakelet-{STAGE}-data-{ACCOUNT}-{REGION}"
    s3 = boto3.client("s3", region_name=REGION)
    # moto applies the encryption of the template (not its public access block: test_template checks that).
    assert s3.get_bucket_encryption(Bucket=bucket)["ServerSideEncryptionConfiguration"]["Rules"]
    key_arn = boto3.client("kms", region_name=REGION).describe_key(KeyId=f"alias/lakelet-{STAGE}-secrets")[
        "KeyMetadata"
    ]["Arn"]
    names = {f"lakelet-{STAGE}-api-handler", f"lakelet-{STAGE}-s3-gateway", f"lakelet-{STAGE}-collect-garbage"}
    listed = {f["FunctionName"] for f in boto3.client("lambda", region_name=REGION).list_functions()["Functions"]}
    assert names <= listed
    for name in names:
        env = _function_env(name)
        assert env[settings.ENV_BUCKET] == bucket
        assert env[settings.ENV_KMS_KEY_ID] == key_arn
        assert env[settings.ENV_TABLE_PREFIX] == f"lakelet-{STAGE}-"
        assert env[settings.ENV_STAGE] == STAGE
    roles = {r["RoleName"] for r in boto3.client("iam").list_roles()["Roles"]}
    assert len(roles) >= 5  # three function roles, the GC job's, the state machine's


def test_the_state_machine_calls_the_functions_of_the_stack(stack: dict[str, Any]) -> None:
    sfn = boto3.client("stepfunctions", region_name=REGION)
    machines = {m["name"]: m["stateMachineArn"] for m in sfn.list_state_machines()["stateMachines"]}
    arn = machines[f"lakelet-{STAGE}-sample-flow"]
    definition = json.loads(sfn.describe_state_machine(stateMachineArn=arn)["definition"])
    lambda_client = boto3.client("lambda", region_name=REGION)
    api_arn = lambda_client.get_function(FunctionName=f"lakelet-{STAGE}-api-handler")["Configuration"]["FunctionArn"]
    gc_arn = lambda_client.get_function(FunctionName=f"lakelet-{STAGE}-collect-garbage")["Configuration"]["FunctionArn"]
    assert definition["States"]["Seal"]["Resource"] == api_arn
    assert definition["States"]["Collect"]["Parameters"]["FunctionName"] == gc_arn
    assert _function_env(f"lakelet-{STAGE}-api-handler")["LAKELET_SAMPLE_FLOW_STATE_MACHINE_ARN"] == arn


def test_the_code_runs_against_the_stack_with_the_api_functions_environment(stack: dict[str, Any]) -> None:
    # The API function's own environment, as Lambda would hand it over, builds the deployed wiring.
    env = {**_function_env(f"lakelet-{STAGE}-api-handler"), "AWS_REGION": REGION}
    deployed = Settings.from_env(env)
    assert TableNames.from_prefix(deployed.table_prefix).staging == f"lakelet-{STAGE}-staging"
    services = wiring.aws_services(deployed)
    credential, secret = services.auth.setup("admin")  # KMS-encrypted into the auth table
    assert services.auth.authenticate_basic(credential.access_key_id, secret).id == "admin"
    engine = services.engine
    engine.repositories.create_repository("smoke", f"s3://{deployed.bucket}/smoke", "main")
    engine.objects.upload_object("smoke", "main", "a.txt", b"hello")
    commit = engine.commits.commit("smoke", "main", "admin", "first")
    assert commit.message == "first"
    assert engine.objects.read_object("smoke", engine.objects.stat_object("smoke", "main~0", "a.txt")) == b"hello"
    keys = [
        o["Key"]
        for o in boto3.client("s3", region_name=REGION).list_objects_v2(Bucket=deployed.bucket, Prefix="smoke/")[
            "Contents"
        ]
    ]
    assert any(key.startswith("smoke/data/") for key in keys) and any("_lakefs/" in key for key in keys)
