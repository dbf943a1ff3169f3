"""The import's plan, and what its steps hand each other, as frozen records with their JSON forms (the step
results through plan_json.py, the one codec).

The workflow state carries only what every step needs (bounds of the whole import, ids, the manifest's location:
the 256 KB limit on a state); the slices themselves go to a manifest file that Plan writes under the repository
namespace's ``_lakefs/`` and the Distributed Map reads (its ItemReader), one item per slice. An item holds a
slice's bounds only; the Map's ItemSelector adds what all slices share (the import id, the namespace, the base
metarange, the locations) from the state.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from ..runs.plan_json import Json, JsonRecord
from ..writes.addressing import metadata_address
from .request import ImportLocation


@dataclass(frozen=True, slots=True)
class ImportSlice:
    """One slice [lo, hi) of the destination key space (hi None: to the end): its task lists the sources inside it
    and applies them onto the base ranges inside it. ``part`` names its progress count."""

    import_id: str
    namespace: str
    base_metarange: str
    locations: tuple[ImportLocation, ...]
    lo: str
    hi: str | None
    part: str
    # The repository's range format: 1 when absent, as in an event of an execution started before formats.
    range_format: int = 1

    def bounds(self) -> Json:
        """The slice's own fields: one item of the manifest."""
        return {"lo": self.lo, "hi": self.hi, "part": self.part}

    @classmethod
    def from_task(cls, data: Json) -> ImportSlice:
        """The slice of its task's event, as the Map's ItemSelector makes it: {"request" (ImportRequest JSON: the
        import id and locations), "namespace", "base_metarange", "range_format", "bounds" (the manifest's item)}."""
        bounds, request = data["bounds"], data["request"]
        if not isinstance(bounds, dict) or not isinstance(request, dict):
            raise ValueError("a slice's bounds and request must be objects")
        hi = bounds.get("hi")
        return cls(
            str(request["import_id"]),
            str(data["namespace"]),
            str(data["base_metarange"]),
            tuple(ImportLocation.from_json(loc) for loc in request["locations"]),
            str(bounds["lo"]),
            None if hi is None else str(hi),
            str(bounds["part"]),
            int(data.get("range_format", 1)),
        )


def manifest_bytes(slices: tuple[ImportSlice, ...]) -> bytes:
    """The manifest's content: the slices' bounds as one JSON array (the ItemReader's InputType JSON)."""
    return json.dumps([s.bounds() for s in slices], separators=(",", ":"), sort_keys=True).encode()


def manifest_address(namespace: str, import_id: str, content: bytes) -> str:
    """Where a manifest with ``content`` lives: named by its digest, so that writing it again (a retried Plan)
    writes the same bytes to the same file, and a Plan that planned differently (the branch moved in between)
    never overwrites a manifest that a map may be reading."""
    digest = hashlib.sha256(content).hexdigest()[:32]
    return metadata_address(namespace, f"imports/{import_id}/slices-{digest}.json")


def split_s3(address: str) -> tuple[str, str]:
    """``s3://bucket/key`` as (bucket, key)."""
    if not address.startswith("s3://") or "/" not in address[5:]:
        raise ValueError(f"not an s3://bucket/key address: {address!r}")
    bucket, key = address[5:].split("/", 1)
    return bucket, key


@dataclass(frozen=True, slots=True)
class ImportPlan:
    """The branch head the import builds on (the import branch was moved there), its metarange, and the slices to
    build, listed in the manifest at ``manifest``. A plan read back from the workflow state has no ``slices``
    (they are in the manifest): only ``slice_count``."""

    base_commit: str
    base_generation: int
    namespace: str
    base_metarange: str
    manifest: str
    slice_count: int
    slices: tuple[ImportSlice, ...] = ()
    range_format: int = 1

    def to_json(self) -> Json:
        bucket, key = split_s3(self.manifest)
        return {
            "base_commit": self.base_commit,
            "base_generation": self.base_generation,
            "namespace": self.namespace,
            "base_metarange": self.base_metarange,
            # The ItemReader's Parameters (s3:getObject's Bucket and Key).
            "manifest": {"bucket": bucket, "key": key},
            "slice_count": self.slice_count,
            "range_format": self.range_format,
        }

    @classmethod
    def from_json(cls, data: Json) -> ImportPlan:
        manifest = data["manifest"]
        return cls(
            str(data["base_commit"]),
            int(data["base_generation"]),
            str(data["namespace"]),
            str(data["base_metarange"]),
            f"s3://{manifest['bucket']}/{manifest['key']}",
            int(data["slice_count"]),
            range_format=int(data.get("range_format", 1)),
        )


@dataclass(frozen=True, slots=True)
class ImportedSlice(JsonRecord):
    """A built slice: its ranges as a metarange of their own, the changes it applied onto the base, and the source
    objects it listed."""

    metarange: str
    added: int
    changed: int
    removed: int
    ingested: int

    @property
    def changes(self) -> int:
        return self.added + self.changed + self.removed


@dataclass(frozen=True, slots=True)
class ImportCommitted(JsonRecord):
    """The import's commit on its import branch: its id, its metarange, the objects ingested, the changes."""

    commit_id: str
    metarange_id: str
    ingested: int
    changes: int


@dataclass(frozen=True, slots=True)
class ImportMerged(JsonRecord):
    """The merge commit that brought the import onto the branch."""

    commit_id: str


@dataclass(frozen=True, slots=True)
class ImportFailed(JsonRecord):
    """What the failure step recorded (the message the status shows)."""

    failed: str


__all__ = [
    "ImportCommitted",
    "ImportFailed",
    "ImportMerged",
    "ImportPlan",
    "ImportSlice",
    "ImportedSlice",
    "manifest_address",
    "manifest_bytes",
    "split_s3",
]
