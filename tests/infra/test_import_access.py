"""The import's one stack parameter and IAM: the functions that list sources or serve imported objects may read
exactly the allowed locations (and list their buckets), the others nothing outside the data bucket; with no
location allowed, nothing outside it at all. The same value reaches the functions, whose settings allow exactly
what the stack grants."""

from __future__ import annotations

import re
from typing import Any

import pytest

from chalicelib import settings
from chalicelib.settings import Settings
from infra import access
from tests.infra.conftest import Package

READERS = {"APIHandler", "S3Gateway", "ImportPlan", "ImportBuildSlice"}


def evaluate(node: Any, parameters: dict[str, list[str]], conditions: dict[str, bool]) -> Any:
    """The few intrinsic functions the import statements use, as CloudFormation evaluates them."""
    if isinstance(node, list):
        return [evaluate(n, parameters, conditions) for n in node]
    if not isinstance(node, dict):
        return node
    if len(node) != 1 or not next(iter(node)).startswith(("Fn::", "Ref", "Condition")):
        return {k: evaluate(v, parameters, conditions) for k, v in node.items()}
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
    if function == "Fn::Select":
        return evaluate(argument[1], parameters, conditions)[int(argument[0])]
    if function == "Fn::Sub" and isinstance(argument, list):
        text, values = argument
        for name, value in values.items():
            text = text.replace("${" + name + "}", evaluate(value, parameters, conditions))
        for name, value in parameters.items():
            if isinstance(value, str):
                text = text.replace("${" + name + "}", value)
        return text
    if function == "Fn::Equals":
        return evaluate(argument[0], parameters, conditions) == evaluate(argument[1], parameters, conditions)
    if function == "Fn::Not":
        return not evaluate(argument[0], parameters, conditions)
    if function == "Fn::And":
        return all(evaluate(a, parameters, conditions) for a in argument)
    if function == "Condition":
        return conditions[argument]
    return f"<{function}>"


def _statements(template: dict[str, Any], logical_id: str) -> dict[str, dict[str, Any]]:
    found = template["Resources"][logical_id + "Access"]["Properties"]["PolicyDocument"]["Statement"]
    return {s["Sid"]: s for s in found}


def test_one_parameter_and_the_readers(package: Package) -> None:
    template = package.template()
    assert [name for name in template["Parameters"] if "Import" in name] == ["ImportLocations"]
    assert template["Parameters"]["ImportLocations"]["Type"] == "String"
    assert template["Parameters"]["ImportLocations"]["Default"] == ""
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
    parameters = {access.IMPORT_LOCATIONS: "raw:landing/,other:tables/2024/,whole:"}
    read = evaluate(statements["ReadImportSources"]["Resource"], parameters, {access.IMPORTS_ALLOWED: True})
    assert read == ["arn:*:s3:::raw/landing/*", "arn:*:s3:::other/tables/2024/*", "arn:*:s3:::whole/*"]
    # Listing is granted apart, per location (test_each_listing_is_its_bucket_under_its_prefix).
    assert not any(s["Action"] == ["s3:ListBucket"] and "Condition" not in s for s in statements.values())
    # None allowed: the statements name only the data bucket, which the function reaches already.
    none = evaluate(statements["ReadImportSources"]["Resource"], {}, {access.IMPORTS_ALLOWED: False})
    assert none == ["<Fn::Sub>"]


def test_the_same_value_reaches_the_functions(package: Package) -> None:
    template = package.template()
    value = "raw:landing/,other:"
    for function in READERS | {"ImportMerge"}:
        env = template["Resources"][function]["Properties"]["Environment"]["Variables"]
        assert env["LAKELET_IMPORT_ALLOWED_LOCATIONS"] == {"Ref": "ImportLocations"}, function
        passed = evaluate(env["LAKELET_IMPORT_ALLOWED_LOCATIONS"], {access.IMPORT_LOCATIONS: value}, {})
        assert Settings.from_env({settings.ENV_IMPORT_ALLOWED_LOCATIONS: passed}).import_allowed_locations == (
            "s3://raw/landing/",
            "s3://other/",
        )
    env = template["Resources"]["APIHandler"]["Properties"]["Environment"]["Variables"]
    assert "LAKELET_IMPORT_STATE_MACHINE_ARN" in env


@pytest.mark.parametrize(
    "value",
    ["raw:landing/", "raw:landing/,raw:archive/2024/,other:", ",".join(f"b{i:02d}-src:p{i}/" for i in range(10))],
)
def test_every_location_the_functions_allow_is_read_and_listed(package: Package, value: str) -> None:
    """The app's allowed locations, read from the value the stack passes, are exactly the granted ones."""
    template = package.template()
    allowed = Settings.from_env({settings.ENV_IMPORT_ALLOWED_LOCATIONS: value}).import_allowed_locations
    statements = _statements(template, "APIHandler")
    read = evaluate(
        statements["ReadImportSources"]["Resource"], {access.IMPORT_LOCATIONS: value}, {"ImportsAllowed": True}
    )
    listed = _listings(template, value)
    assert read == [f"arn:*:s3:::{location.removeprefix('s3://')}*" for location in allowed]
    granted = []
    for statement in listed:
        (bucket_arn,) = statement["Resource"]
        prefixes = statement.get("Condition", {}).get("StringLike", {}).get("s3:prefix", ["", "*"])
        assert prefixes[1] == prefixes[0] + "*"
        granted.append(f"s3://{bucket_arn.removeprefix('arn:aws:s3:::')}/{prefixes[0]}")
    assert granted == list(allowed)


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


def _listings(template: dict[str, Any], given: str) -> list[dict[str, Any]]:
    """The ListBucket statements CloudFormation would create with ImportLocations = ``given``."""
    parameters = {access.IMPORT_LOCATIONS: given, "AWS::Partition": "aws"}
    conditions: dict[str, bool] = {}
    for name, condition in template["Conditions"].items():
        if name.startswith("ImportSourceListing"):  # each slot's after the slot's own "given" condition
            conditions[name] = evaluate(condition, parameters, conditions)
    out = []
    for lid, resource in template["Resources"].items():
        if lid.startswith("ImportListSource") and conditions[resource["Condition"]]:
            (statement,) = resource["Properties"]["PolicyDocument"]["Statement"]
            evaluated = {k: evaluate(v, parameters, conditions) for k, v in statement.items()}
            if evaluated.get("Condition") == "<AWS::NoValue>":  # no condition at all
                evaluated.pop("Condition")
            out.append(evaluated)
    return out


def test_each_listing_is_its_bucket_under_its_prefix(package: Package) -> None:
    template = package.template()
    found = _listings(template, "raw:landing/,other:tables/2024/,whole:")
    assert found == [
        {
            "Sid": "ListImportSource",
            "Effect": "Allow",
            "Action": ["s3:ListBucket"],
            "Resource": ["arn:aws:s3:::raw"],
            "Condition": {"StringLike": {"s3:prefix": ["landing/", "landing/*"]}},
        },
        {
            "Sid": "ListImportSource",
            "Effect": "Allow",
            "Action": ["s3:ListBucket"],
            "Resource": ["arn:aws:s3:::other"],
            "Condition": {"StringLike": {"s3:prefix": ["tables/2024/", "tables/2024/*"]}},
        },
        # A whole-bucket location keeps the bucket.
        {"Sid": "ListImportSource", "Effect": "Allow", "Action": ["s3:ListBucket"], "Resource": ["arn:aws:s3:::whole"]},
    ]
    # Each slot's policy goes to exactly the functions that read sources.
    roles = {r["Ref"] for r in template["Resources"]["ImportListSource0Access"]["Properties"]["Roles"]}
    readers = {template["Resources"][r + "Access"]["Properties"]["Roles"][0]["Ref"] for r in READERS}
    assert roles == readers


def test_no_location_no_list_grant(package: Package) -> None:
    assert _listings(package.template(), "") == []
    ten = [f"b{i:02d}-src:p{i}/" for i in range(access.IMPORT_LISTING_SLOTS)]
    found = _listings(package.template(), ",".join(ten))
    assert [s["Resource"] for s in found] == [[f"arn:aws:s3:::b{i:02d}-src"] for i in range(10)]


def _pattern(package: Package) -> re.Pattern[str]:
    return re.compile(package.template()["Parameters"][access.IMPORT_LOCATIONS]["AllowedPattern"])


GOOD = ["", "raw:landing/", "raw:", "my.bucket-1:a/b/c/", "raw:landing/,other:tables/2024/,whole:", "raw:déjà/"]
BAD = [
    "raw:*",  # IAM wildcards would widen the grant
    "raw:land?/",
    "raw:landing/*",
    "Raw:x/",  # bucket naming rules
    "ra:x/",
    "a" * 64 + ":",
    "-raw:",
    "raw.:",
    "ra..w:",
    "192.168.0.1:",
    "xn--raw:",
    "raw-s3alias:",
    ":landing/",  # no bucket
    "raw",  # no ":"
    "raw:landing",  # a prefix is directories: ends in "/"
    "raw:/landing/",  # empty segment
    "raw:a//b/",
    "raw:../",
    "raw:a/./",
    "raw:a:b/",  # the template splits an entry at ":"
    "raw:${aws:username}/",  # an IAM policy variable
    "raw:a b/",
    "raw:a\tb/",
    "s3://raw/landing/",  # the parameter's form is bucket:prefix/ (the app takes both)
]
# Refused by the parameter's pattern, while the app, which splits at commas and spaces, reads what is there.
BAD_SEPARATORS = ["raw:,,other:", "raw: ,other:", "raw:,", " raw:", "raw:, other:"]


def test_the_parameter_refuses_what_the_settings_refuse(package: Package) -> None:
    pattern = _pattern(package)
    assert pattern.pattern == settings.IMPORT_LOCATIONS_PARAMETER_PATTERN
    for good in GOOD:
        assert pattern.fullmatch(good), good
        Settings.from_env({settings.ENV_IMPORT_ALLOWED_LOCATIONS: good})
    for bad in BAD + BAD_SEPARATORS:
        assert not pattern.fullmatch(bad), bad
    for bad in BAD[:-1]:
        with pytest.raises(ValueError, match=settings.ENV_IMPORT_ALLOWED_LOCATIONS):
            Settings.from_env({settings.ENV_IMPORT_ALLOWED_LOCATIONS: bad})


def test_the_parameter_takes_ten_locations_at_most(package: Package) -> None:
    pattern = _pattern(package)
    entries = [f"b{i:02d}-src:p{i}/" for i in range(access.IMPORT_LISTING_SLOTS + 1)]
    assert access.IMPORT_LISTING_SLOTS == 10 == len(_listings(package.template(), ",".join(entries[:10])))
    assert pattern.fullmatch(",".join(entries[:10]))
    assert not pattern.fullmatch(",".join(entries))
    with pytest.raises(ValueError, match="11 locations, at most 10"):
        Settings.from_env({settings.ENV_IMPORT_ALLOWED_LOCATIONS: ",".join(entries)})
