"""Builds the template that ``chalice package --merge-template`` merges into Chalice's own, for one stage.

It starts from infra/lakelet.yaml (tables, bucket, KMS key, GC application and job role) and adds what the
Chalice app implies, read from Chalice's own application graph (the same one ``chalice package`` builds from):

- for every Lambda function: a name (lakelet-<stage>-<function>), a log group with the LogRetentionDays
  retention, a role policy with exactly what infra/access.py grants it, and the environment that names the
  resources AWS names at deploy time (bucket, key, GC application, state machines);
- the GC schedule as the GCSchedule parameter;
- a Function URL for the S3 gateway;
- a state machine and its role for each stepfunctions/*.asl.json (infra/state_machines.py);
- outputs: the lakeFS endpoint clients use, the S3 gateway endpoint.

Usage: ``python -m infra.build --stage dev --out build/dev/merge.json`` (``make package`` runs it).
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml
from chalice.utils import to_cfn_resource_name

from chalicelib.graveler.runs.plan_json import Json

from . import access, state_machines
from .iceberg_role import add_iceberg_data_role

PROJECT_DIR = Path(__file__).resolve().parents[1]
BASE_TEMPLATE = Path(__file__).resolve().parent / "lakelet.yaml"
API_HANDLER = "api_handler"
# chalice package names the REST API's handler and the API itself so, whatever the function is called.
API_HANDLER_LOGICAL_ID = "APIHandler"
REST_API_LOGICAL_ID = "RestAPI"
NOT_FOUND_BODY = '{"message": "not found: no such API route"}'


def gateway_responses() -> Json:
    """The answers API Gateway gives by itself, in lakeFS's error shape and quoting nothing of the request.

    A path or method no route matches is MISSING_AUTHENTICATION_TOKEN: a 403 "Missing Authentication Token",
    or, when the request has an Authorization header, a message quoting that header back (the caller's Basic
    credentials, in the body). It becomes a lakeFS 404. Every other answer of its own (413, 429, 504, ...)
    keeps its status and names only its type. (A greedy ``/{proxy+}`` route would send unknown paths to the
    Lambda instead, but not unknown methods of known paths, and chalice local cannot serve one: local answers
    come from lakelet/stack/devserver.py.)
    """
    content_type = {"gatewayresponse.header.Content-Type": "'application/json'"}
    own = '{"message": "refused by API Gateway: $context.error.responseType"}'
    shapes = {
        "MissingRoute": ("MISSING_AUTHENTICATION_TOKEN", "404", NOT_FOUND_BODY),
        "Default4xx": ("DEFAULT_4XX", None, own),
        "Default5xx": ("DEFAULT_5XX", None, own),
    }
    resources: Json = {}
    for name, (response_type, status, body) in shapes.items():
        properties: Json = {
            "RestApiId": {"Ref": REST_API_LOGICAL_ID},
            "ResponseType": response_type,
            "ResponseParameters": content_type,
            "ResponseTemplates": {"application/json": body},
        }
        if status is not None:
            properties["StatusCode"] = status
        resources["GatewayResponse" + name] = {"Type": "AWS::ApiGateway::GatewayResponse", "Properties": properties}
    return resources


class BuildError(RuntimeError):
    """The app defines something the infrastructure cannot (yet) be built for."""


@dataclass(frozen=True, slots=True)
class Function:
    """One Lambda function of the Chalice app, as ``chalice package`` names it in the template."""

    name: str
    logical_id: str
    role_logical_id: str
    # Logical ids of the events chalice package puts on it (Events of the SAM function), by kind.
    schedule_events: tuple[str, ...] = ()

    @property
    def function_name(self) -> str:
        return "lakelet-${Stage}-" + self.name.replace("_", "-")

    @property
    def log_group_logical_id(self) -> str:
        return self.logical_id + "LogGroup"

    @property
    def policy_logical_id(self) -> str:
        return self.logical_id + "Access"


@dataclass(frozen=True, slots=True)
class App:
    """What the template needs to know of the Chalice app for one stage."""

    stage: str
    api_gateway_stage: str
    functions: tuple[Function, ...]
    has_rest_api: bool


def read_app(project_dir: Path, stage: str) -> App:
    """The app's functions as ``chalice package`` will emit them (Chalice's application graph, offline)."""
    from chalice.cli.factory import CLIFactory
    from chalice.deploy import models
    from chalice.deploy.appgraph import ApplicationGraphBuilder, DependencyBuilder

    config = CLIFactory(str(project_dir)).create_config_obj(chalice_stage_name=stage)
    graph = ApplicationGraphBuilder().build(config, stage)
    resources = DependencyBuilder().build_dependencies(graph)
    schedules: dict[str, list[str]] = {}
    for resource in resources:
        if isinstance(resource, models.ScheduledEvent):
            schedules.setdefault(resource.lambda_function.resource_name, []).append(
                to_cfn_resource_name(resource.resource_name)
            )
    functions = []
    for resource in resources:
        if not isinstance(resource, models.LambdaFunction):
            continue
        name = resource.resource_name
        logical_id = API_HANDLER_LOGICAL_ID if name == API_HANDLER else to_cfn_resource_name(name)
        role = resource.role
        if not isinstance(role, models.ManagedIAMRole) or role.resource_name == "default-role":
            raise BuildError("set autogen_policy false in .chalice/config.json: every function needs its own role")
        functions.append(
            Function(name, logical_id, to_cfn_resource_name(role.resource_name), tuple(schedules.get(name, ())))
        )
    has_rest_api = any(isinstance(resource, models.RestAPI) for resource in resources)
    return App(stage, config.api_gateway_stage, tuple(sorted(functions, key=lambda f: f.name)), has_rest_api)


def load_base() -> Json:
    return dict(yaml.safe_load(BASE_TEMPLATE.read_text()))


def build(app: App, stepfunctions_dir: Path) -> Json:
    """The merge template for ``app``'s stage."""
    template = copy.deepcopy(load_base())
    stage_parameter = template["Parameters"]["Stage"]
    stage_parameter["AllowedValues"] = [app.stage]
    stage_parameter["Default"] = app.stage
    template["Parameters"][access.IMPORT_LOCATIONS]["AllowedPattern"] = access.IMPORT_LOCATIONS_PATTERN
    resources: Json = template["Resources"]
    outputs: Json = template["Outputs"]

    missing = [f.name for f in app.functions if f.name not in access.FUNCTION_ACCESS]
    if missing:
        raise BuildError(
            f"no permissions decided for Lambda function(s) {missing}: add them to FUNCTION_ACCESS in infra/access.py"
        )
    logical_ids = {f.name: f.logical_id for f in app.functions}
    machines = state_machines.discover(stepfunctions_dir, set(logical_ids))
    for machine in machines:
        resources.update(state_machines.resources(machine, logical_ids))
        outputs[machine.logical_id + "Arn"] = {
            "Description": f"The {machine.name} state machine.",
            "Value": {"Ref": machine.logical_id},
        }

    secret_roles = []
    for function in app.functions:
        grants = access.FUNCTION_ACCESS[function.name]
        resources.update(_function_resources(function, grants, machines))
        if grants.function_url:
            resources.update(_function_url(function))
            outputs[function.logical_id + "Endpoint"] = {
                "Description": "The S3 gateway: the endpoint_url of boto3, the aws cli and other S3 clients.",
                "Value": {"Fn::GetAtt": [function.logical_id + "Url", "FunctionUrl"]},
            }
        if grants.secrets:
            secret_roles.append(function.role_logical_id)

    gateways = [f for f in app.functions if access.FUNCTION_ACCESS[f.name].function_url]
    api = next((f for f in app.functions if f.name == API_HANDLER), None)
    if gateways and api is not None:
        # The Iceberg catalog gives engines the gateway's URL as the tables' s3.endpoint (docs/iceberg.md).
        variables = resources[api.logical_id]["Properties"]["Environment"]["Variables"]
        variables["LAKELET_ICEBERG_S3_ENDPOINT"] = {"Fn::GetAtt": [gateways[0].logical_id + "Url", "FunctionUrl"]}

    if api is not None:
        add_iceberg_data_role(resources, api.role_logical_id, api.policy_logical_id, api.logical_id)

    import_readers = [f.role_logical_id for f in app.functions if access.FUNCTION_ACCESS[f.name].reads_import_sources]
    if import_readers:
        conditions, listing = access.import_listing_resources(import_readers)
        template["Conditions"].update(conditions)
        resources.update(listing)

    if secret_roles:
        resources[access.SECRETS_KEY]["Properties"]["KeyPolicy"]["Statement"].append(
            {
                "Sid": "FunctionsUseTheKey",
                "Effect": "Allow",
                "Principal": {"AWS": [{"Fn::GetAtt": [role, "Arn"]} for role in secret_roles]},
                "Action": ["kms:Decrypt", "kms:Encrypt"],
                "Resource": "*",
            }
        )
    if app.has_rest_api:
        # Chalice's "xray" traces the functions; the API's own stage is traced only when asked.
        resources[REST_API_LOGICAL_ID] = {"Properties": {"TracingEnabled": True}}
        resources.update(gateway_responses())
        outputs["LakeFSEndpoint"] = {
            "Description": "The lakeFS API: the host of the lakeFS clients (lakefs.Client(host=...), lakectl).",
            "Value": {
                "Fn::Sub": "https://${RestAPI}.execute-api.${AWS::Region}.${AWS::URLSuffix}/"
                + app.api_gateway_stage
                + "/api/v1"
            },
        }
    return template


def _function_resources(
    function: Function, grants: access.FunctionAccess, machines: list[state_machines.StateMachine]
) -> Json:
    """A function's log group and role policy, and what the merge adds to the function Chalice wrote."""
    properties: Json = {
        "FunctionName": {"Fn::Sub": function.function_name},
        "LoggingConfig": {"LogGroup": {"Ref": function.log_group_logical_id}},
        "Environment": {"Variables": access.environment(grants, machines)},
    }
    if grants.gc_schedule:
        properties["Events"] = {
            event: {"Properties": {"Schedule": {"Ref": "GCSchedule"}}} for event in function.schedule_events
        }
    hook_policy: Json = {}
    if grants.runs_hooks:
        # Its own policy, created only when HookFunctions lists functions: an empty list grants nothing at all.
        hook_policy[function.logical_id + "HookAccess"] = {
            "Type": "AWS::IAM::Policy",
            "Condition": access.HOOK_FUNCTIONS_GIVEN,
            "Properties": {
                "PolicyName": "lakelet-hooks",
                "Roles": [{"Ref": function.role_logical_id}],
                "PolicyDocument": {"Version": "2012-10-17", "Statement": access.hook_statements()},
            },
        }
    return {
        **hook_policy,
        function.logical_id: {"Properties": properties},
        function.log_group_logical_id: {
            "Type": "AWS::Logs::LogGroup",
            # Logs go with the stack (unlike the data): nothing else reads them.
            "DeletionPolicy": "Delete",
            "UpdateReplacePolicy": "Delete",
            "Properties": {
                "LogGroupName": {"Fn::Sub": "/aws/lambda/" + function.function_name},
                "RetentionInDays": {"Ref": "LogRetentionDays"},
            },
        },
        function.policy_logical_id: {
            "Type": "AWS::IAM::Policy",
            "Properties": {
                "PolicyName": "lakelet-access",
                "Roles": [{"Ref": function.role_logical_id}],
                "PolicyDocument": {
                    "Version": "2012-10-17",
                    "Statement": access.statements(grants, function.log_group_logical_id, machines),
                },
            },
        },
    }


def _function_url(function: Function) -> Json:
    # AuthType NONE: the gateway authenticates every request itself with SigV4, as S3 does. Since October 2025 a
    # public Function URL needs both permissions below.
    target = {"Ref": function.logical_id}
    return {
        function.logical_id + "Url": {
            "Type": "AWS::Lambda::Url",
            "Properties": {"TargetFunctionArn": target, "AuthType": "NONE", "InvokeMode": "BUFFERED"},
        },
        function.logical_id + "UrlPermission": {
            "Type": "AWS::Lambda::Permission",
            "Properties": {
                "FunctionName": target,
                "Action": "lambda:InvokeFunctionUrl",
                "Principal": "*",
                "FunctionUrlAuthType": "NONE",
            },
        },
        function.logical_id + "UrlInvokePermission": {
            "Type": "AWS::Lambda::Permission",
            "Properties": {
                "FunctionName": target,
                "Action": "lambda:InvokeFunction",
                "Principal": "*",
                "InvokedViaFunctionUrl": True,
            },
        },
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m infra.build", description=__doc__.splitlines()[0])
    parser.add_argument("--stage", required=True, help="the Chalice stage (.chalice/config.json)")
    parser.add_argument("--out", required=True, type=Path, help="where to write the merge template (JSON)")
    parser.add_argument("--project-dir", type=Path, default=PROJECT_DIR)
    parser.add_argument("--stepfunctions-dir", type=Path, default=None, help="default: <project>/stepfunctions")
    args = parser.parse_args(argv)
    try:
        app = read_app(args.project_dir, args.stage)
        template = build(app, args.stepfunctions_dir or args.project_dir / "stepfunctions")
    except (BuildError, state_machines.StateMachineError) as e:
        print(f"infra.build: {e}", file=sys.stderr)
        return 1
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(template, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
