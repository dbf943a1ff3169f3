"""The import's stack parameter and IAM: the functions that list sources or serve imported objects may read
exactly the allowed locations (and list their buckets), the others nothing outside the data bucket; with no
location allowed, nothing outside it at all."""

from __future__ import annotations

from typing import Any

from infra import access
from tests.infra.conftest import Package

READERS = {"APIHandler", "S3Gateway", "ImportPlan", "ImportBuildSlice"}


def evaluate(node: Any, parameters: dict[str, list[str]], conditions: dict[str, bool]) -> Any:
    """The few intrinsic functions the import statements use, as CloudFormation evaluates them."""
    if isinstance(node, list):
        return [evaluate(n, parameters, conditions) for n in node]
    if not isinstance(node, dict) or len(node) != 1:
        return node
    ((function, argument),) = node.items()
    if function == "Ref":
        return parameters.get(argument, f"<{argument}>")
    if function == "Fn::Join":
        parts = evaluate(argument[1], parameters, conditions)
        return argument[0].join(parts)
    if function == "Fn::Split":
        return evaluate(argument[1], parameters, conditions).split(argument[0])
    if function == "Fn::If":
        name, yes, no = argument
        return evaluate(yes if conditions[name] else no, parameters, conditions)
    return f"<{function}>"


def _statements(template: dict[str, Any], logical_id: str) -> dict[str, dict[str, Any]]:
    found = template["Resources"][logical_id + "Access"]["Properties"]["PolicyDocument"]["Statement"]
    return {s["Sid"]: s for s in found}


def test_the_parameter_and_the_readers(package: Package) -> None:
    template = package.template()
    assert template["Parameters"][access.IMPORT_LOCATIONS]["Type"] == "CommaDelimitedList"
    assert access.IMPORTS_ALLOWED in template["Conditions"]
    readers = {
        lid.removesuffix("Access")
        for lid, r in template["Resources"].items()
        if lid.endswith("Access")
        and r["Type"] == "AWS::IAM::Policy"
        and "ReadImportSources" in _statements(template, lid.removesuffix("Access"))
    }
    assert readers == READERS


def test_exactly_the_allowed_locations_are_readable(package: Package) -> None:
    template = package.template()
    statements = _statements(template, "ImportBuildSlice")
    parameters = {
        access.IMPORT_LOCATIONS: ["s3://raw/landing/", "s3://other/tables/"],
        access.IMPORT_BUCKETS: ["raw", "other"],
    }
    read = evaluate(statements["ReadImportSources"]["Resource"], parameters, {access.IMPORTS_ALLOWED: True})
    assert read == ["arn:*:s3:::raw/landing/*", "arn:*:s3:::other/tables/*"]
    listed = evaluate(statements["ListImportSources"]["Resource"], parameters, {access.IMPORTS_ALLOWED: True})
    assert listed == ["arn:*:s3:::raw", "arn:*:s3:::other"]
    # None allowed: the statements name only the data bucket, which the function reaches already.
    none = evaluate(statements["ReadImportSources"]["Resource"], {}, {access.IMPORTS_ALLOWED: False})
    assert none == ["<Fn::Sub>"]


def test_the_setting_reaches_the_functions(package: Package) -> None:
    template = package.template()
    env = template["Resources"]["APIHandler"]["Properties"]["Environment"]["Variables"]
    joined = evaluate(env["LAKELET_IMPORT_ALLOWED_LOCATIONS"], {access.IMPORT_LOCATIONS: ["s3://a/b/", "s3://c/"]}, {})
    assert joined == "s3://a/b/,s3://c/"
    assert "LAKELET_IMPORT_STATE_MACHINE_ARN" in env


def _role_statements(template: dict[str, Any], role: str) -> dict[str, dict[str, Any]]:
    policies = template["Resources"][role]["Properties"]["Policies"]
    return {s["Sid"]: s for p in policies for s in p["PolicyDocument"]["Statement"]}


def test_the_import_machine_may_run_its_distributed_map_and_nothing_more(package: Package) -> None:
    template = package.template()
    machine = template["Resources"]["ImportStateMachine"]["Properties"]
    definition = machine["DefinitionString"]["Fn::Sub"][0]
    assert '"Mode": "DISTRIBUTED"' in definition and '"arn:aws:states:::s3:getObject"' in definition
    statements = _role_statements(template, "ImportStateMachineRole")
    assert statements["StartMapRunExecutions"]["Action"] == ["states:StartExecution"]
    own = "arn:${AWS::Partition}:states:${AWS::Region}:${AWS::AccountId}:stateMachine:lakelet-${Stage}-import"
    assert statements["StartMapRunExecutions"]["Resource"] == [{"Fn::Sub": own}]
    assert statements["FollowMapRunExecutions"]["Action"] == ["states:DescribeExecution", "states:StopExecution"]
    children = "arn:${AWS::Partition}:states:${AWS::Region}:${AWS::AccountId}:execution:lakelet-${Stage}-import/*:*"
    assert statements["FollowMapRunExecutions"]["Resource"] == [{"Fn::Sub": children}]
    assert statements["ReadMapItems"]["Action"] == ["s3:GetObject"]
    assert statements["ReadMapItems"]["Resource"] == [
        {"Fn::Sub": "${DataBucket.Arn}/_lakefs/imports/*/slices-*.json"},
        {"Fn::Sub": "${DataBucket.Arn}/*/_lakefs/imports/*/slices-*.json"},
    ]
    # The machines without a Distributed Map get none of it.
    for role in ("CommitStateMachineRole", "MergeStateMachineRole"):
        assert set(_role_statements(template, role)) == {"InvokeTasks"}
