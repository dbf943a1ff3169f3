"""Actions and hooks (lakeFS's pkg/actions): action files under ``_lakefs_actions/``, the events they run on, the
run of an event's hooks through the HookInvoker port (webhook and Lambda adapters), and the runs it records under
the namespace's ``_lakefs/actions/``."""

from .errors import HookAborted, HookRunNotFound, InvalidActionFile, RunNotFound
from .events import EventType, HookEvent
from .files_cache import ActionFilesCache
from .glob import glob_match
from .ports import ActionFiles, HookInvoker, HookOutcome
from .records import COMPLETED, FAILED, ActionRun, HookRun
from .runner import HookRunner, event_payload
from .spec import ACTIONS_PREFIX, LAMBDA, WEBHOOK, Action, HookSpec, parse_action, parse_duration
from .store import RunStore

__all__ = [
    "ACTIONS_PREFIX",
    "COMPLETED",
    "FAILED",
    "LAMBDA",
    "WEBHOOK",
    "Action",
    "ActionFiles",
    "ActionFilesCache",
    "ActionRun",
    "EventType",
    "HookAborted",
    "HookEvent",
    "HookInvoker",
    "HookOutcome",
    "HookRun",
    "HookRunNotFound",
    "HookRunner",
    "HookSpec",
    "InvalidActionFile",
    "RunNotFound",
    "RunStore",
    "event_payload",
    "events",
    "files_cache",
    "glob",
    "glob_match",
    "operations",
    "parse_action",
    "parse_duration",
    "spec",
    "webhook_spec",
]
