"""What a commit was asked for, fixed once so that every step and every retry computes the same commit."""

from __future__ import annotations

from dataclasses import dataclass

from ..records import StagingToken
from ..runs.plan_json import Json


def request_token(repo_id: str, branch_id: str, request_id: str) -> StagingToken:
    """The staging token a commit request installs when it seals: derived from the request, so a retried seal
    can tell that the seal already happened."""
    return StagingToken(f"{repo_id}-{branch_id}:{request_id}")


@dataclass(frozen=True, slots=True)
class CommitRequest:
    """What the user asked for; the date is fixed once, so every retry computes the same commit id."""

    repository: str
    branch: str
    request_id: str
    committer: str
    message: str
    date: float  # unix seconds, sub-second kept (commit_id hashes whole seconds)
    metadata: dict[str, str]
    allow_empty: bool = False
    force: bool = False  # lakeFS's CommitCreation.force: commit into a read-only repository

    def to_json(self) -> Json:
        return {
            "repository": self.repository,
            "branch": self.branch,
            "request_id": self.request_id,
            "committer": self.committer,
            "message": self.message,
            "date": self.date,
            "metadata": dict(self.metadata),
            "allow_empty": self.allow_empty,
            "force": self.force,
        }

    @classmethod
    def from_json(cls, data: Json) -> CommitRequest:
        return cls(
            repository=str(data["repository"]),
            branch=str(data["branch"]),
            request_id=str(data["request_id"]),
            committer=str(data["committer"]),
            message=str(data["message"]),
            date=float(data["date"]),
            metadata={str(k): str(v) for k, v in dict(data.get("metadata") or {}).items()},
            allow_empty=bool(data.get("allow_empty", False)),
            force=bool(data.get("force", False)),
        )


__all__ = ["CommitRequest", "request_token"]
