"""The ports a hook run goes through: one invoker per hook type (webhook, lambda), implemented in adapters/."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from ..records import Branch
from .spec import HookSpec


@dataclass(frozen=True, slots=True)
class HookOutcome:
    """``ok``: the hook passed (a 2xx answer). ``error``: why it failed, in a few words ("webhook request failed
    (status code: 400)"). ``output``: what is kept as the hook run's output (the request and the answer)."""

    ok: bool
    output: str
    error: str = ""


class HookInvoker(Protocol):
    """Runs one hook (a webhook or a Lambda function; adapters/hooks/) and reports how it went."""

    def invoke(self, hook: HookSpec, payload: bytes, timeout_seconds: float) -> HookOutcome:
        """Delivers the event payload (JSON) to the hook and waits at most ``timeout_seconds`` for its answer.
        Never raises for the hook's own failures (unreachable, timed out, refused): they are a failed outcome."""
        ...


class ActionFiles(Protocol):
    """Reads the action files of a ref (the hook runner reads them before every hooked operation)."""

    def __call__(self, repo_id: str, ref: str, branch: Branch | None = None) -> list[tuple[str, bytes]]:
        """(path, bytes) of every file under _lakefs_actions/ on the ref, in path order. ``branch``: the ref's
        branch record as the caller already read it in this request (then it is not read again)."""
        ...
