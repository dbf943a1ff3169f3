"""The commit's plan: what ``plan`` decided and every later step reads, as frozen records with their JSON form
(the workflow state carries them between Lambdas; the state machine reads ``done`` and ``slices``)."""

from __future__ import annotations

from dataclasses import dataclass

from ..plan_json import JsonRecord


@dataclass(frozen=True, slots=True)
class SliceSpec(JsonRecord):
    """One slice of the key space, [lo, hi) (hi None: to the end), built on its own from the base metarange and
    the sealed tokens. It is a Map item of the workflow, so it holds bounds, ids and tokens only."""

    namespace: str
    base_metarange: str
    tokens: tuple[str, ...]
    lo: str
    hi: str | None
    # The repository's range format: 1 when absent, as in the state of an execution started before formats.
    range_format: int = 1


@dataclass(frozen=True, slots=True)
class CommitBase(JsonRecord):
    """The sealed state the commit is planned on: the head it builds on and the tokens it commits."""

    commit_id: str
    generation: int
    staging_token: str
    tokens: tuple[str, ...]
    namespace: str
    range_format: int = 1


@dataclass(frozen=True, slots=True)
class CommitPlan(JsonRecord):
    """The slices to build on ``base``; or ``done`` when this request's own finish committed the sealed token
    already (a retry after a crash): then ``head`` is that commit. A token a racing commit took is no plan: the
    plan step raises NoChanges."""

    done: bool
    base: CommitBase | None = None
    slices: tuple[SliceSpec, ...] = ()
    head: str = ""


__all__ = ["CommitBase", "CommitPlan", "SliceSpec"]
