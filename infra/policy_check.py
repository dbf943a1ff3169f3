"""Least privilege, checked: finds every IAM policy in a CloudFormation template and reports each Allow statement
that grants a wildcard action able to write or delete, or lets such an action touch a wildcard resource.

What counts:
- Policy documents are found wherever a resource's properties hold one (a role's inline policies, an
  AWS::IAM::Policy, a key policy, a bucket policy, ...). Trust policies (who may assume a role) are skipped.
- An action "may write" unless its name starts with a read verb (Get, List, Describe, Head, Query, Scan,
  BatchGet): unknown verbs count as writes. A wildcard action ("*", "s3:*", "s3:Put*", "dynamodb:*Item") is
  refused unless everything it can match is a read ("s3:Get*").
- A resource is a wildcard when it names no particular resource: "*", or an ARN whose resource part is "*",
  "<type>/*", "<type>:*", or an S3 ARN whose bucket is a wildcard. Keys under a named bucket
  ("arn:aws:s3:::bucket/data/*") and executions of a named state machine are particular resources.
- In a resource policy (key policy, bucket policy) "*" is the resource the policy is attached to, so only
  wildcard actions and public Allow statements (Principal "*") are refused there.
- UNSCOPABLE lists the write actions AWS offers no resource for; they may use "*".

Usage: ``python -m infra.policy_check TEMPLATE.json`` (exit status 1 and the findings when there are any).
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

READ_VERBS = ("Get", "List", "Describe", "Head", "Query", "Scan", "BatchGet")
# X-Ray takes trace segments for the whole account: its API has no resource to name.
UNSCOPABLE = frozenset({"xray:PutTraceSegments", "xray:PutTelemetryRecords"})
# Resource types whose policy documents are resource policies (Resource "*" means the resource itself).
RESOURCE_POLICY_TYPES = frozenset(
    {
        "AWS::KMS::Key",
        "AWS::S3::BucketPolicy",
        "AWS::SQS::QueuePolicy",
        "AWS::SNS::TopicPolicy",
        "AWS::Logs::ResourcePolicy",
        "AWS::Events::EventBusPolicy",
    }
)
_TRUST_POLICY_KEYS = frozenset({"AssumeRolePolicyDocument"})
_SUB_VARIABLE = re.compile(r"\$\{[^}]*\}")
_TYPE_WILDCARD = re.compile(r"^[A-Za-z0-9_.-]+[/:]\*$")


@dataclass(frozen=True, slots=True)
class Finding:
    """One statement that grants more than it should."""

    where: str
    sid: str
    problem: str

    def __str__(self) -> str:
        return f"{self.where} [{self.sid or 'no Sid'}]: {self.problem}"


@dataclass(frozen=True, slots=True)
class PolicyDocument:
    """A policy document found in a template, and whether it is attached to a resource."""

    where: str
    document: dict[str, Any]
    resource_policy: bool


def may_write(action: str) -> bool:
    """Whether ``action`` (possibly a wildcard) can match an action that writes or deletes."""
    if action == "*":
        return True
    _, _, name = action.partition(":")
    if "*" in name or "?" in name:
        fixed = re.split(r"[*?]", name, maxsplit=1)[0]
        return not any(fixed.startswith(verb) for verb in READ_VERBS)
    return not name.startswith(READ_VERBS)


def is_wildcard_action(action: str) -> bool:
    return "*" in action or "?" in action


def _as_text(value: Any) -> str | None:
    """A resource as text with intrinsic references turned into names; None when it names something concrete."""
    if isinstance(value, str):
        return value
    if not isinstance(value, dict) or len(value) != 1:
        return "*"  # not understood: assume the worst
    ((function, argument),) = value.items()
    if function in ("Ref", "Fn::GetAtt", "Fn::ImportValue"):
        return None
    if function == "Fn::Sub":
        text = str(argument[0] if isinstance(argument, list) else argument)
        first = _SUB_VARIABLE.match(text)
        if first and not first.group().startswith("${AWS::"):
            # "${DataBucket.Arn}/data/*": anchored to one resource of the template (or a parameter naming one).
            return None
        return _SUB_VARIABLE.sub("NAME", text)
    if function == "Fn::Join" and isinstance(argument, list) and len(argument) == 2:
        separator, parts = argument
        return str(separator).join(part if isinstance(part, str) else "NAME" for part in parts)
    return "*"


def is_wildcard_resource(resource: Any) -> bool:
    """Whether ``resource`` (a string or an intrinsic function) names no particular resource."""
    if isinstance(resource, dict) and len(resource) == 1 and "Fn::If" in resource:
        _, when_true, when_false = resource["Fn::If"]
        return is_wildcard_resource(when_true) or is_wildcard_resource(when_false)
    text = _as_text(resource)
    if text is None:
        return False
    if text == "*":
        return True
    parts = text.split(":", 5)
    if len(parts) < 6 or parts[0] != "arn":
        return "*" in text
    service, resource_part = parts[2], parts[5]
    if service == "s3":
        bucket = resource_part.split("/", 1)[0]
        return "*" in bucket or "?" in bucket or not bucket
    return resource_part in ("", "*") or bool(_TYPE_WILDCARD.match(resource_part))


def _listed(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def documents(template: dict[str, Any]) -> Iterator[PolicyDocument]:
    """Every policy document in the template's resources, trust policies excepted."""

    def walk(node: Any, path: str, resource_policy: bool) -> Iterator[PolicyDocument]:
        if isinstance(node, dict):
            if isinstance(node.get("Statement"), list | dict) and ("Version" in node or "Statement" in node):
                yield PolicyDocument(path, node, resource_policy)
                return
            for key, child in node.items():
                if key in _TRUST_POLICY_KEYS:
                    continue
                yield from walk(child, f"{path}.{key}", resource_policy)
        elif isinstance(node, list):
            for index, child in enumerate(node):
                yield from walk(child, f"{path}[{index}]", resource_policy)

    for logical_id, resource in template.get("Resources", {}).items():
        resource_policy = resource.get("Type") in RESOURCE_POLICY_TYPES
        yield from walk(resource.get("Properties", {}), logical_id, resource_policy)


def check_document(policy: PolicyDocument) -> list[Finding]:
    findings = []
    for statement in _listed(policy.document.get("Statement", [])):
        if not isinstance(statement, dict) or statement.get("Effect") != "Allow":
            continue
        sid = str(statement.get("Sid", ""))

        def found(problem: str, sid: str = sid) -> None:
            findings.append(Finding(policy.where, sid, problem))

        if "NotAction" in statement:
            found("Allow with NotAction grants every other action")
        if "NotResource" in statement:
            found("Allow with NotResource grants every other resource")
        actions = [str(a) for a in _listed(statement.get("Action", []))]
        for action in actions:
            if is_wildcard_action(action) and may_write(action):
                found(f"wildcard action {action!r} can write or delete")
        if policy.resource_policy:
            principal = statement.get("Principal")
            if principal == "*" or (isinstance(principal, dict) and "*" in _listed(principal.get("AWS", []))):
                found("resource policy allows anyone (Principal '*')")
            continue
        writes = [a for a in actions if may_write(a) and a not in UNSCOPABLE]
        if not writes:
            continue
        for resource in _listed(statement.get("Resource", [])):
            if is_wildcard_resource(resource):
                found(f"{', '.join(writes)} on wildcard resource {json.dumps(resource)}")
    return findings


def check(template: dict[str, Any]) -> list[Finding]:
    """Every finding in every policy of ``template``."""
    return [finding for policy in documents(template) for finding in check_document(policy)]


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m infra.policy_check TEMPLATE.json", file=sys.stderr)
        return 2
    findings = check(json.loads(Path(args[0]).read_text()))
    for finding in findings:
        print(f"policy_check: {finding}", file=sys.stderr)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
