"""The merge's plan: what ``plan`` fixed and every later step reads, as frozen records with their JSON form (the
workflow state carries them between Lambdas; the state machine maps over ``slices``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

Json = dict[str, Any]


@dataclass(frozen=True, slots=True)
class MergeSliceSpec:
    """One slice of the key space, [lo, hi) (hi None: to the end), where no range of the three sides straddles a
    bound: merged on its own. A Map item of the workflow: bounds, ids and the strategies only."""

    namespace: str
    base: str
    source: str
    dest: str
    strategy: str | None
    path_strategies: tuple[tuple[str, str], ...]
    request_id: str
    lo: str
    hi: str | None

    def to_json(self) -> Json:
        return {
            "namespace": self.namespace,
            "base": self.base,
            "source": self.source,
            "dest": self.dest,
            "strategy": self.strategy,
            "path_strategies": [list(p) for p in self.path_strategies],
            "request_id": self.request_id,
            "lo": self.lo,
            "hi": self.hi,
        }

    @classmethod
    def from_json(cls, data: Json) -> MergeSliceSpec:
        hi = data.get("hi")
        return cls(
            str(data["namespace"]),
            str(data["base"]),
            str(data["source"]),
            str(data["dest"]),
            data.get("strategy") or None,
            tuple((str(p), str(s)) for p, s in data.get("path_strategies") or ()),
            str(data["request_id"]),
            str(data["lo"]),
            None if hi is None else str(hi),
        )


@dataclass(frozen=True, slots=True)
class MergeFixed:
    """The merge's fixed points: the destination head it builds on, the sealed tokens it releases, and the merged
    metarange when the merge needs no range read (one side is the base)."""

    namespace: str
    dest_commit: str
    dest_generation: int
    source_generation: int
    tokens: tuple[str, ...]
    metarange: str | None = None

    def to_json(self) -> Json:
        return {
            "namespace": self.namespace,
            "dest_commit": self.dest_commit,
            "dest_generation": self.dest_generation,
            "source_generation": self.source_generation,
            "tokens": list(self.tokens),
            "metarange": self.metarange,
        }

    @classmethod
    def from_json(cls, data: Json) -> MergeFixed:
        metarange = data.get("metarange")
        return cls(
            str(data["namespace"]),
            str(data["dest_commit"]),
            int(data["dest_generation"]),
            int(data["source_generation"]),
            tuple(str(t) for t in data["tokens"]),
            None if metarange is None else str(metarange),
        )


@dataclass(frozen=True, slots=True)
class MergePlan:
    """The fixed points, the slices to merge, and the size: the entries of the source's and the destination's
    ranges that the merge base does not share (what decides between inline and the workflow)."""

    fixed: MergeFixed
    slices: tuple[MergeSliceSpec, ...]
    size: int

    def to_json(self) -> Json:
        return {"fixed": self.fixed.to_json(), "slices": [s.to_json() for s in self.slices], "size": self.size}

    @classmethod
    def from_json(cls, data: Json) -> MergePlan:
        return cls(
            MergeFixed.from_json(data["fixed"]),
            tuple(MergeSliceSpec.from_json(s) for s in data["slices"]),
            int(data.get("size") or 0),
        )


__all__ = ["MergeFixed", "MergePlan", "MergeSliceSpec"]
