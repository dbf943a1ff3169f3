"""An import's status record: what importStatus answers (lakeFS's ImportStatus), kept by an ImportRecords store.

Progress is kept apart from the record, one count per slice (each slice's task writes only its own), so parallel
tasks never read-modify-write a shared record; the status sums them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..runs.plan_json import Json

RUNNING = "running"
COMPLETED = "completed"
FAILED = "failed"
STATES = (RUNNING, COMPLETED, FAILED)
CANCELED_MESSAGE = "import canceled"
# The two ways a running import can end that race each other (ImportRecords.decide): a cancel, and the final
# merge moving the branch. Whichever is recorded first wins; the other refuses.
CANCELING = "canceling"
MERGING = "merging"


@dataclass(frozen=True, slots=True)
class ImportRecord:
    """``commit_id`` (the merge into the branch) and ``metarange_id`` (the import commit's) once completed;
    ``error`` once failed; ``ingested`` the final count (the status sums per-slice progress while running);
    ``merge_task`` the merge workflow's task id while engine.merges.merge runs the merge as a workflow."""

    import_id: str
    repository: str
    branch: str
    state: str
    update_time: float
    ingested: int = 0
    commit_id: str = ""
    metarange_id: str = ""
    error: str = ""
    merge_task: str = ""

    @property
    def ended(self) -> bool:
        return self.state != RUNNING

    def completed(self, commit_id: str, metarange_id: str, ingested: int, now: float) -> ImportRecord:
        return replace(
            self, state=COMPLETED, commit_id=commit_id, metarange_id=metarange_id, ingested=ingested, update_time=now
        )

    def failed(self, message: str, now: float) -> ImportRecord:
        return replace(self, state=FAILED, error=message, update_time=now)

    def to_json(self) -> Json:
        return {
            "import_id": self.import_id,
            "repository": self.repository,
            "branch": self.branch,
            "state": self.state,
            "update_time": self.update_time,
            "ingested": self.ingested,
            "commit_id": self.commit_id,
            "metarange_id": self.metarange_id,
            "error": self.error,
            "merge_task": self.merge_task,
        }

    @classmethod
    def from_json(cls, data: Json) -> ImportRecord:
        state = str(data["state"])
        if state not in STATES:
            raise ValueError(f"unknown import state {state!r}")
        return cls(
            str(data["import_id"]),
            str(data["repository"]),
            str(data["branch"]),
            state,
            float(data["update_time"]),
            int(data.get("ingested", 0)),
            str(data.get("commit_id", "")),
            str(data.get("metarange_id", "")),
            str(data.get("error", "")),
            str(data.get("merge_task", "")),
        )


__all__ = ["CANCELED_MESSAGE", "CANCELING", "COMPLETED", "FAILED", "MERGING", "RUNNING", "ImportRecord"]
