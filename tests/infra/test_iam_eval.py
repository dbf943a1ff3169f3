"""The IAM evaluator and the operation -> IAM action table the sufficiency check stands on."""

from __future__ import annotations

from typing import Any

import pytest

from infra import access
from infra.iam_calls import Needed, UnmappedOperation, needs_of
from infra.iam_eval import Deployment, Resolver, Statement, UnsupportedCondition, evaluate, role_statements

REGION = "us-east-1"
TABLE = "arn:aws:dynamodb:us-east-1:123456789012:table/"


def _statement(sid: str, action: Any, resource: Any, effect: str = "Allow", **more: Any) -> Statement:
    return Statement(sid, effect, {"Action": action, "Resource": resource, **more}, {})


def test_wildcards_match_actions_without_case_and_resources_with_it() -> None:
    allow = [_statement("S", ["S3:get*"], ["arn:aws:s3:::b/_lakefs/*", "arn:aws:s3:::b/x?y"])]
    assert evaluate(allow, Needed("s3:GetObject", "arn:aws:s3:::b/_lakefs/r/1")).sid == "S"
    assert evaluate(allow, Needed("s3:GetObject", "arn:aws:s3:::b/xzy")).allowed
    assert not evaluate(allow, Needed("s3:GetObject", "arn:aws:s3:::b/_LAKEFS/r/1")).allowed
    assert not evaluate(allow, Needed("s3:PutObject", "arn:aws:s3:::b/_lakefs/r/1")).allowed
    assert not evaluate(allow, Needed("s3:GetObject", "arn:aws:s3:::b/xzzy")).allowed


def test_an_explicit_deny_wins_and_not_action_excludes() -> None:
    statements = [
        _statement("All", "s3:*", "arn:aws:s3:::b/*"),
        Statement("NoDelete", "Deny", {"NotAction": ["s3:Get*", "s3:Put*"], "Resource": "*"}, {}),
    ]
    assert evaluate(statements, Needed("s3:PutObject", "arn:aws:s3:::b/k")).allowed
    denied = evaluate(statements, Needed("s3:DeleteObject", "arn:aws:s3:::b/k"))
    assert not denied.allowed and denied.denied_by == "NoDelete"


def test_conditions_hold_only_with_the_key_the_request_carries() -> None:
    listing = [
        _statement("List", "s3:ListBucket", "arn:aws:s3:::src", Condition={"StringLike": {"s3:prefix": ["in/*"]}})
    ]
    assert evaluate(listing, Needed("s3:ListBucket", "arn:aws:s3:::src", (("s3:prefix", "in/a"),))).allowed
    assert not evaluate(listing, Needed("s3:ListBucket", "arn:aws:s3:::src", (("s3:prefix", "out/"),))).allowed
    assert not evaluate(listing, Needed("s3:ListBucket", "arn:aws:s3:::src")).allowed
    passing = [
        _statement(
            "Pass", "iam:PassRole", "arn:aws:iam::1:role/r", Condition={"StringEquals": {"iam:PassedToService": "x"}}
        )
    ]
    assert evaluate(passing, Needed("iam:PassRole", "arn:aws:iam::1:role/r", (("iam:PassedToService", "x"),))).allowed
    assert not evaluate(
        passing, Needed("iam:PassRole", "arn:aws:iam::1:role/r", (("iam:PassedToService", "y"),))
    ).allowed
    odd = [_statement("Odd", "s3:GetObject", "*", Condition={"IpAddress": {"aws:SourceIp": "1.2.3.4/32"}})]
    with pytest.raises(UnsupportedCondition):
        evaluate(odd, Needed("s3:GetObject", "arn:aws:s3:::b/k"))


def test_the_resolver_evaluates_the_templates_functions() -> None:
    template = {
        "Parameters": {"Locations": {"Type": "String", "Default": ""}, "Stage": {"Type": "String"}},
        "Conditions": {"Given": {"Fn::Not": [{"Fn::Equals": [{"Ref": "Locations"}, ""]}]}},
    }
    deployment = Deployment({"Locations": "a:x/,b:", "Stage": "dev"}, {}, {"Table": TABLE + "t"})
    resolver = Resolver(template, deployment)
    assert resolver.value({"Fn::Sub": "${Table.Arn}/index/${Stage}-${AWS::Region}"}) == TABLE + "t/index/dev-us-east-1"
    entries = {"Fn::Split": [",", {"Ref": "Locations"}]}
    assert resolver.value({"Fn::Select": [1, entries]}) == "b:"
    assert resolver.value({"Fn::If": ["Given", "yes", "no"]}) == "yes"
    assert resolver.value(["kept", {"Ref": "AWS::NoValue"}]) == ["kept"]
    assert Resolver(template, Deployment({"Stage": "dev"}, {}, {})).value({"Fn::If": ["Given", "yes", "no"]}) == "no"


def test_a_role_gets_only_the_policies_attached_to_it_whose_condition_holds() -> None:
    template = {
        "Parameters": {"Hooks": {"Type": "CommaDelimitedList", "Default": ""}},
        "Conditions": {"HooksGiven": {"Fn::Not": [{"Fn::Equals": [{"Fn::Join": ["", {"Ref": "Hooks"}]}, ""]}]}},
        "Resources": {
            "Mine": _policy("FRole", "Mine"),
            "Other": _policy("GRole", "Other"),
            "Hooks": {**_policy("FRole", "Hooks"), "Condition": "HooksGiven"},
        },
    }
    without = role_statements(template, "FRole", Deployment({}, {}, {}))
    assert [s.sid for s in without] == ["Mine"]
    with_hooks = role_statements(template, "FRole", Deployment({"Hooks": ["arn:aws:lambda:r:1:function:h"]}, {}, {}))
    assert [s.sid for s in with_hooks] == ["Mine", "Hooks"]


def _policy(role: str, sid: str) -> dict[str, Any]:
    statement = {"Sid": sid, "Effect": "Allow", "Action": ["s3:GetObject"], "Resource": ["arn:aws:s3:::b/*"]}
    return {
        "Type": "AWS::IAM::Policy",
        "Properties": {"Roles": [{"Ref": role}], "PolicyDocument": {"Statement": [statement]}},
    }


def test_operations_map_to_the_actions_aws_authorizes_them_with() -> None:
    assert needs_of("s3", "HeadObject", {"Bucket": "b", "Key": "k"}, REGION) == [
        Needed("s3:GetObject", "arn:aws:s3:::b/k")
    ]
    assert needs_of("s3", "ListObjectsV2", {"Bucket": "b", "Prefix": "p/"}, REGION) == [
        Needed("s3:ListBucket", "arn:aws:s3:::b", (("s3:prefix", "p/"),))
    ]
    assert needs_of("s3", "CopyObject", {"Bucket": "b", "Key": "to", "CopySource": "src/from"}, REGION) == [
        Needed("s3:GetObject", "arn:aws:s3:::src/from"),
        Needed("s3:PutObject", "arn:aws:s3:::b/to"),
    ]
    assert needs_of("s3", "ListParts", {"Bucket": "b", "Key": "k", "UploadId": "u"}, REGION) == [
        Needed("s3:ListMultipartUploadParts", "arn:aws:s3:::b/k")
    ]
    transaction = {
        "TransactItems": [
            {"ConditionCheck": {"TableName": "repos", "Key": {}}},
            {"Put": {"TableName": "branches", "Item": {}}},
        ]
    }
    assert needs_of("dynamodb", "TransactWriteItems", transaction, REGION) == [
        Needed("dynamodb:ConditionCheckItem", TABLE + "repos"),
        Needed("dynamodb:PutItem", TABLE + "branches"),
    ]
    batch = {"RequestItems": {"t": [{"DeleteRequest": {"Key": {}}}]}}
    assert needs_of("dynamodb", "BatchWriteItem", batch, REGION) == [
        Needed("dynamodb:BatchWriteItem", TABLE + "t"),
        Needed("dynamodb:DeleteItem", TABLE + "t"),
    ]
    run = {"applicationId": "app", "executionRoleArn": "arn:aws:iam::1:role/gc", "tags": {"a": "b"}}
    assert [n.action for n in needs_of("emr-serverless", "StartJobRun", run, REGION)] == [
        "emr-serverless:StartJobRun",
        "iam:PassRole",
        "emr-serverless:TagResource",
    ]
    assert needs_of("kms", "Decrypt", {"CiphertextBlob": b""}, REGION, "arn:aws:kms:r:1:key/k") == [
        Needed("kms:Decrypt", "arn:aws:kms:r:1:key/k")
    ]
    with pytest.raises(UnmappedOperation, match=r"s3\.PutBucketPolicy"):
        needs_of("s3", "PutBucketPolicy", {"Bucket": "b"}, REGION)


def test_import_plan_may_write_its_slice_manifests() -> None:
    # The permission the sufficiency check found missing: Plan writes <namespace>/_lakefs/imports/.../slices-*.json.
    assert access.FUNCTION_ACCESS["import_plan"].data is access.Data.READ_WRITE_RANGES
