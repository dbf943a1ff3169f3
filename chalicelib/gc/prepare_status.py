"""lakeFS's asynchronous prepare (prepareGarbageCollectionCommitsAsync and its status) over Lakelet's prepare.

Lakelet's prepare reads only the refs and the staging areas, and runs within the API's time: the asynchronous
form runs it at once and names the task by the run id it made, so the status is read back from that run's
manifest (``runs/run_id=<id>/prepare.json``), which exists exactly when the prepare completed. A prepare that
fails answers its error on the POST itself (lakeFS reports it later, in the status).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime

from chalicelib.graveler import errors
from chalicelib.graveler.engine import Engine

from . import layout

__all__ = ["PreparedStatus", "prepared_status"]


@dataclass(frozen=True, slots=True)
class PreparedStatus:
    """A completed prepare, as its manifest records it."""

    run_id: str
    prepared_at: float
    commits_location: str
    addresses_location: str

    @property
    def update_time(self) -> str:
        return datetime.fromtimestamp(self.prepared_at, UTC).isoformat().replace("+00:00", "Z")


def prepared_status(engine: Engine, repo_id: str, task_id: str) -> PreparedStatus:
    """The prepare run ``task_id`` of the repository. Raises NotFound for a task it never ran (Invalid for an id
    that cannot be a run id)."""
    namespace = engine.repositories.get_repository(repo_id).storage_namespace
    address = layout.prepare_manifest_address(namespace, layout.validate_run_id(task_id))
    try:
        manifest = json.loads(engine.repositories.namespace_files(namespace).get(address))
    except errors.ObjectNotFound:
        raise errors.NotFound(f"no garbage collection prepare task {task_id}") from None
    return PreparedStatus(
        run_id=str(manifest["run_id"]),
        prepared_at=float(manifest["prepared_at"]),
        commits_location=str(manifest["commits_location"]),
        addresses_location=str(manifest["addresses_location"]),
    )
