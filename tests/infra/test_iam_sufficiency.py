"""IAM is sufficient: every AWS call each deployed function makes in its everyday flows (recorded on moto, in
process, tests/infra/iam_exercise.py) is allowed by that function's role in the template, and docs/deploy.md's
table is the recording's."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from infra import access, build, iam_report
from infra.iam_calls import Call, Needed
from infra.iam_eval import Statement
from tests.infra import iam_exercise
from tests.infra.conftest import Package

pytestmark = pytest.mark.aws

# The functions the flows reach; import_fail (a failed import), merge_build_slice (a merge with slices) and dump_fail
# (a failed dump) are the workflow tasks they do not.
EXERCISED = {
    "api_handler",
    "s3_gateway",
    "collect_garbage",
    "drop_retired",
    "commit_seal",
    "commit_plan",
    "commit_build_slice",
    "commit_finish",
    "commit_landed",
    "merge_plan",
    "merge_finish",
    "merge_landed",
    "import_plan",
    "import_build_slice",
    "import_commit",
    "import_merge",
    "dump_run",
    "dump_finish",
    "restore_check",
    "restore_commits",
    "restore_refs",
    "restore_rollback",
}


@pytest.fixture(scope="module")
def recorded() -> tuple[list[iam_report.Row], list[iam_report.Denial], list[Any], list[str]]:
    return iam_exercise.checked()


def test_every_call_of_every_function_is_allowed_by_its_role(recorded: Any) -> None:
    _rows, denials, _calls, unmapped = recorded
    assert unmapped == [], "operations with no IAM mapping in infra/iam_calls.py"
    assert [str(d) for d in denials] == []


def test_the_flows_reach_every_function_and_service(recorded: Any) -> None:
    _rows, _denials, calls, _unmapped = recorded
    assert {call.function for call in calls} == EXERCISED
    actions = {need.action for call in calls for need in call.needs}
    for action in (
        "dynamodb:ConditionCheckItem",  # inside a TransactWriteItems
        "s3:ListBucket",
        "s3:AbortMultipartUpload",
        "s3:ListMultipartUploadParts",
        "kms:Encrypt",
        "kms:Decrypt",
        "states:StartExecution",
        "states:DescribeExecution",
        "emr-serverless:StartJobRun",
        "iam:PassRole",
        "lambda:InvokeFunction",
    ):
        assert action in actions


def test_the_page_shows_the_recorded_table(recorded: Any) -> None:
    rows, _denials, _calls, _unmapped = recorded
    page = (build.PROJECT_DIR / "docs" / "deploy.md").read_text()
    assert iam_report.doc_table(page) == iam_report.markdown(rows), (
        "docs/deploy.md's IAM table is stale: python -m tests.infra.iam_exercise --write-doc"
    )


def test_a_missing_permission_is_named(recorded: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # import_plan writes the import's slice manifests under _lakefs/imports/: with read-only data access (what the
    # template granted before this check existed), the check names that call and what is missing.
    _rows, _denials, calls, _unmapped = recorded
    reduced = dataclasses.replace(access.FUNCTION_ACCESS["import_plan"], data=access.Data.READ)
    monkeypatch.setitem(access.FUNCTION_ACCESS, "import_plan", reduced)
    app = build.read_app(build.PROJECT_DIR, iam_exercise.STAGE)
    roles = {f.name: f.role_logical_id for f in app.functions}
    template = build.build(app, build.PROJECT_DIR / "stepfunctions")
    world = _world(calls)
    statements = iam_report.function_statements(template, roles, world, iam_report.chalice_policy())
    _, denials = iam_report.verdicts(calls, statements, roles)
    assert denials and {(d.function, d.needed.action, d.operation) for d in denials} == {
        ("import_plan", "s3:PutObject", "s3.PutObject")
    }
    message = str(denials[0])
    assert "ImportPlanRole" in message and "/_lakefs/imports/" in message and "missing: a statement" in message


def _world(calls: list[Any]) -> Any:
    key = next(n.resource for c in calls for n in c.needs if n.action.startswith("kms:"))
    application = next(n.resource for c in calls for n in c.needs if n.action == "emr-serverless:StartJobRun")
    return iam_exercise.deployment({"key_arn": key, "application_id": application.rsplit("/", 1)[-1]})


def test_the_packaged_template_gives_the_same_verdicts(recorded: Any, package: Package) -> None:
    # The check above reads infra/build.py's template plus chalice's policy file; the packaged template (the
    # roles chalice package writes, merged) must grant the same.
    rows, _denials, calls, _unmapped = recorded
    app = build.read_app(build.PROJECT_DIR, iam_exercise.STAGE)
    roles = {f.name: f.role_logical_id for f in app.functions}
    statements = iam_report.function_statements(package.template(), roles, _world(calls), None)
    packaged_rows, denials = iam_report.verdicts(calls, statements, roles)
    assert [str(d) for d in denials] == []
    assert packaged_rows == rows


def test_a_deny_statement_wins() -> None:
    statements = [
        Statement("A", "Allow", {"Action": ["s3:GetObject"], "Resource": ["arn:aws:s3:::b/*"]}, {}),
        Statement("D", "Deny", {"Action": "s3:*", "Resource": "arn:aws:s3:::b/secret/*"}, {}),
    ]
    calls = [Call("f", "s3.GetObject", (Needed("s3:GetObject", "arn:aws:s3:::b/secret/x"),))]
    rows, denials = iam_report.verdicts(calls, {"f": statements}, {"f": "FRole"})
    assert rows == [] and "denied by D" in str(denials[0])
