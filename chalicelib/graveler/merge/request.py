"""What a merge was asked for: the source resolved to a commit once and the date fixed, so that every step and
every retry computes the same merge commit."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..runs.plan_json import Json
from .policy import conflict_policy


@dataclass(frozen=True, slots=True)
class MergeRequest:
    """What the user asked for, with the source resolved to a commit once (a moving source branch does not move
    the merge) and the date fixed (every retry computes the same commit id)."""

    repository: str
    source_ref: str
    source_commit: str
    destination: str
    request_id: str
    committer: str
    message: str
    date: float  # unix seconds, sub-second kept (commit_id hashes whole seconds)
    metadata: dict[str, str] = field(default_factory=dict)
    strategy: str | None = None
    path_strategies: tuple[tuple[str, str], ...] = ()
    squash_merge: bool = False
    allow_empty: bool = False
    force: bool = False

    def __post_init__(self) -> None:
        conflict_policy(self.strategy, self.path_strategies)  # Invalid now, not inside a workflow

    @property
    def text(self) -> str:
        return self.message or f"Merge '{self.source_ref}' into '{self.destination}'"

    def to_json(self) -> Json:
        return {
            "repository": self.repository,
            "source_ref": self.source_ref,
            "source_commit": self.source_commit,
            "destination": self.destination,
            "request_id": self.request_id,
            "committer": self.committer,
            "message": self.message,
            "date": self.date,
            "metadata": dict(self.metadata),
            "strategy": self.strategy,
            "path_strategies": [list(p) for p in self.path_strategies],
            "squash_merge": self.squash_merge,
            "allow_empty": self.allow_empty,
            "force": self.force,
        }

    @classmethod
    def from_json(cls, data: Json) -> MergeRequest:
        return cls(
            repository=str(data["repository"]),
            source_ref=str(data["source_ref"]),
            source_commit=str(data["source_commit"]),
            destination=str(data["destination"]),
            request_id=str(data["request_id"]),
            committer=str(data["committer"]),
            message=str(data.get("message") or ""),
            date=float(data["date"]),
            metadata={str(k): str(v) for k, v in dict(data.get("metadata") or {}).items()},
            strategy=data.get("strategy") or None,
            path_strategies=tuple((str(p), str(s)) for p, s in data.get("path_strategies") or ()),
            squash_merge=bool(data.get("squash_merge", False)),
            allow_empty=bool(data.get("allow_empty", False)),
            force=bool(data.get("force", False)),
        )


__all__ = ["MergeRequest"]
