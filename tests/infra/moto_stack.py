"""Turns the packaged SAM template into one moto's CloudFormation can create, as far as moto supports the types.

moto does not run the SAM transform, so this expands the two SAM types ``chalice package`` emits the way SAM
does: AWS::Serverless::Function into an AWS::Lambda::Function (its code from the bucket ``aws cloudformation
package`` would upload it to) plus a rule and a permission per Schedule event; AWS::Serverless::Api is dropped
(moto cannot import its Swagger body). Resource types moto does not implement (EMR Serverless, Lambda URLs, ...)
are dropped too, and references to anything dropped become plain strings, so the rest is created for real.
"""

from __future__ import annotations

import copy

from moto.cloudformation.parsing import resource_class_from_type

from chalicelib.graveler.runs.plan_json import Json
from infra.rehearsal import _as_json_text, _replace_references


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
