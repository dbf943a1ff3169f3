"""``make deploy-rehearsal``: the output of ``make package`` deployed into moto's CloudFormation, offline.

What ``make deploy`` does with an account, done in-process against moto (``mock_aws``): the bundle and the GC job
go to an artifact bucket (``aws cloudformation package`` and ``aws s3 cp``), the SAM transform is expanded locally
with aws-sam-translator (the library CloudFormation's AWS::Serverless transform runs), and the stack is created.
Then every name and ARN the code reads from a function's environment (chalicelib/settings.py, read by
chalicelib/wiring.py and chalicelib/gc) and every stack output must resolve to a resource the stack created.

moto's CloudFormation does not implement every type: resources of such types are left out of the created stack
and listed by type, and each reference to one becomes a placeholder that the checks report as "not created by
moto", never as a pass.

Usage: python -m infra.rehearsal build/dev/package [--stage dev] [--json PATH] [Key=Value ...]
(stack parameters as ``make deploy`` takes them in DEPLOY_PARAMETERS, e.g. ImportLocations=bucket:prefix/)
"""

from __future__ import annotations

import argparse
import copy
import json
import re
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from chalicelib.graveler.runs.plan_json import Json
from infra import rehearsal_checks as checks
from infra.rehearsal_checks import PLACEHOLDER, REGION, Check

ACCOUNT = "123456789012"  # moto's default account
PROJECT_DIR = Path(__file__).resolve().parents[1]
# Where `make deploy` puts the bundle and the GC job (Makefile, "deploy"), in an artifact bucket of this name.
ARTIFACT_BUCKET = "lakelet-artifacts-rehearsal"


@dataclass
class Report:
    stack_status: str = ""
    created: dict[str, int] = field(default_factory=dict)  # resource type -> count created in moto
    not_created: dict[str, list[str]] = field(default_factory=dict)  # resource type -> logical ids left out
    # Resources whose Condition is false for the rehearsal's parameters (no hook functions, no import locations):
    # not created on AWS either with these parameters.
    condition_false: list[str] = field(default_factory=list)
    checks: list[Check] = field(default_factory=list)

    @property
    def failures(self) -> list[Check]:
        return [c for c in self.checks if c.status == "failed"]

    @property
    def ok(self) -> bool:
        return self.stack_status == "CREATE_COMPLETE" and not self.failures


# ---- the template: what `aws cloudformation package` and the SAM transform do -----------------------------------


def packaged(template: Json, code_key: str) -> Json:
    """The template as ``aws cloudformation package`` uploads it: each function's local CodeUri becomes the S3 URI
    the bundle was uploaded to."""
    out = copy.deepcopy(template)
    for resource in out["Resources"].values():
        if resource["Type"] == "AWS::Serverless::Function":
            resource["Properties"]["CodeUri"] = f"s3://{ARTIFACT_BUCKET}/{code_key}"
    return out


def expand_sam(template: Json, parameters: dict[str, str]) -> Json:
    """The AWS::Serverless transform, expanded here as CloudFormation would on deploy."""
    import boto3
    from samtranslator.parser.parser import Parser
    from samtranslator.translator.translator import Translator

    # No managed policy is named in the template (infra/access.py writes every statement); an empty map makes a
    # name that slips in fail the transform instead of reaching IAM.
    translator = Translator({}, Parser(), boto_session=boto3.Session(region_name=REGION))
    values = {"AWS::AccountId": ACCOUNT, **parameters}
    return dict(translator.translate(copy.deepcopy(template), parameter_values=values))


# ---- what moto cannot create --------------------------------------------------------------------------------------


def _replace_references(node: Any, dropped: set[str]) -> Any:
    """References to a resource left out become a placeholder string, so the rest of the stack resolves."""
    if isinstance(node, list):
        return [_replace_references(child, dropped) for child in node]
    if not isinstance(node, dict):
        return node
    if set(node) == {"Ref"} and node["Ref"] in dropped:
        return f"{PLACEHOLDER}:{node['Ref']}"
    if set(node) == {"Fn::GetAtt"}:
        target = node["Fn::GetAtt"]
        name = target.split(".")[0] if isinstance(target, str) else target[0]
        if name in dropped:
            return f"{PLACEHOLDER}:{name}"
    if set(node) == {"Fn::Sub"}:
        argument = node["Fn::Sub"]
        text, variables = (argument[0], argument[1]) if isinstance(argument, list) else (argument, {})

        def literal(match: re.Match[str]) -> str:
            name = match.group(1).split(".")[0]
            return f"{PLACEHOLDER}:{name}" if name in dropped and name not in variables else match.group(0)

        text = re.sub(r"\$\{([^}!]+)\}", literal, text)
        variables = _replace_references(variables, dropped)
        return {"Fn::Sub": [text, variables] if variables else text}
    return {key: _replace_references(child, dropped) for key, child in node.items()}


def _as_json_text(document: Any) -> Json:
    """``document`` as ``{"Fn::Sub": [json text, variables]}``: moto keeps a KMS key policy given as an object and
    later fails to parse it, so it gets the JSON text CloudFormation would hand the KMS API."""
    variables: Json = {}

    def lift(node: Any) -> Any:
        if isinstance(node, dict) and len(node) == 1 and next(iter(node)).startswith(("Fn::", "Ref")):
            name = f"V{len(variables)}"
            variables[name] = node
            return "${" + name + "}"
        if isinstance(node, dict):
            return {key: lift(child) for key, child in node.items()}
        if isinstance(node, list):
            return [lift(child) for child in node]
        return node

    return {"Fn::Sub": [json.dumps(lift(document)), variables]}


def for_moto(template: Json) -> tuple[Json, dict[str, list[str]], dict[str, Json]]:
    """The expanded template with the types moto's CloudFormation lacks taken out; those, by type; and the Swagger
    body of each REST API, which moto's CloudFormation ignores (the rehearsal imports it after the stack)."""
    from moto.cloudformation.parsing import resource_class_from_type

    out = copy.deepcopy(template)
    resources: Json = out["Resources"]
    bodies: dict[str, Json] = {}
    for logical_id, resource in resources.items():
        if resource["Type"] == "AWS::KMS::Key":
            resource["Properties"]["KeyPolicy"] = _as_json_text(resource["Properties"]["KeyPolicy"])
        if resource["Type"] == "AWS::ApiGateway::RestApi" and "Body" in resource["Properties"]:
            # CloudFormation names the API after the body's title; moto insists on Name.
            bodies[logical_id] = {"Body": resource["Properties"].pop("Body")}
            resource["Properties"].setdefault("Name", bodies[logical_id]["Body"]["info"]["title"])
    left_out: dict[str, list[str]] = {}
    for logical_id, resource in list(resources.items()):
        api = resource["Properties"].get("RestApiId", {}).get("Ref") if "Properties" in resource else None
        if resource["Type"] == "AWS::ApiGateway::Deployment" and api in bodies:
            # moto cannot deploy an API without methods; the rehearsal deploys it after importing the body.
            bodies[api] = {**bodies[api], "Deployment": logical_id}
            del resources[logical_id]
            continue
        if resource["Type"] == "AWS::ApiGateway::Stage" and api in bodies:
            bodies[api] = {**bodies[api], "StageName": resource["Properties"]["StageName"]}
        if resource_class_from_type(resource["Type"]) is None:
            left_out.setdefault(resource["Type"], []).append(logical_id)
            del resources[logical_id]
    dropped = {logical_id for ids in left_out.values() for logical_id in ids}
    dropped |= {api["Deployment"] for api in bodies.values() if "Deployment" in api}
    for resource in resources.values():
        # DependsOn a resource left out would stop moto's ordering.
        depends = resource.get("DependsOn")
        if isinstance(depends, list):
            resource["DependsOn"] = [d for d in depends if d not in dropped]
        elif depends in dropped:
            del resource["DependsOn"]
    left = {k: sorted(v) for k, v in sorted(left_out.items())}
    return _replace_references(out, dropped), left, bodies


def resolve_intrinsics(node: Any, values: dict[str, str]) -> Any:
    """``node`` with Ref, Fn::GetAtt and Fn::Sub replaced from ``values`` ("Name", "Name.Attribute", "AWS::Region"):
    enough for the integration URIs of a REST API body, which name the functions of the stack."""
    if isinstance(node, list):
        return [resolve_intrinsics(child, values) for child in node]
    if not isinstance(node, dict):
        return node
    if set(node) == {"Ref"}:
        return values[node["Ref"]]
    if set(node) == {"Fn::GetAtt"}:
        target = node["Fn::GetAtt"]
        return values[target if isinstance(target, str) else ".".join(target)]
    if set(node) == {"Fn::Sub"} and isinstance(node["Fn::Sub"], str):
        return re.sub(r"\$\{([^}!]+)\}", lambda m: values[m.group(1)], node["Fn::Sub"])
    return {key: resolve_intrinsics(child, values) for key, child in node.items()}


# ---- the rehearsal -------------------------------------------------------------------------------------------------


def _count_types(template: Json) -> dict[str, int]:
    counts: dict[str, int] = {}
    for resource in template["Resources"].values():
        counts[resource["Type"]] = counts.get(resource["Type"], 0) + 1
    return dict(sorted(counts.items()))


def rehearse(package_dir: Path, stage: str, extra_parameters: dict[str, str] | None = None) -> Report:
    """Deploys ``package_dir`` (sam.json and deployment.zip) into moto and checks what the code reads."""
    import boto3
    from moto import mock_aws

    report = Report()
    template = json.loads((package_dir / "sam.json").read_text())
    code_key = f"lakelet/{stage}/lambda/deployment.zip"
    parameters = {"ArtifactBucket": ARTIFACT_BUCKET, **(extra_parameters or {})}
    expanded = expand_sam(packaged(template, code_key), parameters)
    moto_template, report.not_created, bodies = for_moto(expanded)
    with mock_aws():
        s3 = boto3.client("s3", region_name=REGION)
        s3.create_bucket(Bucket=ARTIFACT_BUCKET)
        # What `make deploy` uploads before it creates the stack.
        s3.upload_file(str(package_dir / "deployment.zip"), ARTIFACT_BUCKET, code_key)
        s3.upload_file(str(PROJECT_DIR / "emr" / "gc_job.py"), ARTIFACT_BUCKET, f"lakelet/{stage}/emr/gc_job.py")
        cloudformation = boto3.client("cloudformation", region_name=REGION)
        stack_name = f"lakelet-{stage}-rehearsal"
        cloudformation.create_stack(
            StackName=stack_name,
            TemplateBody=json.dumps(moto_template),
            Parameters=[{"ParameterKey": k, "ParameterValue": v} for k, v in parameters.items()],
            Capabilities=["CAPABILITY_IAM", "CAPABILITY_AUTO_EXPAND"],
        )
        stack = cloudformation.describe_stacks(StackName=stack_name)["Stacks"][0]
        report.stack_status = stack["StackStatus"]
        resources = cloudformation.describe_stack_resources(StackName=stack_name)["StackResources"]
        # moto lists a resource whose Condition is false without a logical id: it was not created.
        created = [r for r in resources if "LogicalResourceId" in r]
        for resource in created:
            report.created[resource["ResourceType"]] = report.created.get(resource["ResourceType"], 0) + 1
        report.created = dict(sorted(report.created.items()))
        named = {r["LogicalResourceId"] for r in created} | {
            a["Deployment"] for a in bodies.values() if "Deployment" in a
        }
        report.condition_false = sorted(
            f"{logical_id} ({resource['Type']})"
            for logical_id, resource in moto_template["Resources"].items()
            if logical_id not in named and "Condition" in resource
        )
        for logical_id, resource in moto_template["Resources"].items():
            if logical_id not in named and "Condition" not in resource:
                report.checks.append(Check(f"resource {logical_id}", resource["Type"], "failed", "not created"))
        lambda_client = boto3.client("lambda", region_name=REGION)
        function_arns: dict[str, str] = {}
        function_names: set[str] = set()
        for resource in created:
            if resource["ResourceType"] != "AWS::Lambda::Function":
                continue
            config = lambda_client.get_function_configuration(FunctionName=resource["PhysicalResourceId"])
            function_arns[resource["LogicalResourceId"]] = config["FunctionArn"]
            function_names.add(config["FunctionName"])
            env = config.get("Environment", {}).get("Variables", {})
            report.checks += checks.function_checks(resource["LogicalResourceId"], env)
        values = {"AWS::Region": REGION, "AWS::Partition": "aws", "AWS::AccountId": ACCOUNT}
        values |= {"AWS::URLSuffix": "amazonaws.com"}
        values |= {r["LogicalResourceId"]: r["PhysicalResourceId"] for r in created if "PhysicalResourceId" in r}
        values |= {f"{logical_id}.Arn": arn for logical_id, arn in function_arns.items()}
        for logical_id, api in bodies.items():
            body = resolve_intrinsics(api["Body"], values)
            report.checks += checks.rest_api_checks(values[logical_id], body, api.get("StageName"))
        for output in stack.get("Outputs", []):
            key, value = output["OutputKey"], output["OutputValue"]
            lookup = checks.output_lookup(key, value, function_names)
            report.checks.append(checks.resolve(f"output {key}", value, lookup))
        report.checks += checks.schedule_checks(function_arns)
    return report


def render(report: Report) -> str:
    lines = [f"stack: {report.stack_status}", "", "created in moto (by type):"]
    lines += [f"  {count:3d}  {kind}" for kind, count in report.created.items()]
    lines += ["", "moto cannot create (left out, by type):"]
    lines += [f"  {kind}: {', '.join(ids)}" for kind, ids in report.not_created.items()] or ["  (none)"]
    lines += ["", "not created because their Condition is false for these parameters (as on AWS):"]
    lines += [f"  {entry}" for entry in report.condition_false] or ["  (none)"]
    lines += ["", "what the code reads:"]
    width = max((len(c.subject) for c in report.checks), default=0)
    for check in report.checks:
        lines.append(f"  {check.status:<20} {check.subject:<{width}}  {check.value}  ({check.detail})")
    failed = len(report.failures)
    unverified = sum(1 for c in report.checks if c.status != "ok" and c.status != "failed")
    lines += ["", f"{len(report.checks)} checks: {failed} failed, {unverified} name resources moto cannot create"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("package_dir", type=Path, help="what make package wrote: sam.json and deployment.zip")
    parser.add_argument("--stage", default="dev")
    parser.add_argument("--json", type=Path, help="also write the report here")
    parser.add_argument("parameters", nargs="*", metavar="Key=Value", help="stack parameters, as make deploy takes")
    args = parser.parse_args(argv)
    malformed = [p for p in args.parameters if "=" not in p]
    if malformed:
        parser.error(f"parameters are Key=Value: {malformed}")
    extra = dict(p.split("=", 1) for p in args.parameters)
    for name in ("sam.json", "deployment.zip"):
        if not (args.package_dir / name).is_file():
            print(f"error: {args.package_dir / name} is missing: run 'make package' first", file=sys.stderr)
            return 2
    report = rehearse(args.package_dir, args.stage, extra)
    print(render(report))
    if args.json:
        args.json.write_text(json.dumps(asdict(report) | {"ok": report.ok}, indent=2))
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
