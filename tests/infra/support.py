"""Helpers of the infra tests: what the code declares (tables, settings) and template surgery."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from chalice.package import TemplateDeepMerger

from chalicelib.adapters.dynamodb.models import model_set
from chalicelib.adapters.dynamodb.tables import TableNames

PROJECT_DIR = Path(__file__).resolve().parents[2]
CHALICE_CONFIG = PROJECT_DIR / ".chalice" / "config.json"
SAMPLE_ASL = {
    "Comment": "A two-task workflow used only by the infra tests.",
    "StartAt": "Seal",
    "States": {
        "Seal": {"Type": "Task", "Resource": "${api_handler}", "Next": "Collect"},
        "Collect": {
            "Type": "Task",
            "Resource": "arn:aws:states:::lambda:invoke",
            "Parameters": {"FunctionName": "${collect_garbage}", "Payload.$": "$"},
            "End": True,
        },
    },
}


def stage_environment(stage: str) -> dict[str, str]:
    """The environment .chalice/config.json gives the functions of ``stage``."""
    config = json.loads(CHALICE_CONFIG.read_text())
    return {**config.get("environment_variables", {}), **config["stages"][stage].get("environment_variables", {})}


def model_key_schemas(prefix: str) -> dict[str, dict[str, Any]]:
    """By table name: the key schema and key attribute types the PynamoDB models declare."""
    names = TableNames.from_prefix(prefix)
    models = model_set(names, "us-east-1")
    schemas = {}
    for field in dataclasses.fields(TableNames):
        model = getattr(models, field.name)
        keys, types = [], {}
        for attribute in model.get_attributes().values():
            if attribute.is_hash_key or attribute.is_range_key:
                keys.append((attribute.attr_name, "HASH" if attribute.is_hash_key else "RANGE"))
                types[attribute.attr_name] = attribute.attr_type
        schemas[getattr(names, field.name)] = {
            "KeySchema": sorted(keys, key=lambda key: key[1]),  # HASH before RANGE
            "AttributeTypes": types,
        }
    return schemas


def sub_stage(value: Any, stage: str) -> Any:
    """A ``{"Fn::Sub": "...${Stage}..."}`` name resolved for ``stage`` (other values as they are)."""
    if isinstance(value, dict) and set(value) == {"Fn::Sub"} and isinstance(value["Fn::Sub"], str):
        return value["Fn::Sub"].replace("${Stage}", stage)
    return value


def merge(merge_template: dict[str, Any], template: dict[str, Any]) -> dict[str, Any]:
    """What ``chalice package --merge-template`` does with the two (Chalice's own deep merge)."""
    return TemplateDeepMerger().merge(merge_template, template)
