"""Whether a function's role allows a call: the role's policies read out of the template (resolved for one
deployment's names), and a small IAM evaluator.

Why an evaluator of our own: of what PyPI offers offline, policy_sentry and parliament describe or lint policies
and evaluate nothing; policyuniverse expands actions; moto's IAMPolicyStatement (moto.iam.access_control) matches
Action and Resource but treats a Condition that does not hold as an explicit deny, and knows only the
conditions of trust policies. What this one does is the part of IAM's identity-policy logic the templates use:
an explicit Deny wins, else an Allow whose Action, Resource and Condition all match; "*" and "?" wildcards (actions
case-insensitive, resources case-sensitive); NotAction / NotResource; the condition operators StringEquals,
StringLike, StringNotEquals, StringNotLike and Bool (a key the request does not carry fails a positive operator).
Any other operator is refused (UnsupportedCondition), never silently passed. tests/infra/test_iam_eval.py checks it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from chalicelib.graveler.runs.plan_json import Json

from .iam_calls import Needed


class UnsupportedCondition(ValueError):
    """A condition operator this evaluator does not implement."""


class UnresolvableTemplate(ValueError):
    """A template expression the resolver does not know."""


@lru_cache(maxsize=4096)
def _pattern(glob: str, ignore_case: bool) -> re.Pattern[str]:
    escaped = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in glob)
    return re.compile(escaped + r"\Z", re.IGNORECASE if ignore_case else 0)


def matches(glob: str, value: str, ignore_case: bool = False) -> bool:
    return _pattern(glob, ignore_case).match(value) is not None


def _listed(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _condition_holds(condition: Json, context: dict[str, str]) -> bool:
    for operator, keys in condition.items():
        for key, expected in keys.items():
            wanted = [str(v) for v in _listed(expected)]
            present = key in context
            value = context.get(key, "")
            if operator == "StringEquals":
                ok = present and value in wanted
            elif operator == "StringLike":
                ok = present and any(matches(w, value) for w in wanted)
            elif operator == "StringNotEquals":
                ok = not present or value not in wanted
            elif operator == "StringNotLike":
                ok = not present or not any(matches(w, value) for w in wanted)
            elif operator == "Bool":
                ok = present and value.lower() in [w.lower() for w in wanted]
            else:
                raise UnsupportedCondition(operator)
            if not ok:
                return False
    return True


@dataclass(frozen=True, slots=True)
class Statement:
    """One resolved statement of a role's policy, and how its resources read in the template."""

    sid: str
    effect: str
    document: Json
    # For each resolved resource: the template's text of the element it came from.
    resource_text: dict[str, str]

    def grants_action(self, action: str) -> bool:
        if "NotAction" in self.document:
            return not any(matches(str(a), action, True) for a in _listed(self.document["NotAction"]))
        return any(matches(str(a), action, True) for a in _listed(self.document.get("Action", [])))

    def matching_resource(self, needed: Needed) -> str | None:
        """The resource pattern that covers ``needed``, when the statement applies to it; else None."""
        if not self.grants_action(needed.action):
            return None
        if not _condition_holds(self.document.get("Condition") or {}, dict(needed.context)):
            return None
        if "NotResource" in self.document:
            excluded = any(matches(str(r), needed.resource) for r in _listed(self.document["NotResource"]))
            return None if excluded else "NotResource"
        for resource in _listed(self.document.get("Resource", [])):
            if matches(str(resource), needed.resource):
                return str(resource)
        return None


@dataclass(frozen=True, slots=True)
class Decision:
    allowed: bool
    sid: str = ""
    resource: str = ""  # the allowing statement's resource as the template writes it
    denied_by: str = ""


def evaluate(statements: Iterable[Statement], needed: Needed) -> Decision:
    """IAM's identity-policy decision for one authorization: explicit deny, else allow, else implicit deny."""
    allow: Decision | None = None
    for statement in statements:
        resource = statement.matching_resource(needed)
        if resource is None:
            continue
        if statement.effect == "Deny":
            return Decision(False, denied_by=statement.sid or "a Deny statement")
        if allow is None:
            allow = Decision(True, statement.sid, statement.resource_text.get(resource, resource))
    return allow or Decision(False)


# --- Resolving a template for one deployment ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Deployment:
    """The names one deployment gives: parameters, pseudo parameters, and each resource's Ref and Arn."""

    parameters: dict[str, Any]
    refs: dict[str, Any]
    arns: dict[str, str]
    region: str = "us-east-1"
    account: str = "123456789012"

    def pseudo(self) -> dict[str, Any]:
        return {
            "AWS::Partition": "aws",
            "AWS::Region": self.region,
            "AWS::AccountId": self.account,
            "AWS::URLSuffix": "amazonaws.com",
            "AWS::StackName": "lakelet",
        }


_NO_VALUE = object()
_SUB = re.compile(r"\$\{([^}!][^}]*)\}")


class Resolver:
    """Evaluates the intrinsic functions of a template for one Deployment."""

    def __init__(self, template: Json, deployment: Deployment) -> None:
        self._template = template
        self._deployment = deployment
        self._conditions: dict[str, bool] = {}

    def condition(self, name: str) -> bool:
        if name not in self._conditions:
            self._conditions[name] = bool(self.value(self._template.get("Conditions", {})[name]))
        return self._conditions[name]

    def _ref(self, name: str) -> Any:
        d = self._deployment
        if name in d.pseudo():
            return d.pseudo()[name]
        if name == "AWS::NoValue":
            return _NO_VALUE
        if name in d.parameters:
            return d.parameters[name]
        if name in self._template.get("Parameters", {}):
            default = self._template["Parameters"][name].get("Default", "")
            kind = self._template["Parameters"][name].get("Type", "String")
            return [v for v in str(default).split(",") if v] if kind == "CommaDelimitedList" else default
        if name in d.refs:
            return d.refs[name]
        raise UnresolvableTemplate(f"Ref {name}: not in the deployment")

    def _get_att(self, name: str, attribute: str) -> Any:
        if attribute == "Arn" and name in self._deployment.arns:
            return self._deployment.arns[name]
        resource = self._template.get("Resources", {}).get(name, {})
        if attribute == "Arn" and resource.get("Type") == "AWS::Logs::LogGroup":
            # The ARN a log group's GetAtt gives: its name, then ":*".
            group = self.value(resource["Properties"]["LogGroupName"])
            return f"arn:aws:logs:{self._deployment.region}:{self._deployment.account}:log-group:{group}:*"
        raise UnresolvableTemplate(f"GetAtt {name}.{attribute}: not in the deployment")

    def _sub(self, text: str, variables: dict[str, Any]) -> str:
        def one(match: re.Match[str]) -> str:
            name = match.group(1)
            if name in variables:
                return str(self.value(variables[name]))
            if "." in name and not name.startswith("AWS::"):
                logical_id, attribute = name.split(".", 1)
                return str(self._get_att(logical_id, attribute))
            return str(self._ref(name))

        return _SUB.sub(one, text)

    def value(self, node: Any) -> Any:
        if isinstance(node, list):
            return [v for v in (self.value(n) for n in node) if v is not _NO_VALUE]
        if not isinstance(node, dict):
            return node
        if len(node) == 1:
            ((key, argument),) = node.items()
            if key == "Ref":
                return self._ref(argument)
            if key == "Fn::GetAtt":
                parts = argument if isinstance(argument, list) else str(argument).split(".", 1)
                return self._get_att(parts[0], parts[1])
            if key == "Fn::Sub":
                if isinstance(argument, list):
                    return self._sub(argument[0], argument[1])
                return self._sub(argument, {})
            if key == "Fn::Join":
                return str(argument[0]).join(str(v) for v in _flat(self.value(argument[1])))
            if key == "Fn::Split":
                return str(self.value(argument[1])).split(str(argument[0]))
            if key == "Fn::Select":
                return _flat(self.value(argument[1]))[int(self.value(argument[0]))]
            if key == "Fn::If":
                name, when_true, when_false = argument
                return self.value(when_true if self.condition(name) else when_false)
            if key == "Fn::Equals":
                return self.value(argument[0]) == self.value(argument[1])
            if key == "Fn::Not":
                return not self.value(argument[0])
            if key == "Fn::And":
                return all(self.value(a) for a in argument)
            if key == "Fn::Or":
                return any(self.value(a) for a in argument)
            if key == "Condition":
                return self.condition(argument)
            if key.startswith("Fn::"):
                raise UnresolvableTemplate(key)
        return {k: v for k, v in ((k, self.value(v)) for k, v in node.items()) if v is not _NO_VALUE}


def _flat(value: Any) -> list[Any]:
    out: list[Any] = []
    for v in _listed(value):
        out.extend(_flat(v) if isinstance(v, list) else [v])
    return out


def resource_text(element: Any) -> str:
    """How a statement's resource reads in the template, for people: a Sub's text, ``${X.Arn}``, or a parameter's
    entries."""
    if isinstance(element, str):
        return element
    text = json.dumps(element, sort_keys=True)
    for parameter in ("ImportLocations", "HookFunctions"):
        if f'"Ref": "{parameter}"' in text:
            return f"each {parameter} entry"
    if isinstance(element, dict) and len(element) == 1:
        ((key, argument),) = element.items()
        if key == "Fn::Sub":
            return str(argument[0] if isinstance(argument, list) else argument)
        if key == "Fn::GetAtt":
            parts = argument if isinstance(argument, list) else str(argument).split(".", 1)
            return "${" + ".".join(parts) + "}"
    return text


def _statements(document: Json, resolver: Resolver) -> list[Statement]:
    out = []
    for raw in _listed(document.get("Statement", [])):
        resolved = resolver.value(raw)
        texts: dict[str, str] = {}
        for element in _listed(raw.get("Resource", [])):
            text = resource_text(element)
            for value in _flat(resolver.value(element)):
                texts.setdefault(str(value), text)
        out.append(Statement(str(raw.get("Sid", "")), str(raw.get("Effect", "")), resolved, texts))
    return out


def role_statements(
    template: Json, role_logical_id: str, deployment: Deployment, extra: Iterable[Json] = ()
) -> list[Statement]:
    """Every statement the role gets in the template as deployed: its inline policies, and each AWS::IAM::Policy
    attached to it whose Condition holds; ``extra`` documents are added (a role ``chalice package`` writes,
    when ``template`` is only the merge template)."""
    resolver = Resolver(template, deployment)
    out: list[Statement] = []
    for document in extra:
        out.extend(_statements(document, resolver))
    resources = template.get("Resources", {})
    role = resources.get(role_logical_id, {})
    for policy in role.get("Properties", {}).get("Policies", []) or []:
        out.extend(_statements(policy["PolicyDocument"], resolver))
    for resource in resources.values():
        if resource.get("Type") != "AWS::IAM::Policy":
            continue
        if "Condition" in resource and not resolver.condition(resource["Condition"]):
            continue
        if {"Ref": role_logical_id} in resource["Properties"].get("Roles", []):
            out.extend(_statements(resource["Properties"]["PolicyDocument"], resolver))
    return out
