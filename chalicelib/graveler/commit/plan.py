"""What the commit's steps hand each other, as frozen records with their JSON form (plan_json.py, the one codec:
the workflow state carries them between Lambdas): the seal's token, the plan (the state machine reads ``done``
and ``slices``), each built slice, and the finish (the state machine reads ``status``)."""

from __future__ import annotations

from dataclasses import dataclass

from ..runs.plan_json import JsonRecord

# A finish's status: the branch moved to the commit; the branch left the planned state (plan again); or a retried
# plan found this request's own commit on the branch already (the state machine's CommittedElsewhere).
COMMITTED = "committed"
REPLAN = "replan"
DONE_ELSEWHERE = "committed-elsewhere"


@dataclass(frozen=True, slots=True)
class Sealed(JsonRecord):
    """What ``seal`` hands on: the token this request sealed ("" when a retry finds it committed already), and the
    run of the pre-commit hooks that judged it ("" when none ran), which gets the commit's id once it lands."""

    sealed_token: str
    pre_run_id: str = ""


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


@dataclass(frozen=True, slots=True)
class BuiltSlice(JsonRecord):
    """A built slice: its ranges as a metarange of their own (a few bytes in the workflow state however many
    ranges the slice has) and the changes it applied."""

    metarange: str
    added: int
    changed: int
    removed: int

    @property
    def changes(self) -> int:
        return self.added + self.changed + self.removed


@dataclass(frozen=True, slots=True)
class Finish(JsonRecord):
    """What ``finish`` answers (a commit's or a merge's): COMMITTED with the commit and the sealed tokens it
    released (also on a retry after the swap), or REPLAN with nothing else when the branch moved meanwhile."""

    status: str
    commit_id: str = ""
    tokens: tuple[str, ...] = ()


__all__ = [
    "COMMITTED",
    "DONE_ELSEWHERE",
    "REPLAN",
    "BuiltSlice",
    "CommitBase",
    "CommitPlan",
    "Finish",
    "Sealed",
    "SliceSpec",
]
