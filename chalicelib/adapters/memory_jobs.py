"""The JobStarter twin: the GC job runs (EMR Serverless) it was asked to start, recorded in a dict."""

from __future__ import annotations

import secrets
import threading

from chalicelib.gc.ports import JobRunRequest
from chalicelib.graveler import errors

__all__ = ["MemoryJobStarter"]


class MemoryJobStarter:
    """The JobStarter twin: records every run it starts. ``refuse``: a missing application, every start raises
    StorageError. The same idempotency token starts one run only and answers its id again."""

    def __init__(self, refuse: bool = False) -> None:
        self._refuse = refuse
        self._lock = threading.Lock()
        self.runs: dict[str, JobRunRequest] = {}
        self._by_token: dict[str, str] = {}

    def start(self, request: JobRunRequest) -> str:
        if self._refuse:
            raise errors.StorageError("job run refused: no such application")
        with self._lock:
            if request.idempotency_token and request.idempotency_token in self._by_token:
                return self._by_token[request.idempotency_token]
            run_id = secrets.token_hex(8)
            self.runs[run_id] = request
            if request.idempotency_token:
                self._by_token[request.idempotency_token] = run_id
            return run_id
