"""The IAM sufficiency check's verdicts and its table: each recorded AWS call (infra/iam_calls.py) against its
function's role in the template (infra/iam_eval.py), and the table docs/deploy.md shows (function, action,
resource as the template grants it, the statement's Sid), between two marker lines.

The table is written by ``python -m tests.infra.iam_exercise --write-doc`` (it records the calls);
tests/infra/test_iam_sufficiency.py checks that the page's table is the one the recording gives.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from chalicelib.graveler.runs.plan_json import Json

from . import build
from .iam_calls import Call, Needed
from .iam_eval import Deployment, Statement, evaluate, role_statements

BEGIN = "<!-- iam-table: begin (python -m tests.infra.iam_exercise --write-doc) -->"
END = "<!-- iam-table: end -->"
CHALICE_POLICY = build.PROJECT_DIR / ".chalice" / "policy-xray.json"


@dataclass(frozen=True, slots=True, order=True)
class Row:
    function: str
    action: str
    resource: str
    sid: str


@dataclass(frozen=True, slots=True)
class Denial:
    function: str
    operation: str
    needed: Needed
    role: str
    why: str

    def __str__(self) -> str:
        context = "".join(f" with {k}={v!r}" for k, v in self.needed.context)
        return (
            f"{self.function} ({self.role}): {self.operation} needs {self.needed.action} on "
            f"{self.needed.resource}{context}: {self.why}"
        )


def function_statements(
    template: Json, roles: Mapping[str, str], deployment: Deployment, chalice_policy: Json | None
) -> dict[str, list[Statement]]:
    """Each function's statements: what its role gets in ``template`` (plus chalice's policy file, when the
    template is infra/build.py's merge template rather than the packaged one, which holds that role already)."""
    extra = [chalice_policy] if chalice_policy is not None else []
    return {function: role_statements(template, role, deployment, extra) for function, role in roles.items()}


def _why(statements: list[Statement], needed: Needed) -> str:
    with_action = sorted(
        {s.sid or "(no Sid)" for s in statements if s.effect == "Allow" and s.grants_action(needed.action)}
    )
    if with_action:
        return (
            f"missing: a statement allowing it on this resource (statements with {needed.action}: "
            f"{', '.join(with_action)}, on other resources or under conditions that do not hold)"
        )
    return f"missing: a statement allowing {needed.action} (no statement of the role has the action)"


def verdicts(
    calls: Iterable[Call], statements: Mapping[str, list[Statement]], roles: Mapping[str, str]
) -> tuple[list[Row], list[Denial]]:
    """(the allowed rows, deduplicated and sorted; every denial, once per function, action and resource)."""
    rows: set[Row] = set()
    denials: dict[tuple[str, Needed], Denial] = {}
    for call in calls:
        for needed in call.needs:
            decision = evaluate(statements[call.function], needed)
            if decision.allowed:
                rows.add(Row(call.function, needed.action, decision.resource, decision.sid))
            else:
                why = (
                    f"denied by {decision.denied_by}" if decision.denied_by else _why(statements[call.function], needed)
                )
                denials.setdefault(
                    (call.function, needed), Denial(call.function, call.operation, needed, roles[call.function], why)
                )
    return sorted(rows), list(denials.values())


def markdown(rows: list[Row]) -> str:
    lines = ["| Function | Action | Resource (as the template grants it) | Statement |", "|---|---|---|---|"]
    for row in rows:
        lines.append(f"| `{row.function}` | `{row.action}` | `{row.resource}` | {row.sid} |")
    return "\n".join(lines)


def doc_table(text: str) -> str:
    """The table between the markers of a page."""
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    return text[start:end].strip()


def write_doc(path: Path, rows: list[Row]) -> None:
    text = path.read_text()
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    path.write_text(text[:start] + "\n" + markdown(rows) + "\n" + text[end:])


def chalice_policy() -> Json:
    return dict(json.loads(CHALICE_POLICY.read_text()))
