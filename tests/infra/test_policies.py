"""Least privilege: every IAM policy of the packaged template, parsed and checked (infra/policy_check.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from infra import build, policy_check
from infra.policy_check import (
    PolicyDocument,
    check,
    check_document,
    is_wildcard_resource,
    may_write,
)
from tests.infra.conftest import STAGE, Package
from tests.infra.support import PROJECT_DIR, SAMPLE_ASL, merge


def _identity(*statements: dict[str, Any]) -> PolicyDocument:
    return PolicyDocument("Test", {"Version": "2012-10-17", "Statement": list(statements)}, resource_policy=False)


def _allow(action: Any, resource: Any) -> dict[str, Any]:
    return {"Sid": "S", "Effect": "Allow", "Action": action, "Resource": resource}


def _actions_of(template: dict[str, Any], logical_id: str) -> set[str]:
    statements = template["Resources"][logical_id]["Properties"]["PolicyDocument"]["Statement"]
    return {action for statement in statements for action in statement["Action"]}


def test_the_packaged_template_has_no_finding(package: Package) -> None:
    template = package.template()
    documents = list(policy_check.documents(template))
    # Every function role, the GC job role, the key policy and the bucket policy were looked at.
    assert len(documents) >= 9
    assert check(template) == []


def test_a_template_with_state_machines_has_no_finding(package: Package, tmp_path: Path) -> None:
    (tmp_path / "flow.asl.json").write_text(json.dumps(SAMPLE_ASL))
    template = merge(build.build(build.read_app(PROJECT_DIR, STAGE), tmp_path), package.template())
    assert any(v["Type"] == "AWS::StepFunctions::StateMachine" for v in template["Resources"].values())
    assert check(template) == []


def test_the_check_runs_on_the_policies_it_should(package: Package) -> None:
    # Sneak a wildcard write into each kind of policy the template has: each one must be caught.
    for logical_id, path in [
        ("APIHandlerAccess", ("PolicyDocument",)),
        ("GCJobRole", ("Policies", 0, "PolicyDocument")),
        ("ApiHandlerRole", ("Policies", 0, "PolicyDocument")),
        ("SecretsKey", ("KeyPolicy",)),
    ]:
        template = package.template()
        document: Any = template["Resources"][logical_id]["Properties"]
        for step in path:
            document = document[step]
        document["Statement"].append(_allow("s3:*", {"Fn::Sub": "${DataBucket.Arn}/*"}))
        findings = check(template)
        assert [f.where.split(".")[0] for f in findings] == [logical_id], findings


@pytest.mark.parametrize(
    "statement",
    [
        _allow("*", "arn:aws:s3:::bucket/*"),
        _allow("s3:*", "arn:aws:s3:::bucket/*"),
        _allow("s3:Put*", "arn:aws:s3:::bucket/*"),
        _allow(["dynamodb:GetItem", "dynamodb:*Item"], {"Fn::GetAtt": ["T", "Arn"]}),
        _allow("s3:PutObject", "*"),
        _allow("s3:DeleteObject", "arn:aws:s3:::*"),
        _allow("s3:DeleteObject", "arn:aws:s3:::*/data/*"),
        _allow("dynamodb:PutItem", "arn:aws:dynamodb:us-east-1:123456789012:table/*"),
        _allow(
            "dynamodb:PutItem", {"Fn::Sub": "arn:${AWS::Partition}:dynamodb:${AWS::Region}:${AWS::AccountId}:table/*"}
        ),
        _allow("iam:PassRole", "*"),
        _allow("lambda:InvokeFunction", "arn:aws:lambda:us-east-1:123456789012:function:*"),
        _allow("states:StartExecution", {"Fn::Join": ["", ["arn:aws:states:", "*"]]}),
        _allow("kms:Decrypt", {"Fn::If": ["C", {"Fn::GetAtt": ["K", "Arn"]}, "*"]}),
        {"Effect": "Allow", "NotAction": "iam:*", "Resource": "arn:aws:s3:::bucket"},
    ],
)
def test_wildcard_writes_are_found(statement: dict[str, Any]) -> None:
    assert check_document(_identity(statement)) != []


@pytest.mark.parametrize(
    "statement",
    [
        _allow("s3:GetObject", "*"),
        _allow(["s3:Get*", "s3:List*"], "*"),
        _allow("xray:PutTraceSegments", "*"),
        _allow("s3:PutObject", {"Fn::Sub": "${DataBucket.Arn}/*"}),
        _allow("s3:DeleteObject", "arn:aws:s3:::my-bucket/*/data/*"),
        _allow("dynamodb:PutItem", {"Fn::GetAtt": ["Table", "Arn"]}),
        _allow(
            "states:DescribeExecution",
            {"Fn::Sub": "arn:${AWS::Partition}:states:${AWS::Region}:${AWS::AccountId}:execution:${M.Name}:*"},
        ),
        _allow("logs:PutLogEvents", {"Fn::GetAtt": ["LogGroup", "Arn"]}),
        {"Effect": "Deny", "Action": "s3:*", "Resource": "*", "Principal": "*"},
    ],
)
def test_scoped_or_read_only_statements_pass(statement: dict[str, Any]) -> None:
    assert check_document(_identity(statement)) == []


def test_resource_policies_may_say_star_for_themselves_but_not_allow_everyone() -> None:
    own = {
        "Sid": "A",
        "Effect": "Allow",
        "Principal": {"AWS": "arn:aws:iam::1:root"},
        "Action": "kms:PutKeyPolicy",
        "Resource": "*",
    }
    public = {"Sid": "B", "Effect": "Allow", "Principal": "*", "Action": "s3:GetObject", "Resource": "*"}
    key_policy = PolicyDocument("Key", {"Statement": [own]}, resource_policy=True)
    assert check_document(key_policy) == []
    assert [f.sid for f in check_document(PolicyDocument("Bucket", {"Statement": [own, public]}, True))] == ["B"]


def test_reads_and_writes_are_told_apart() -> None:
    assert not may_write("s3:GetObject") and not may_write("dynamodb:Query") and not may_write("s3:List*")
    assert may_write("s3:PutObject") and may_write("kms:Decrypt") and may_write("s3:*") and may_write("*")
    assert is_wildcard_resource("*") and not is_wildcard_resource({"Ref": "Bucket"})


def test_each_function_gets_only_what_it_uses(package: Package) -> None:
    template = package.template()
    gc = _actions_of(template, "CollectGarbageAccess")
    assert "emr-serverless:StartJobRun" in gc and "iam:PassRole" in gc
    assert not {"dynamodb:PutItem", "dynamodb:DeleteItem", "s3:DeleteObject", "kms:Decrypt"} & gc
    gateway = _actions_of(template, "S3GatewayAccess")
    assert {"dynamodb:PutItem", "s3:PutObject", "kms:Decrypt"} <= gateway
    assert not {"emr-serverless:StartJobRun", "iam:PassRole"} & gateway
    api = _actions_of(template, "APIHandlerAccess")
    assert not {"emr-serverless:StartJobRun", "iam:PassRole"} & api
    pass_role = next(
        s
        for s in template["Resources"]["CollectGarbageAccess"]["Properties"]["PolicyDocument"]["Statement"]
        if s["Action"] == ["iam:PassRole"]
    )
    assert pass_role["Resource"] == [{"Fn::GetAtt": ["GCJobRole", "Arn"]}]
    assert pass_role["Condition"] == {"StringEquals": {"iam:PassedToService": "emr-serverless.amazonaws.com"}}
    key_users = template["Resources"]["SecretsKey"]["Properties"]["KeyPolicy"]["Statement"][-1]["Principal"]["AWS"]
    assert {"Fn::GetAtt": ["CollectGarbageRole", "Arn"]} not in key_users
    assert {"Fn::GetAtt": ["ApiHandlerRole", "Arn"]} in key_users


def test_the_gc_job_may_delete_only_data_objects(package: Package) -> None:
    job = package.template()["Resources"]["GCJobRole"]["Properties"]["Policies"][0]["PolicyDocument"]["Statement"]
    deletes = [s for s in job if "s3:DeleteObject" in policy_check._listed(s["Action"])]
    (statement,) = deletes
    resources = [r["Fn::Sub"] for r in statement["Resource"]]
    assert resources and all(r.endswith("/data/*") for r in resources)


def test_workflow_steps_write_only_lakelets_own_files(package: Package) -> None:
    """The commit and merge steps read ranges and write ranges, metaranges and conflict lists under _lakefs/;
    none of them may write or delete object data, and the planning steps write nothing to S3."""
    template = package.template()
    for name in ("CommitBuildSlice", "CommitFinish", "MergeBuildSlice", "MergeFinish"):
        statements = template["Resources"][f"{name}Access"]["Properties"]["PolicyDocument"]["Statement"]
        writes = [s for s in statements if "s3:PutObject" in policy_check._listed(s["Action"])]
        (statement,) = writes
        assert statement["Action"] == ["s3:PutObject"]
        assert all(r["Fn::Sub"].endswith("_lakefs/*") for r in statement["Resource"]), name
        assert "s3:DeleteObject" not in _actions_of(template, f"{name}Access")
    for name in ("CommitPlan", "MergePlan"):
        actions = _actions_of(template, f"{name}Access")
        assert "s3:GetObject" in actions
        assert not {"s3:PutObject", "s3:DeleteObject"} & actions, name
