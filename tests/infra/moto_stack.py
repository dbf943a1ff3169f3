"""Turns the packaged SAM template into one moto's CloudFormation can create, as far as moto supports the types.

moto does not run the SAM transform, so this expands the two SAM types ``chalice package`` emits the way SAM
does: AWS::Serverless::Function into an AWS::Lambda::Function (its code from the bucket ``aws cloudformation
package`` would upload it to) plus a rule and a permission per Schedule event; AWS::Serverless::Api is dropped
(moto cannot import its Swagger body). Resource types moto does not implement (EMR Serverless, Lambda URLs, ...)
are dropped too, and references to anything dropped become plain strings, so the rest is created for real.
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

from moto.cloudformation.parsing import resource_class_from_type

from chalicelib.graveler.plan_json import Json


def _lambda_function(properties: Json, code_bucket: str, code_key: str) -> Json:
    copied = {
        k: properties[k]
        for k in (
            "Handler",
            "Runtime",
            "Role",
            "Timeout",
            "MemorySize",
            "Environment",
            "FunctionName",
            "Architectures",
            "LoggingConfig",
        )
        if k in properties
    }
    return {
        "Type": "AWS::Lambda::Function",
        "Properties": {
            **copied,
            "Code": {"S3Bucket": code_bucket, "S3Key": code_key},
            "TracingConfig": {"Mode": properties.get("Tracing", "PassThrough")},
            "Tags": [{"Key": k, "Value": v} for k, v in properties.get("Tags", {}).items()],
        },
    }


def expand_sam(template: Json, code_bucket: str, code_key: str) -> Json:
    out = copy.deepcopy(template)
    out.pop("Transform", None)
    resources: Json = out["Resources"]
    for logical_id, resource in list(resources.items()):
        if resource["Type"] == "AWS::Serverless::Api":
            del resources[logical_id]
        elif resource["Type"] == "AWS::Serverless::Function":
            properties = resource["Properties"]
            resources[logical_id] = _lambda_function(properties, code_bucket, code_key)
            for event_id, event in properties.get("Events", {}).items():
                assert event["Type"] == "Schedule", f"{logical_id}.{event_id}: only Schedule events are expanded"
                resources[logical_id + event_id] = {
                    "Type": "AWS::Events::Rule",
                    "Properties": {
                        "ScheduleExpression": event["Properties"]["Schedule"],
                        "State": "ENABLED",
                        "Targets": [{"Arn": {"Fn::GetAtt": [logical_id, "Arn"]}, "Id": logical_id}],
                    },
                }
                resources[logical_id + event_id + "Permission"] = {
                    "Type": "AWS::Lambda::Permission",
                    "Properties": {
                        "FunctionName": {"Ref": logical_id},
                        "Action": "lambda:InvokeFunction",
                        "Principal": "events.amazonaws.com",
                        "SourceArn": {"Fn::GetAtt": [logical_id + event_id, "Arn"]},
                    },
                }
    return out


def _replace_references(node: Any, dropped: set[str]) -> Any:
    if isinstance(node, list):
        return [_replace_references(child, dropped) for child in node]
    if not isinstance(node, dict):
        return node
    if set(node) == {"Ref"} and node["Ref"] in dropped:
        return f"dropped-{node['Ref']}"
    if set(node) == {"Fn::GetAtt"} and node["Fn::GetAtt"][0] in dropped:
        return "dropped-{}-{}".format(*node["Fn::GetAtt"])
    if set(node) == {"Fn::Sub"}:
        argument = node["Fn::Sub"]
        text, variables = (argument[0], argument[1]) if isinstance(argument, list) else (argument, {})

        def literal(match: re.Match[str]) -> str:
            name = match.group(1).split(".")[0]
            return f"dropped-{name}" if name in dropped and name not in variables else match.group(0)

        text = re.sub(r"\$\{([^}!]+)\}", literal, text)
        variables = _replace_references(variables, dropped)
        return {"Fn::Sub": [text, variables] if variables else text}
    return {key: _replace_references(child, dropped) for key, child in node.items()}


def _as_json_text(document: Any) -> Json:
    """``document`` as ``{"Fn::Sub": [json text, variables]}``: CloudFormation resolves the intrinsic functions
    inside it, and the result is the JSON string the AWS API takes."""
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


def for_moto(template: Json, code_bucket: str, code_key: str) -> tuple[Json, set[str]]:
    """The template moto can create, and the logical ids (with their types) it had to leave out."""
    out = expand_sam(template, code_bucket, code_key)
    for resource in out["Resources"].values():
        if resource["Type"] == "AWS::KMS::Key":
            # moto keeps a key policy given as an object and later fails to parse it: hand it the JSON text.
            resource["Properties"]["KeyPolicy"] = _as_json_text(resource["Properties"]["KeyPolicy"])
    dropped = {k for k, v in out["Resources"].items() if resource_class_from_type(v["Type"]) is None}
    left_out = {f"{k} ({out['Resources'][k]['Type']})" for k in dropped}
    for logical_id in dropped:
        del out["Resources"][logical_id]
    dropped |= {k for k, v in template["Resources"].items() if v["Type"] == "AWS::Serverless::Api"}
    return _replace_references(out, dropped), left_out
