"""What a run leaves behind: the run (one event, every matching action) and one record per hook it ran, in the
shapes of lakeFS's ActionRun and HookRun."""

from __future__ import annotations

import secrets
from dataclasses import dataclass, replace
from typing import Any

COMPLETED = "completed"
FAILED = "failed"
# Run ids sort newest first (listings answer newest first, as lakeFS's): the time counts down in their prefix.
_RUN_ID_EPOCH_LIMIT_MS = 36**9 - 1
_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz"


def new_run_id(now: float) -> str:
    """Nine base-36 digits of the milliseconds left until a far date (so later runs sort first), then eleven
    random ones: unique without coordination."""
    left = max(0, _RUN_ID_EPOCH_LIMIT_MS - int(now * 1000))
    return _base36(left, 9) + "".join(secrets.choice(_ALPHABET) for _ in range(11))


def hook_run_id(action_index: int, hook_index: int) -> str:
    """lakeFS's hook run id: the action's and the hook's positions ("0000_0001")."""
    return f"{action_index:04d}_{hook_index:04d}"


def _base36(n: int, width: int) -> str:
    digits = []
    for _ in range(width):
        n, r = divmod(n, 36)
        digits.append(_ALPHABET[r])
    return "".join(reversed(digits))


@dataclass(frozen=True, slots=True)
class HookRun:
    run_id: str
    hook_run_id: str
    action: str
    hook_id: str
    start_time: float
    end_time: float
    status: str

    def to_json(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "hook_run_id": self.hook_run_id,
            "action": self.action,
            "hook_id": self.hook_id,
            "start_time": self.start_time,
            "end_time": self.end_time,
            "status": self.status,
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> HookRun:
        return cls(
            str(d["run_id"]),
            str(d["hook_run_id"]),
            str(d["action"]),
            str(d["hook_id"]),
            float(d["start_time"]),
            float(d["end_time"]),
            str(d["status"]),
        )


@dataclass(frozen=True, slots=True)
class ActionRun:
    run_id: str
    repository_id: str
    event_type: str
    branch: str
    commit_id: str
    source_ref: str
    start_time: float
    end_time: float
    status: str
    hooks: tuple[HookRun, ...] = ()

    def with_commit(self, commit_id: str) -> ActionRun:
        return replace(self, commit_id=commit_id)

    def to_json(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "repository_id": self.repository_id,
            "event_type": self.event_type,
            "branch": self.branch,
            "commit_id": self.commit_id,
            "source_ref": self.source_ref,
            "start_time": self.start_time,
            "end_time": self.end_time,
            "status": self.status,
            "hooks": [h.to_json() for h in self.hooks],
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> ActionRun:
        return cls(
            str(d["run_id"]),
            str(d["repository_id"]),
            str(d["event_type"]),
            str(d["branch"]),
            str(d["commit_id"]),
            str(d.get("source_ref", "")),
            float(d["start_time"]),
            float(d["end_time"]),
            str(d["status"]),
            tuple(HookRun.from_json(h) for h in d["hooks"]),
        )
