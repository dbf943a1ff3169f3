"""Lambda hooks' IAM: lambda:InvokeFunction on exactly the functions of the HookFunctions parameter, for the
functions that run hooks only, and nothing at all when the parameter is empty."""

from __future__ import annotations

import re
from typing import Any

import pytest

from chalicelib.settings import ENV_HOOK_FUNCTIONS, ENV_WEBHOOK_DESTINATIONS, Settings
from infra import access
from infra.policy_check import check
from tests.infra.conftest import Package

# The Chalice functions that run hooks, by their logical ids in the template.
# The import's merge step merges through engine.merges.merge, which runs the pre- and post-merge hooks; the commit
# workflow's Seal runs the pre-commit hooks on the sealed changes.
RUNS_HOOKS = {"APIHandler", "CommitSeal", "CommitLanded", "MergeLanded", "ImportMerge"}


def _pattern(template: dict[str, Any]) -> re.Pattern[str]:
    return re.compile(template["Parameters"]["HookFunctions"]["AllowedPattern"])


def test_the_functions_that_run_hooks_get_a_conditional_invoke_of_exactly_the_parameter(package: Package) -> None:
    template = package.template()
    resources = template["Resources"]
    hook_policies = {k: v for k, v in resources.items() if k.endswith("HookAccess")}
    assert set(hook_policies) == {f"{name}HookAccess" for name in RUNS_HOOKS}
    for policy in hook_policies.values():
        # Created only when the parameter lists functions: an empty list grants nothing.
        assert policy["Condition"] == "HookFunctionsGiven"
        (statement,) = policy["Properties"]["PolicyDocument"]["Statement"]
        assert statement["Effect"] == "Allow"
        assert statement["Action"] == ["lambda:InvokeFunction"]
        assert statement["Resource"] == {"Ref": "HookFunctions"}
        role = policy["Properties"]["Roles"][0]["Ref"]
        assert resources[role]["Type"] == "AWS::IAM::Role"
    condition = template["Conditions"]["HookFunctionsGiven"]
    assert condition == {"Fn::Not": [{"Fn::Equals": [{"Fn::Join": ["", {"Ref": "HookFunctions"}]}, ""]}]}
    assert template["Parameters"]["HookFunctions"]["Type"] == "CommaDelimitedList"
    assert template["Parameters"]["HookFunctions"]["Default"] == ""
    # No other policy of the template invokes functions.
    for logical_id, resource in resources.items():
        if resource.get("Type") == "AWS::IAM::Policy" and logical_id not in hook_policies:
            actions = {a for s in resource["Properties"]["PolicyDocument"]["Statement"] for a in s["Action"]}
            assert not any(a.startswith("lambda:") for a in actions), logical_id
    assert check(template) == []


def test_the_functions_that_run_hooks_are_told_the_same_functions(package: Package) -> None:
    resources = package.template()["Resources"]
    for logical_id in access_functions(resources):
        env = resources[logical_id]["Properties"]["Environment"]["Variables"]
        if logical_id in RUNS_HOOKS:
            assert env[ENV_HOOK_FUNCTIONS] == {"Fn::Join": [",", {"Ref": "HookFunctions"}]}
            assert env[ENV_WEBHOOK_DESTINATIONS] == {"Ref": "WebhookDestinations"}
        else:
            assert ENV_HOOK_FUNCTIONS not in env, logical_id
            assert ENV_WEBHOOK_DESTINATIONS not in env, logical_id


@pytest.mark.parametrize(
    ("value", "ok"),
    [("", True), ("10.1.0.0/16,203.0.113.7,fd12::/64", True), ("hooks.internal", False), ("10.0.0.0/8, ::1", False)],
)
def test_the_webhook_destinations_parameter_admits_networks_only(package: Package, value: str, ok: bool) -> None:
    """The parameter admits network-shaped values only (no host names, no spaces); settings.py parses each at start."""
    pattern = re.compile(package.template()["Parameters"]["WebhookDestinations"]["AllowedPattern"])
    assert bool(pattern.fullmatch(value)) is ok
    if ok:
        assert Settings.from_env({ENV_WEBHOOK_DESTINATIONS: value}).webhook_allowed_destinations == tuple(
            v for v in value.split(",") if v
        )


def access_functions(resources: dict[str, Any]) -> list[str]:
    return [k for k, v in resources.items() if v.get("Type") == "AWS::Serverless::Function"]


def test_the_landed_steps_may_record_runs_but_not_write_object_data(package: Package) -> None:
    """The post-hooks of a workflow run in its Landed step, which reads the action files and writes the run under
    <namespace>/_lakefs/actions/: its S3 writes stay under _lakefs/."""
    resources = package.template()["Resources"]
    for name in ("CommitLanded", "MergeLanded"):
        statements = resources[f"{name}Access"]["Properties"]["PolicyDocument"]["Statement"]
        writes = [s for s in statements if "s3:PutObject" in s["Action"]]
        (statement,) = writes
        assert all("/_lakefs/*" in r["Fn::Sub"] for r in statement["Resource"])
        assert not any("s3:DeleteObject" in s["Action"] for s in statements)


@pytest.mark.parametrize(
    "value",
    [
        "arn:aws:lambda:eu-west-1:123456789012:function:quality-check",
        "arn:aws:lambda:eu-west-1:123456789012:function:quality-check:prod",
        "arn:aws-us-gov:lambda:us-gov-west-1:123456789012:function:q_1",
        "",
    ],
)
def test_the_parameter_admits_full_arns(package: Package, value: str) -> None:
    assert _pattern(package.template()).fullmatch(value)


@pytest.mark.parametrize(
    "value",
    [
        "*",
        "arn:aws:lambda:eu-west-1:123456789012:function:*",
        "arn:aws:lambda:eu-west-1:123456789012:function:quality-*",
        "arn:aws:lambda:*:123456789012:function:quality-check",
        "arn:aws:lambda:eu-west-1:*:function:quality-check",
        "quality-check",
    ],
)
def test_the_parameter_refuses_wildcards_and_bare_names(package: Package, value: str) -> None:
    assert not _pattern(package.template()).fullmatch(value)


def test_a_wildcard_in_the_hook_policy_would_be_found(package: Package) -> None:
    template = package.template()
    template["Resources"]["APIHandlerHookAccess"]["Properties"]["PolicyDocument"]["Statement"][0]["Resource"] = "*"
    assert [f.where for f in check(template)] == ["APIHandlerHookAccess.PolicyDocument"]


def test_the_settings_read_the_list_the_stack_joins() -> None:
    joined = "arn:aws:lambda:eu-west-1:123456789012:function:a,arn:aws:lambda:eu-west-1:123456789012:function:b:prod"
    assert Settings.from_env({ENV_HOOK_FUNCTIONS: joined}).hook_functions == tuple(joined.split(","))
    # The stack's empty list joins to "": no function.
    assert Settings.from_env({ENV_HOOK_FUNCTIONS: ""}).hook_functions == ()
    assert access.HOOK_FUNCTIONS == "HookFunctions"
