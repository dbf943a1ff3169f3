"""The checks of the deploy rehearsal (infra/rehearsal.py): every name and ARN a function's environment hands the
code, and every stack output, resolved against what moto's CloudFormation created.

Each value is looked up with the AWS API the code itself would call (DescribeTable, HeadBucket, DescribeKey,
DescribeStateMachine, GetFunction, GetRole, HeadObject, ListTargetsByRule), so "resolves" means the deployed code
would find it. A value naming a resource moto could not create is reported as such, never as a pass.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import boto3
from botocore.exceptions import ClientError

from chalicelib import settings
from chalicelib.adapters.dynamodb.tables import TableNames
from chalicelib.settings import GCSettings, Settings


@dataclass(frozen=True)
class Check:
    """One name the code reads, and what it resolved to: ``ok``, ``failed`` or ``not created by moto``."""

    subject: str  # e.g. "APIHandler env LAKELET_BUCKET" or "output DataBucketName"
    value: str
    status: str
    detail: str = ""


REGION = "us-east-1"
# What the rehearsal writes where moto created no resource (a name, an ARN), so a check can tell it apart.
PLACEHOLDER = "not-created-by-moto"
OK, FAILED, NOT_CREATED = "ok", "failed", "not created by moto"
Lookup = Callable[[str], str]  # returns a detail on success, raises on failure


def _client(service: str) -> Any:
    return boto3.client(service, region_name=REGION)  # type: ignore[call-overload]


def _bucket(name: str) -> str:
    _client("s3").head_bucket(Bucket=name)
    return "bucket exists"


def _tables(prefix: str) -> str:
    names = TableNames.from_prefix(prefix)
    dynamodb = _client("dynamodb")
    for name in (getattr(names, f) for f in names.__slots__):
        dynamodb.describe_table(TableName=name)
    return f"{len(names.__slots__)} tables exist"


def _key(key_id: str) -> str:
    state = _client("kms").describe_key(KeyId=key_id)["KeyMetadata"]["KeyState"]
    if state != "Enabled":
        raise ValueError(f"key is {state}")
    return "key enabled"


def _state_machine(arn: str) -> str:
    return "state machine " + _client("stepfunctions").describe_state_machine(stateMachineArn=arn)["name"]


def _function(name: str) -> str:
    return "function " + _client("lambda").get_function(FunctionName=name)["Configuration"]["FunctionName"]


def _role(arn: str) -> str:
    return "role " + _client("iam").get_role(RoleName=arn.rsplit("/", 1)[-1])["Role"]["Arn"]


def _s3_object(uri: str) -> str:
    bucket, _, key = uri.removeprefix("s3://").partition("/")
    _client("s3").head_object(Bucket=bucket, Key=key)
    return "object exists"


def _s3_prefix(uri: str) -> str:
    return _bucket(uri.removeprefix("s3://").partition("/")[0])


def _emr_application(application_id: str) -> str:
    return (
        "application " + _client("emr-serverless").get_application(applicationId=application_id)["application"]["name"]
    )


def _rest_api_url(url: str) -> str:
    match = re.match(r"https://([^.]+)\.execute-api\.", url)
    if not match:
        raise ValueError("not an API Gateway URL")
    return "REST API " + _client("apigateway").get_rest_api(restApiId=match.group(1))["name"]


def _rest_api(api_id: str) -> str:
    return "REST API " + _client("apigateway").get_rest_api(restApiId=api_id)["name"]


def _function_url(url: str) -> str:
    for function in _client("lambda").list_functions()["Functions"]:
        try:
            config = _client("lambda").get_function_url_config(FunctionName=function["FunctionName"])
        except ClientError:
            continue
        if config["FunctionUrl"] == url:
            return "function URL of " + function["FunctionName"]
    raise ValueError("no function has this URL")


def resolve(subject: str, value: str, lookup: Lookup) -> Check:
    if PLACEHOLDER in value:
        return Check(subject, value, NOT_CREATED, value.split(":", 1)[-1])
    try:
        return Check(subject, value, OK, lookup(value))
    except (ClientError, ValueError, KeyError) as error:
        return Check(subject, value, FAILED, str(error))


# What each variable settings.py reads names, when it names a resource; the other variables are knobs, checked by
# parsing the whole environment with Settings.from_env and GCSettings.from_env.
ENV_LOOKUPS: dict[str, Lookup] = {
    settings.ENV_BUCKET: _bucket,
    settings.ENV_TABLE_PREFIX: _tables,
    settings.ENV_KMS_KEY_ID: _key,
    settings.ENV_APPLICATION_ID: _emr_application,
    settings.ENV_EXECUTION_ROLE_ARN: _role,
    settings.ENV_ENTRY_POINT: _s3_object,
    settings.ENV_ARCHIVE: _s3_object,
    settings.ENV_LOG_URI: _s3_prefix,
}


def _env_lookup(name: str) -> Lookup | None:
    if name in ENV_LOOKUPS:
        return ENV_LOOKUPS[name]
    if name.endswith("_STATE_MACHINE_ARN"):
        return _state_machine
    return None


def function_checks(logical_id: str, env: Mapping[str, str]) -> list[Check]:
    checks = []
    for name in ("Settings", "GCSettings"):
        parse = Settings.from_env if name == "Settings" else GCSettings.from_env
        try:
            parse({**env, settings.ENV_REGION: REGION})
            checks.append(Check(f"{logical_id} env", f"{len(env)} variables", OK, f"{name}.from_env parses"))
        except ValueError as error:
            checks.append(Check(f"{logical_id} env", f"{len(env)} variables", FAILED, f"{name}.from_env: {error}"))
    for name, value in sorted(env.items()):
        if name == settings.ENV_HOOK_FUNCTIONS:
            for function in (f.strip() for f in value.split(",") if f.strip()):
                checks.append(resolve(f"{logical_id} env {name}", function, _function))
            continue
        lookup = _env_lookup(name)
        if lookup is not None and value:
            checks.append(resolve(f"{logical_id} env {name}", value, lookup))
    return checks


def output_lookup(key: str, value: str, function_names: set[str]) -> Lookup:
    """How to resolve an output, from its value's shape (ARNs, URLs) or its key; unknown shapes fail."""
    if key == "TablePrefix":
        return _tables
    if value.startswith("arn:aws:states:"):
        return _state_machine
    if value.startswith("arn:aws:lambda:") or value in function_names:
        return _function
    if value.startswith("arn:aws:iam:"):
        return _role
    if value.startswith("arn:aws:kms:"):
        return _key
    if ".execute-api." in value:
        return _rest_api_url
    if ".lambda-url." in value:
        return _function_url
    if key.endswith("BucketName"):
        return _bucket
    if key.endswith("ApplicationId"):
        return _emr_application
    if key == "RestAPIId":
        return _rest_api

    def unknown(_: str) -> str:
        raise ValueError(f"the rehearsal does not know how to resolve output {key}: teach infra/rehearsal_checks.py")

    return unknown


def schedule_checks(function_arns: Mapping[str, str]) -> list[Check]:
    """Every scheduled rule of the stack targets a function of the stack, and the GC function has one."""
    events = _client("events")
    checks = []
    scheduled: set[str] = set()
    for rule in events.list_rules()["Rules"]:
        if not rule.get("ScheduleExpression"):
            continue
        for target in events.list_targets_by_rule(Rule=rule["Name"])["Targets"]:
            owner = next((lid for lid, arn in function_arns.items() if arn == target["Arn"]), None)
            status = OK if owner else FAILED
            detail = f"targets {owner}" if owner else "targets no function of the stack"
            checks.append(Check(f"schedule {rule['Name']}", rule["ScheduleExpression"], status, detail))
            scheduled |= {owner} if owner else set()
    gc = "CollectGarbage"
    if gc in function_arns and gc not in scheduled:
        checks.append(Check(f"schedule of {gc}", "", FAILED, "no scheduled rule targets the GC function"))
    return checks


def _as_openapi3(swagger: dict[str, Any]) -> dict[str, Any]:
    """The paths, methods and integrations of a Swagger 2.0 body (what chalice writes) as OpenAPI 3, the only
    version moto imports; models and responses, which the checks do not look at, are left out."""
    paths = {
        path: {
            method: {"responses": {}, "x-amazon-apigateway-integration": spec["x-amazon-apigateway-integration"]}
            for method, spec in methods.items()
            if not method.startswith("x-") and "x-amazon-apigateway-integration" in spec
        }
        for path, methods in swagger["paths"].items()
    }
    return {"openapi": "3.0.1", "info": swagger["info"], "paths": paths}


def rest_api_checks(api_id: str, body: dict[str, Any], stage: str | None) -> list[Check]:
    """Imports the REST API's body and deploys it to ``stage``, as CloudFormation does on create, then checks that
    every route of the app is a method of the API and that each one's integration invokes a function of the
    stack."""
    apigateway = _client("apigateway")
    try:
        apigateway.put_rest_api(restApiId=api_id, mode="overwrite", body=json.dumps(_as_openapi3(body)).encode())
    except ClientError as error:
        return [Check("REST API body", api_id, FAILED, f"import refused: {error}")]
    resources = {r["path"]: r for r in apigateway.get_resources(restApiId=api_id, limit=500)["items"]}
    functions = {f["FunctionArn"] for f in _client("lambda").list_functions()["Functions"]}
    missing, foreign, routes = [], [], 0
    for path, methods in body["paths"].items():
        for method in methods:
            if method.startswith("x-"):
                continue
            routes += 1
            resource = resources.get(path)
            if resource is None or method.upper() not in resource.get("resourceMethods", {}):
                missing.append(f"{method.upper()} {path}")
                continue
            uri = apigateway.get_integration(restApiId=api_id, resourceId=resource["id"], httpMethod=method.upper())[
                "uri"
            ]
            if not any(f"/functions/{arn}/invocations" in uri for arn in functions):
                foreign.append(f"{method.upper()} {path} -> {uri}")
    checks = [
        Check(
            "REST API routes",
            api_id,
            FAILED if missing else OK,
            f"missing {missing}" if missing else f"{routes} routes",
        )
    ]
    detail = f"not a function of the stack: {foreign[:3]}" if foreign else f"{routes} integrations invoke the stack"
    checks.append(Check("REST API integrations", api_id, FAILED if foreign else OK, detail))
    if stage:
        try:
            deployment = apigateway.create_deployment(restApiId=api_id, stageName=stage)["id"]
            apigateway.get_stage(restApiId=api_id, stageName=stage)
            checks.append(Check("REST API stage", stage, OK, f"deployment {deployment}"))
        except ClientError as error:
            checks.append(Check("REST API stage", stage, FAILED, str(error)))
    return checks
