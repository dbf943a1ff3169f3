"""The commit's plan: what ``plan`` decided and every later step reads, as frozen records with their JSON form
(the workflow state carries them between Lambdas; the state machine reads ``done`` and ``slices``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

Json = dict[str, Any]


@dataclass(frozen=True, slots=True)
class SliceSpec:
    """One slice of the key space, [lo, hi) (hi None: to the end), built on its own from the base metarange and
    the sealed tokens. It is a Map item of the workflow, so it holds bounds, ids and tokens only."""

    namespace: str
    base_metarange: str
    tokens: tuple[str, ...]
    lo: str
    hi: str | None

    def to_json(self) -> Json:
        return {
            "namespace": self.namespace,
            "base_metarange": self.base_metarange,
            "tokens": list(self.tokens),
            "lo": self.lo,
            "hi": self.hi,
        }

    @classmethod
    def from_json(cls, data: Json) -> SliceSpec:
        hi = data.get("hi")
        return cls(
            str(data["namespace"]),
            str(data["base_metarange"]),
            tuple(str(t) for t in data["tokens"]),
            str(data["lo"]),
            None if hi is None else str(hi),
        )


@dataclass(frozen=True, slots=True)
class CommitBase:
    """The sealed state the commit is planned on: the head it builds on and the tokens it commits."""

    commit_id: str
    generation: int
    staging_token: str
    tokens: tuple[str, ...]
    namespace: str

    def to_json(self) -> Json:
        return {
            "commit_id": self.commit_id,
            "generation": self.generation,
            "staging_token": self.staging_token,
            "tokens": list(self.tokens),
            "namespace": self.namespace,
        }

    @classmethod
    def from_json(cls, data: Json) -> CommitBase:
        return cls(
            str(data["commit_id"]),
            int(data["generation"]),
            str(data["staging_token"]),
            tuple(str(t) for t in data["tokens"]),
            str(data["namespace"]),
        )


@dataclass(frozen=True, slots=True)
class CommitPlan:
    """The slices to build on ``base``; or ``done`` when the sealed token was already committed (by a racing
    commit, or by this request's own finish before a crash): then ``head`` is the branch head that holds it."""

    done: bool
    base: CommitBase | None = None
    slices: tuple[SliceSpec, ...] = ()
    head: str = ""

    def to_json(self) -> Json:
        if self.done:
            return {"done": True, "head": self.head, "slices": []}
        assert self.base is not None
        return {"done": False, "base": self.base.to_json(), "slices": [s.to_json() for s in self.slices]}

    @classmethod
    def from_json(cls, data: Json) -> CommitPlan:
        if data.get("done"):
            return cls(True, head=str(data.get("head") or ""))
        return cls(False, CommitBase.from_json(data["base"]), tuple(SliceSpec.from_json(s) for s in data["slices"]))


__all__ = ["CommitBase", "CommitPlan", "SliceSpec"]
