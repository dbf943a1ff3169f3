"""The YAML decoder of action files (graveler/actions/spec.py's Decoder), bounded before it builds anything.

libyaml's parser (PyYAML's CSafeLoader, when PyYAML was built with it) reads a 45 KB file in ~35 ms where the
pure-Python one takes ~450 ms. A first pass over the parser's events (no objects built) refuses a document nested
deeper than MAX_ACTION_DEPTH or holding more than MAX_ACTION_VALUES nodes: PyYAML's constructor recurses per level,
and 40 KB of ``[`` took 5 to 7 s to fail with a RecursionError; the pass refuses it after a few dozen events.
"""

from __future__ import annotations

from typing import Any

from chalicelib.graveler.actions.spec import MAX_ACTION_DEPTH, MAX_ACTION_VALUES

__all__ = ["load_action_yaml"]


def load_action_yaml(data: bytes) -> Any:
    """The decoded document; ValueError (or PyYAML's YAMLError) for a document past the bounds or not YAML."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    depth = nodes = 0
    for event in yaml.parse(data, Loader=loader):
        if isinstance(event, yaml.NodeEvent):
            nodes += 1
            if nodes > MAX_ACTION_VALUES:
                raise ValueError(f"more than {MAX_ACTION_VALUES} values")
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_ACTION_DEPTH:
                raise ValueError(f"nested deeper than {MAX_ACTION_DEPTH} levels")
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
    return yaml.load(data, Loader=loader)
