"""What of a state machine's definition (ASL) moto's interpreter runs as Step Functions would, checked before the
stack creates it: a Map state's fields, item reader, processor mode and tolerated failures
(lakelet/stack/stepfunctions_local.py creates the machines).
"""

from __future__ import annotations

import copy
from typing import Any

S3_GET_OBJECT = "arn:aws:states:::s3:getObject"


class UnsupportedLocally(ValueError):
    """A definition uses a Map field the local interpreter would not run as AWS does."""


# The Map fields the local runs honour as AWS does. moto's parser refuses fields it does not know; these checks
# refuse the ones it parses but would run differently: its distributed map fails on the first failed child
# (a tolerance of 0, whatever the definition says) and reads items with s3:getObject only as tested here.
_MAP_FIELDS = {
    "Type",
    "Comment",
    "ItemsPath",
    "ItemReader",
    "ItemSelector",
    "ItemProcessor",
    "Iterator",
    "MaxConcurrency",
    "ToleratedFailurePercentage",
    "ToleratedFailureCount",
    "Parameters",
    "InputPath",
    "OutputPath",
    "ResultPath",
    "ResultSelector",
    "Retry",
    "Catch",
    "Next",
    "End",
}


_ITEM_READER_FIELDS = {"Resource", "ReaderConfig", "Parameters"}


_PROCESSOR_MODES = {"INLINE", "DISTRIBUTED"}


_EXECUTION_TYPES = {"STANDARD", "EXPRESS"}


def check_definition(definition: dict[str, Any]) -> dict[str, Any]:
    """The definition as moto's interpreter is given it, once every Map state (nested ones too) is known to use
    only what the local run honours: ItemReader with s3:getObject of a JSON array, ItemProcessor (INLINE or
    DISTRIBUTED, STANDARD or EXPRESS), ItemSelector, MaxConcurrency, and failure tolerances of 0. The tolerances
    are dropped (moto's parser reads no integer percentage, and its map fails on any failed child, which is
    what 0 means). Raises UnsupportedLocally naming the state and the field."""
    out = copy.deepcopy(definition)
    _check_states(out.get("States") or {})
    return out


def _check_states(states: dict[str, Any]) -> None:
    for name, state in states.items():
        if not isinstance(state, dict):
            continue
        if state.get("Type") == "Map":
            _check_map(name, state)
        if state.get("Type") == "Parallel":
            for branch in state.get("Branches") or []:
                _check_states(branch.get("States") or {})


def _check_map(name: str, state: dict[str, Any]) -> None:
    def refuse(why: str) -> UnsupportedLocally:
        return UnsupportedLocally(f"Map state {name!r}: {why}")

    unknown = sorted(set(state) - _MAP_FIELDS)
    if unknown:
        raise refuse(f"{', '.join(unknown)} not supported by the local interpreter")
    for field in ("ToleratedFailurePercentage", "ToleratedFailureCount"):
        if field in state:
            value = state.pop(field)
            if isinstance(value, bool) or not isinstance(value, int | float) or value != 0:
                raise refuse(f"{field} {value!r}: the local interpreter fails the map on any failed item (only 0)")
    reader = state.get("ItemReader")
    if reader is not None:
        if not isinstance(reader, dict) or set(reader) - _ITEM_READER_FIELDS:
            raise refuse(f"ItemReader fields {sorted(reader) if isinstance(reader, dict) else reader!r}")
        if reader.get("Resource") != S3_GET_OBJECT:
            raise refuse(f"ItemReader Resource {reader.get('Resource')!r}: only {S3_GET_OBJECT}")
        if reader.get("ReaderConfig") != {"InputType": "JSON"}:
            raise refuse(f"ItemReader ReaderConfig {reader.get('ReaderConfig')!r}: only {{'InputType': 'JSON'}}")
    processor = state.get("ItemProcessor") or state.get("Iterator")
    if not isinstance(processor, dict):
        raise refuse("no ItemProcessor")
    config = processor.get("ProcessorConfig") or {"Mode": "INLINE"}
    if set(config) - {"Mode", "ExecutionType"} or config.get("Mode") not in _PROCESSOR_MODES:
        raise refuse(f"ProcessorConfig {config!r}")
    distributed = config["Mode"] == "DISTRIBUTED"
    if distributed and config.get("ExecutionType") not in _EXECUTION_TYPES:
        raise refuse(f"ProcessorConfig ExecutionType {config.get('ExecutionType')!r}")
    if reader is not None and not distributed:
        raise refuse("ItemReader needs ProcessorConfig Mode DISTRIBUTED")
    _check_states(processor.get("States") or {})
