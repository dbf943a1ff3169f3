"""Pull requests (lakeFS's pulls API): GET|POST /repositories/{repository}/pulls, GET|PATCH .../pulls/{id},
PUT .../pulls/{id}/merge. The use cases are graveler/usecases/pull_requests.py; a merge goes through the one merge
entry, so its 409 carries the conflicts as the merge route's does (diff_merge.conflict_response).

Extension: the merge's body may carry ``message``, ``metadata`` and ``strategy`` (lakeFS's takes no body and
merges with the defaults); an empty body merges as lakeFS does.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from chalice import Blueprint, Response

from chalicelib.auth.policies import Permission, branch_arn
from chalicelib.graveler import errors
from chalicelib.graveler.errors import MergeConflicts
from chalicelib.graveler.usecases.pull_requests import PullRequest, PullRequestUpdate

from . import names, serializers, tasks
from .diff_merge import conflict_response
from .endpoint import URL_PREFIX, current_user, json_response, no_content, route, services
from .params import JsonBody, Query

bp = Blueprint(__name__)

PULLS = "/repositories/{repository}/pulls"
PULL = PULLS + "/{pull_request}"


def _date(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat().replace("+00:00", "Z")


def pr_body(pr: PullRequest, *, listed: bool = False) -> dict[str, Any]:
    """lakeFS's PullRequest. A listing leaves the description out (lakeFS: reading one needs pr:ReadPullRequest,
    listing only pr:ListPullRequests), sent as "" since the schema requires the field, and merged_commit_id."""
    out: dict[str, Any] = {
        "id": pr.id,
        "status": pr.status.value,
        "title": pr.title,
        "description": "" if listed else pr.description,
        "author": pr.author,
        "source_branch": pr.source_branch,
        "destination_branch": pr.destination_branch,
        "creation_date": _date(pr.creation_date),
    }
    if pr.closed_date is not None:
        out["closed_date"] = _date(pr.closed_date)
    if pr.merged_commit_id is not None and not listed:
        out["merged_commit_id"] = pr.merged_commit_id
    return out


@route(bp, PULLS, ["GET"])
def list_pull_requests(repository: str) -> Response:
    q = Query(bp.current_request.query_params)
    amount = q.amount()
    page = services().engine.pulls.list(
        names.repository(repository), q.string("prefix"), q.string("after"), amount, q.string("status", "all")
    )
    return json_response(serializers.listing(page, lambda pr: pr_body(pr, listed=True)))


@route(bp, PULLS, ["POST"])
def create_pull_request(repository: str) -> Response:
    body = JsonBody.parse(bp.current_request.raw_body)
    pr = services().engine.pulls.create(
        names.repository(repository),
        body.required_string("title"),
        body.string("description") or "",
        body.required_string("source_branch"),
        body.required_string("destination_branch"),
        current_user().id,
    )
    return json_response({"id": pr.id}, 201)


@route(bp, PULL, ["GET"])
def get_pull_request(repository: str, pull_request: str) -> Response:
    pr = services().engine.pulls.get(names.repository(repository), pull_request)
    return json_response(pr_body(pr))


@route(bp, PULL, ["PATCH"])
def update_pull_request(repository: str, pull_request: str) -> Response:
    body = JsonBody.parse(bp.current_request.raw_body)
    change = PullRequestUpdate(body.string("title"), body.string("description"), body.string("status"))
    services().engine.pulls.update(names.repository(repository), pull_request, change)
    # lakeFS's controller answers 204 (its spec says 200; the clients take either).
    return no_content()


@route(bp, PULL + "/merge", ["PUT"])
def merge_pull_request(repository: str, pull_request: str) -> Response:
    raw = bp.current_request.raw_body
    body = JsonBody.parse(raw) if raw else JsonBody({})
    user = current_user()
    repo_id = names.repository(repository)

    def may_merge_into(destination: str) -> None:
        services().auth.authorize(user, [Permission("fs:CreateCommit", branch_arn(repo_id, destination))])

    try:
        merged = services().engine.pulls.merge(
            repo_id,
            pull_request,
            user.id,
            may_merge_into,
            body.string("message") or "",
            body.str_map("metadata"),
            body.string("strategy"),
        )
    except MergeConflicts as e:
        return conflict_response(e, Query(bp.current_request.query_params).amount())
    except errors.StillRunning as running:
        # The merge goes on as a workflow: the pull request stays open; the merge's status says how it ended.
        pr = services().engine.pulls.get(repo_id, pull_request)
        url = (
            f"{URL_PREFIX}/repositories/{repository}/refs/{pr.source_branch}/merge/{pr.destination_branch}"
            f"/status?id={running.task_id}"
        )
        return tasks.accepted(running.task_id, url)
    return json_response({"reference": merged.merged_commit_id})
