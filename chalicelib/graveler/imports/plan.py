"""The import's plan as frozen records with their JSON form: the workflow state carries them between Lambdas
(bounds, ids and locations only, never listings: the 256 KB limit on a state)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .request import ImportLocation

Json = dict[str, Any]


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

    def to_json(self) -> Json:
        return {
            "import_id": self.import_id,
            "namespace": self.namespace,
            "base_metarange": self.base_metarange,
            "locations": [loc.to_json() for loc in self.locations],
            "lo": self.lo,
            "hi": self.hi,
            "part": self.part,
        }

    @classmethod
    def from_json(cls, data: Json) -> ImportSlice:
        hi = data.get("hi")
        return cls(
            str(data["import_id"]),
            str(data["namespace"]),
            str(data["base_metarange"]),
            tuple(ImportLocation.from_json(loc) for loc in data["locations"]),
            str(data["lo"]),
            None if hi is None else str(hi),
            str(data["part"]),
        )


@dataclass(frozen=True, slots=True)
class ImportPlan:
    """The branch head the import builds on (the import branch was moved there) and the slices to build."""

    base_commit: str
    base_generation: int
    namespace: str
    slices: tuple[ImportSlice, ...]

    def to_json(self) -> Json:
        return {
            "base_commit": self.base_commit,
            "base_generation": self.base_generation,
            "namespace": self.namespace,
            "slices": [s.to_json() for s in self.slices],
        }

    @classmethod
    def from_json(cls, data: Json) -> ImportPlan:
        return cls(
            str(data["base_commit"]),
            int(data["base_generation"]),
            str(data["namespace"]),
            tuple(ImportSlice.from_json(s) for s in data["slices"]),
        )


__all__ = ["ImportPlan", "ImportSlice"]
