"""The Step Functions state machines: one per stepfunctions/<name>.asl.json, with its own role.

The convention for the ASL files (the same files the local stack runs): a Task names the Lambda function it
calls by a placeholder ``${<chalice function name>}``, for example ``"Resource": "${commit_seal}"`` or
``"Parameters": {"FunctionName": "${commit_seal}", ...}``; the template substitutes each placeholder with that
function's ARN (Fn::Sub), and the state machine's role may invoke exactly those functions. A placeholder that
names no function of the app stops the build. The API function finds the machines through the environment
variable ``LAKELET_<NAME>_STATE_MACHINE_ARN`` (``<name>`` upper-cased, "-" as "_").

No files, no state machines: until issue 4 lands, none are built.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chalice.utils import to_cfn_resource_name

from chalicelib.graveler.runs.plan_json import Json

SUFFIX = ".asl.json"
_PLACEHOLDER = re.compile(r"\$\{([^}!][^}]*)\}")


class StateMachineError(ValueError):
    """A state machine file the template cannot be built from."""


@dataclass(frozen=True, slots=True)
class StateMachine:
    """One ASL file and what the template makes of it."""

    name: str
    definition: str
    # Chalice function names its Tasks call, in order of first use.
    functions: tuple[str, ...]

    @property
    def logical_id(self) -> str:
        return to_cfn_resource_name(self.name) + "StateMachine"

    @property
    def role_logical_id(self) -> str:
        return to_cfn_resource_name(self.name) + "StateMachineRole"

    @property
    def environment_variable(self) -> str:
        return f"LAKELET_{self.name.upper().replace('-', '_')}_STATE_MACHINE_ARN"

    @property
    def state_machine_name(self) -> str:
        return f"lakelet-${{Stage}}-{self.name}"

    def arn(self) -> Json:
        """The machine's ARN, spelled from its name rather than referenced: a function may both start a machine
        and be one of its tasks without making the template circular."""
        return {
            "Fn::Sub": f"arn:${{AWS::Partition}}:states:${{AWS::Region}}:${{AWS::AccountId}}:stateMachine:"
            f"{self.state_machine_name}"
        }

    def distributed(self) -> bool:
        """Whether a Map of the definition runs its items as child executions (a Distributed Map)."""
        return _has_distributed_map(json.loads(self.definition).get("States") or {})

    def item_reader_objects(self) -> list[str]:
        """The data-bucket key patterns its Distributed Maps' ItemReaders read (s3:getObject): the import's slice
        manifests, which Plan writes under <namespace>/_lakefs/imports/ (at the bucket's root or under a prefix)."""
        return ITEM_READER_OBJECTS if self.distributed() else []

    def map_run_executions_arn(self) -> Json:
        """The child executions a Distributed Map of this machine starts (``<machine>/<map run label>:<name>``)."""
        return {
            "Fn::Sub": f"arn:${{AWS::Partition}}:states:${{AWS::Region}}:${{AWS::AccountId}}:execution:"
            f"{self.state_machine_name}/*:*"
        }

    def executions_arn(self) -> Json:
        return {
            "Fn::Sub": f"arn:${{AWS::Partition}}:states:${{AWS::Region}}:${{AWS::AccountId}}:execution:"
            f"{self.state_machine_name}:*"
        }


# What a Distributed Map's ItemReader may read: the slice manifests the import's Plan writes.
ITEM_READER_OBJECTS = ["_lakefs/imports/*/slices-*.json", "*/_lakefs/imports/*/slices-*.json"]


def _has_distributed_map(states: dict[str, Any]) -> bool:
    for state in states.values():
        if not isinstance(state, dict):
            continue
        processor = state.get("ItemProcessor") or state.get("Iterator") or {}
        if (processor.get("ProcessorConfig") or {}).get("Mode") == "DISTRIBUTED":
            return True
        nested = [processor.get("States") or {}] + [b.get("States") or {} for b in state.get("Branches") or []]
        if any(_has_distributed_map(n) for n in nested):
            return True
    return False


def discover(directory: Path, function_names: set[str]) -> list[StateMachine]:
    """Every ``*.asl.json`` under ``directory`` (none if it does not exist), checked against the app's functions.

    Raises StateMachineError for a file that is not JSON or names a function the app does not define.
    """
    if not directory.is_dir():
        return []
    machines = []
    for path in sorted(directory.glob(f"*{SUFFIX}")):
        name = path.name[: -len(SUFFIX)]
        text = path.read_text()
        try:
            json.loads(text)
        except ValueError as e:
            raise StateMachineError(f"{path}: not JSON: {e}") from e
        used = list(dict.fromkeys(_PLACEHOLDER.findall(text)))
        unknown = [placeholder for placeholder in used if placeholder not in function_names]
        if unknown:
            raise StateMachineError(
                f"{path}: ${{{unknown[0]}}} names no Lambda function of app.py (known: {sorted(function_names)})"
            )
        machines.append(StateMachine(name, text, tuple(used)))
    return machines


def resources(machine: StateMachine, function_logical_ids: dict[str, str]) -> Json:
    """The state machine and its role, which may invoke exactly the functions its Tasks name."""
    function_arns = [{"Fn::GetAtt": [function_logical_ids[name], "Arn"]} for name in machine.functions]
    # A Task may call a version or alias ("<arn>:<qualifier>") as well as the function itself.
    qualified = [{"Fn::Sub": f"${{{function_logical_ids[name]}.Arn}}:*"} for name in machine.functions]
    role: Json = {
        "Type": "AWS::IAM::Role",
        "Properties": {
            "Description": {"Fn::Sub": f"lakelet-${{Stage}}-{machine.name}: the state machine's tasks"},
            "AssumeRolePolicyDocument": {
                "Version": "2012-10-17",
                "Statement": [
                    {
                        "Effect": "Allow",
                        "Principal": {"Service": "states.amazonaws.com"},
                        "Action": "sts:AssumeRole",
                        "Condition": {"StringEquals": {"aws:SourceAccount": {"Ref": "AWS::AccountId"}}},
                    }
                ],
            },
            "Policies": [],
        },
    }
    if function_arns:
        role["Properties"]["Policies"] = [
            {
                "PolicyName": "invoke-tasks",
                "PolicyDocument": {
                    "Version": "2012-10-17",
                    "Statement": [
                        {
                            "Sid": "InvokeTasks",
                            "Effect": "Allow",
                            "Action": ["lambda:InvokeFunction"],
                            "Resource": function_arns + qualified,
                        }
                    ],
                },
            }
        ]
    if machine.distributed():
        # A Distributed Map starts its items as child executions of the machine itself, follows and stops them,
        # and reads its items (the slice manifest) from the data bucket.
        role["Properties"]["Policies"].append(
            {
                "PolicyName": "run-distributed-maps",
                "PolicyDocument": {
                    "Version": "2012-10-17",
                    "Statement": [
                        {
                            "Sid": "StartMapRunExecutions",
                            "Effect": "Allow",
                            "Action": ["states:StartExecution"],
                            "Resource": [machine.arn()],
                        },
                        {
                            "Sid": "FollowMapRunExecutions",
                            "Effect": "Allow",
                            "Action": ["states:DescribeExecution", "states:StopExecution"],
                            "Resource": [machine.map_run_executions_arn()],
                        },
                        {
                            "Sid": "ReadMapItems",
                            "Effect": "Allow",
                            "Action": ["s3:GetObject"],
                            "Resource": [
                                {"Fn::Sub": f"${{DataBucket.Arn}}/{pattern}"}
                                for pattern in machine.item_reader_objects()
                            ],
                        },
                    ],
                },
            }
        )
    substitutions = {name: {"Fn::GetAtt": [function_logical_ids[name], "Arn"]} for name in machine.functions}
    definition: Any = {"Fn::Sub": [machine.definition, substitutions]} if substitutions else machine.definition
    state_machine: Json = {
        "Type": "AWS::StepFunctions::StateMachine",
        "Properties": {
            "StateMachineName": {"Fn::Sub": machine.state_machine_name},
            "StateMachineType": "STANDARD",
            "DefinitionString": definition,
            "RoleArn": {"Fn::GetAtt": [machine.role_logical_id, "Arn"]},
            "TracingConfiguration": {"Enabled": True},
        },
    }
    return {machine.role_logical_id: role, machine.logical_id: state_machine}
