"""Action files as lakeFS defines them (pkg/actions/action.go): YAML under ``_lakefs_actions/`` with a ``name``,
``on:`` events (each optionally limited to ``branches`` globs) and ``hooks`` (``id``, ``type``, ``properties``).

Parsing takes the decoded document (the caller's YAML loader: graveler imports no third-party parser) and checks
it whole, so ``lakectl actions validate`` and a run refuse the same files with the same words. Lakelet runs
``webhook`` and ``lambda`` hooks; lakeFS's Lua hooks are refused by name rather than skipped, since a guard that
silently does nothing is worse than none.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .errors import InvalidActionFile
from .events import EventType
from .glob import BadPattern, compile_glob, glob_match
from .webhook_spec import check_webhook

__all__ = [
    "ACTIONS_PREFIX",
    "MAX_ACTION_DEPTH",
    "MAX_ACTION_FILES",
    "MAX_ACTION_FILES_BYTES",
    "MAX_ACTION_FILE_BYTES",
    "MAX_ACTION_VALUES",
    "Decoder",
]

ACTIONS_PREFIX = "_lakefs_actions/"
WEBHOOK = "webhook"
LAMBDA = "lambda"
LUA = "lua"
HOOK_TYPES = (WEBHOOK, LAMBDA)
# lakeFS's default webhook timeout.
DEFAULT_TIMEOUT_SECONDS = 60.0
# Every guarded operation reads and parses the action files of its ref, so one file is bounded in bytes and in
# the values it decodes to (YAML aliases can make a small file expand exponentially: the walk stops at the bound).
MAX_ACTION_FILE_BYTES = 64 * 1024
MAX_ACTION_VALUES = 10_000
# The decoder refuses deeper nesting before it builds anything (adapters/action_yaml.py); lakeFS's schema needs 5.
MAX_ACTION_DEPTH = 32
# What one operation reads from _lakefs_actions/: lakeFS bounds neither (it lists every file and reads each whole),
# and ten 43 KB files once made every commit, branch and tag creation take 13 s. An operation on a ref holding more
# refuses like a bad file does (a guard that cannot be read in full never lets an operation through).
MAX_ACTION_FILES = 50
MAX_ACTION_FILES_BYTES = 256 * 1024
# lakeFS's rule for hook ids (pkg/actions/action.go).
_HOOK_ID = re.compile(r"^[_a-zA-Z][\-_a-zA-Z0-9]{1,255}$")
_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")
_UNIT_SECONDS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}

Decoder = Callable[[bytes], Any]


@dataclass(frozen=True, slots=True)
class EventFilter:
    """``branches``: globs a branch must match one of (lakeFS's path.Match); empty: every branch."""

    branches: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class HookSpec:
    id: str
    type: str
    description: str
    properties: Mapping[str, Any]
    timeout_seconds: float


@dataclass(frozen=True, slots=True)
class Action:
    name: str
    description: str
    on: Mapping[EventType, EventFilter]
    hooks: tuple[HookSpec, ...]
    # The file it came from (its path in the repository), for messages and ordering.
    source: str = ""

    def matches(self, event_type: EventType, branch_id: str) -> bool:
        found = self.on.get(event_type)
        if found is None:
            return False
        return not found.branches or any(glob_match(g, branch_id) for g in found.branches)


def parse_duration(text: str) -> float:
    """Seconds of a Go duration ("30s", "1m30s", "500ms"), as lakeFS reads ``timeout``. Raises ValueError."""
    rest = text.strip()
    if rest == "0":
        return 0.0
    if not rest:
        raise ValueError("empty duration")
    total = 0.0
    while rest:
        m = _DURATION_PART.match(rest)
        if m is None:
            raise ValueError(f"invalid duration {text!r}")
        total += float(m.group(1)) * _UNIT_SECONDS[m.group(2)]
        rest = rest[m.end() :]
    return total


def parse_action(data: bytes, decode: Decoder, source: str = "") -> Action:
    """The action in an action file. Raises InvalidActionFile naming the file and what is wrong."""
    where = f"action file {source}: " if source else ""
    if len(data) > MAX_ACTION_FILE_BYTES:
        raise InvalidActionFile(f"{where}larger than {MAX_ACTION_FILE_BYTES} bytes")
    try:
        document = decode(data)
    except Exception as e:  # the loader's own error type is the caller's: any failure to decode is bad input
        raise InvalidActionFile(f"{where}not valid YAML: {e}") from e
    if not _within_values(document, MAX_ACTION_VALUES):
        raise InvalidActionFile(f"{where}decodes to more than {MAX_ACTION_VALUES} values")
    try:
        return _action(document, source)
    except InvalidActionFile as e:
        raise InvalidActionFile(f"{where}{e}") from None


def _within_values(document: Any, budget: int) -> bool:
    """Whether the decoded document holds at most ``budget`` values, counting an aliased value at each use."""
    pending = [document]
    while pending:
        budget -= 1
        if budget < 0:
            return False
        value = pending.pop()
        if isinstance(value, dict):
            pending.extend(value.keys())
            pending.extend(value.values())
        elif isinstance(value, list):
            pending.extend(value)
    return True


def _action(document: Any, source: str) -> Action:
    if not isinstance(document, dict):
        raise InvalidActionFile("an action is a mapping with name, on and hooks")
    name = document.get("name")
    if not isinstance(name, str) or not name.strip():
        raise InvalidActionFile("missing name")
    # YAML 1.1 reads a bare ``on`` key as the boolean true (PyYAML's safe_load does): both spellings are "on".
    on = _events(document["on"] if "on" in document else document.get(True))
    hooks_doc = document.get("hooks")
    if not isinstance(hooks_doc, list) or not hooks_doc:
        raise InvalidActionFile("missing hooks: an action runs at least one hook")
    hooks = tuple(_hook(h, n) for n, h in enumerate(hooks_doc))
    seen: set[str] = set()
    for hook in hooks:
        if hook.id in seen:
            raise InvalidActionFile(f"duplicate hook id '{hook.id}'")
        seen.add(hook.id)
    return Action(name, _optional_str(document, "description"), on, hooks, source)


def _events(doc: Any) -> dict[EventType, EventFilter]:
    if not isinstance(doc, dict) or not doc:
        raise InvalidActionFile("missing 'on': an action names at least one event")
    known = {e.value: e for e in EventType}
    out: dict[EventType, EventFilter] = {}
    for key, spec in doc.items():
        event = known.get(str(key))
        if event is None:
            raise InvalidActionFile(f"event '{key}' is not supported (supported: {', '.join(known)})")
        out[event] = _filter(spec, event)
    return out


def _filter(spec: Any, event: EventType) -> EventFilter:
    if spec is None:
        return EventFilter()
    if not isinstance(spec, dict):
        raise InvalidActionFile(f"event '{event}': expected a mapping with branches")
    unknown = set(spec) - {"branches"}
    if unknown:
        raise InvalidActionFile(f"event '{event}': unknown field {sorted(map(str, unknown))[0]}")
    branches = spec.get("branches")
    if branches is None:
        return EventFilter()
    if not isinstance(branches, list) or not all(isinstance(b, str) and b for b in branches):
        raise InvalidActionFile(f"event '{event}': branches is a list of branch name globs")
    for glob in branches:
        try:
            compile_glob(glob)
        except BadPattern as e:
            raise InvalidActionFile(f"event '{event}': bad branch glob {glob[:100]!r}: {e}") from None
    return EventFilter(tuple(branches))


def _hook(doc: Any, index: int) -> HookSpec:
    if not isinstance(doc, dict):
        raise InvalidActionFile(f"hook {index + 1}: expected a mapping with id, type and properties")
    hook_id = doc.get("id")
    if not isinstance(hook_id, str) or not _HOOK_ID.match(hook_id):
        raise InvalidActionFile(f"hook {index + 1}: missing or invalid id {hook_id!r} (letters, digits, - and _)")
    kind = doc.get("type")
    if kind == LUA:
        raise InvalidActionFile(
            f"hook '{hook_id}': Lua hooks are not supported by Lakelet; use a webhook or a lambda hook"
        )
    if kind not in HOOK_TYPES:
        raise InvalidActionFile(f"hook '{hook_id}': unknown type {kind!r} (supported: {', '.join(HOOK_TYPES)})")
    props = doc.get("properties")
    if not isinstance(props, dict):
        raise InvalidActionFile(f"hook '{hook_id}': missing properties")
    timeout = _timeout(props, hook_id)
    if kind == WEBHOOK:
        check_webhook(props, hook_id)
    else:
        _check_lambda(props, hook_id)
    return HookSpec(hook_id, kind, _optional_str(doc, "description"), dict(props), timeout)


def _timeout(props: Mapping[str, Any], hook_id: str) -> float:
    raw = props.get("timeout")
    if raw is None or raw == "":
        return DEFAULT_TIMEOUT_SECONDS
    if not isinstance(raw, str):
        raise InvalidActionFile(f"hook '{hook_id}': timeout is a duration such as 30s or 1m")
    try:
        seconds = parse_duration(raw)
    except ValueError:
        raise InvalidActionFile(f"hook '{hook_id}': invalid timeout {raw!r} (a duration such as 30s or 1m)") from None
    if seconds <= 0:
        raise InvalidActionFile(f"hook '{hook_id}': timeout must be positive")
    return seconds


def _check_lambda(props: Mapping[str, Any], hook_id: str) -> None:
    name = props.get("function_name")
    if not isinstance(name, str) or not name.strip():
        raise InvalidActionFile(f"hook '{hook_id}': lambda hooks need function_name (a name or an ARN)")
    qualifier = props.get("qualifier")
    if qualifier is not None and not isinstance(qualifier, str):
        raise InvalidActionFile(f"hook '{hook_id}': qualifier is a version or alias name")


def _optional_str(doc: Mapping[str, Any], key: str) -> str:
    value = doc.get(key)
    return value if isinstance(value, str) else ""
