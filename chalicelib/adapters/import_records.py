"""Import status records (graveler/imports/ports.py ImportRecords): on the block store, as small JSON objects
under the repository's namespace, and an in-memory twin.

Layout under ``<namespace>/_lakefs/imports/<id>/``: ``status.json`` (the record), ``progress/<part>.json`` (each
slice's count, written only by that slice's task), ``canceled`` (the cancel mark), ``outcome`` (whichever of a
cancel and the final merge came first: created once, conditionally) and the slice manifests the import's Plan
writes. GC never deletes under _lakefs/, and S3's read-after-write consistency makes a cancel visible to the next
check of any task.
"""

from __future__ import annotations

import json
import threading

from chalicelib.graveler import errors
from chalicelib.graveler.imports.errors import ImportNotFound
from chalicelib.graveler.imports.status import ImportRecord
from chalicelib.graveler.ports import BlockStore

__all__ = ["BlockImportRecords", "MemoryImportRecords"]


def _root(namespace: str, import_id: str) -> str:
    return f"{namespace.rstrip('/')}/_lakefs/imports/{import_id}/"


class BlockImportRecords:
    def __init__(self, blocks: BlockStore) -> None:
        self._blocks = blocks

    def create(self, namespace: str, record: ImportRecord) -> None:
        address = _root(namespace, record.import_id) + "status.json"
        if not self._blocks.put_if_absent(address, json.dumps(record.to_json()).encode()):
            raise errors.AlreadyExists(f"import {record.import_id} exists")

    def get(self, namespace: str, import_id: str) -> ImportRecord:
        try:
            data = self._blocks.get(_root(namespace, import_id) + "status.json")
        except errors.NotFound:
            raise ImportNotFound(f"import {import_id} not found") from None
        return ImportRecord.from_json(json.loads(data))

    def save(self, namespace: str, record: ImportRecord) -> None:
        self._blocks.put(_root(namespace, record.import_id) + "status.json", json.dumps(record.to_json()).encode())

    def report_progress(self, namespace: str, import_id: str, part: str, count: int) -> None:
        self._blocks.put(_root(namespace, import_id) + f"progress/{part}.json", json.dumps({"count": count}).encode())

    def progress(self, namespace: str, import_id: str) -> int:
        total = 0
        for address, _ in self._blocks.list_blobs(_root(namespace, import_id) + "progress/"):
            try:
                total += int(json.loads(self._blocks.get(address))["count"])
            except errors.NotFound:
                continue
        return total

    def cancel(self, namespace: str, import_id: str) -> None:
        self._blocks.put_if_absent(_root(namespace, import_id) + "canceled", b"")

    def canceled(self, namespace: str, import_id: str) -> bool:
        return self._blocks.exists(_root(namespace, import_id) + "canceled")

    def decide(self, namespace: str, import_id: str, outcome: str) -> str:
        address = _root(namespace, import_id) + "outcome"
        if self._blocks.put_if_absent(address, outcome.encode()):
            return outcome
        return self._blocks.get(address).decode()


class MemoryImportRecords:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.records: dict[tuple[str, str], ImportRecord] = {}
        self.parts: dict[tuple[str, str], dict[str, int]] = {}
        self.cancels: set[tuple[str, str]] = set()
        self.outcomes: dict[tuple[str, str], str] = {}

    def create(self, namespace: str, record: ImportRecord) -> None:
        with self._lock:
            if (namespace, record.import_id) in self.records:
                raise errors.AlreadyExists(f"import {record.import_id} exists")
            self.records[namespace, record.import_id] = record

    def get(self, namespace: str, import_id: str) -> ImportRecord:
        with self._lock:
            found = self.records.get((namespace, import_id))
        if found is None:
            raise ImportNotFound(f"import {import_id} not found")
        return found

    def save(self, namespace: str, record: ImportRecord) -> None:
        with self._lock:
            self.records[namespace, record.import_id] = record

    def report_progress(self, namespace: str, import_id: str, part: str, count: int) -> None:
        with self._lock:
            self.parts.setdefault((namespace, import_id), {})[part] = count

    def progress(self, namespace: str, import_id: str) -> int:
        with self._lock:
            return sum(self.parts.get((namespace, import_id), {}).values())

    def cancel(self, namespace: str, import_id: str) -> None:
        with self._lock:
            self.cancels.add((namespace, import_id))

    def canceled(self, namespace: str, import_id: str) -> bool:
        with self._lock:
            return (namespace, import_id) in self.cancels

    def decide(self, namespace: str, import_id: str, outcome: str) -> str:
        with self._lock:
            return self.outcomes.setdefault((namespace, import_id), outcome)
