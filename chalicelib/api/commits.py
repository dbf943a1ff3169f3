"""Commits and history: POST .../branches/{branch}/commits (and lakeFS's commits/async and commits/status),
GET .../commits/{commitId}, GET .../refs/{ref}/commits."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from chalice import Blueprint, Response
from chalice.app import MultiDict

from chalicelib.graveler import errors
from chalicelib.graveler.records import Commit
from chalicelib.graveler.runs.workflow_runner import inline_task_id
from chalicelib.graveler.usecases.commit_records import CommitRecord

from . import names, serializers, tasks
from .endpoint import URL_PREFIX, current_user, json_response, page_response, route, services
from .params import JsonBody, Query

bp = Blueprint(__name__)

_ZONE_AS_SPACE = re.compile(r" (\d{2}:?\d{2})$")


# A commit's ``date`` (Unix seconds) must be a calendar date: 1970-01-01 to 9999-12-31 (10^40 used to be a 500).
MAX_COMMIT_DATE = 253_402_300_799

COMMITS = "/repositories/{repository}/branches/{branch}/commits"


def _commit(repository: str, branch: str, wait_seconds: float) -> Commit:
    """engine.commits.commit with the request's body. Raises StillRunning when the workflow outlives the wait."""
    body = JsonBody.parse(bp.current_request.raw_body)
    return services().engine.commits.commit(
        names.repository(repository),
        names.branch(branch),
        current_user().id,
        body.required_string("message"),
        body.str_map("metadata"),
        body.integer("date", minimum=0, maximum=MAX_COMMIT_DATE),
        body.boolean("allow_empty"),
        force=body.boolean("force"),
        wait_seconds=wait_seconds,
    )


def _status_url(repository: str, branch: str, task_id: str) -> str:
    return f"{URL_PREFIX}/repositories/{repository}/branches/{branch}/commits/status?id={task_id}"


@route(bp, COMMITS, ["POST"])
def commit(repository: str, branch: str) -> Response:
    """Inline, or as the commit workflow above the size threshold: waits for it within API Gateway's limit and
    answers 202 with the task id (as .../commits/async does) if it goes on past that."""
    try:
        found = _commit(repository, branch, services().settings.workflow_wait_seconds)
    except errors.StillRunning as running:
        return tasks.accepted(running.task_id, _status_url(repository, branch, running.task_id))
    return json_response(serializers.commit(found), 201)


@route(bp, COMMITS + "/async", ["POST"])
def commit_async(repository: str, branch: str) -> Response:
    """lakeFS's commitAsync: 202 TaskCreation; small commits have completed by then."""
    try:
        task_id = inline_task_id(_commit(repository, branch, 0).id, names.branch(branch))
    except errors.StillRunning as running:
        task_id = running.task_id
    return json_response({"id": task_id}, 202)


@route(bp, COMMITS + "/status", ["GET"])
def commit_async_status(repository: str, branch: str) -> Response:
    """lakeFS's commitAsyncStatus: CommitAsyncStatus."""
    task_id = Query(bp.current_request.query_params).required_string("id")
    status = services().engine.commits.commit_status(names.repository(repository), names.branch(branch), task_id)
    return json_response(tasks.status_body(status, serializers.commit))


@route(bp, "/repositories/{repository}/commits/{commitId}", ["GET"])
def get_commit(repository: str, commitId: str) -> Response:
    found = services().engine.commits.get_commit(names.repository(repository), names.ref(commitId))
    return json_response(serializers.commit(found))


@route(bp, "/repositories/{repository}/refs/{ref}/commits", ["GET"])
def log_commits(repository: str, ref: str) -> Response:
    """The log, with lakeFS's filters: objects and prefixes (repeated parameters), limit, since (a date-time),
    stop_at (a ref) and first_parent."""
    params = bp.current_request.query_params
    q = Query(params)
    amount = q.amount()
    page = services().engine.history.log(
        names.repository(repository),
        names.ref(ref),
        q.string("after"),
        amount,
        objects=_repeated(params, "objects"),
        prefixes=_repeated(params, "prefixes"),
        since=_date_time(q.string("since")),
        stop_at=names.ref(q.string("stop_at")) if q.string("stop_at") else None,
        limit=q.boolean("limit"),
        first_parent=q.boolean("first_parent"),
    )
    return page_response(serializers.listing(page, serializers.commit))


def _repeated(params: MultiDict | None, name: str) -> list[str]:
    """Every value of a repeated query parameter (the official client sends lists as name=a&name=b)."""
    return [v for v in params.getlist(name) if v] if params is not None and name in params else []


def _date_time(value: str) -> int | None:
    """Unix seconds of an ISO 8601 date-time (UTC when it names no zone), or of a plain number of seconds."""
    if not value:
        return None
    if value.isdigit():
        return int(value)
    try:
        # A "+" of the zone offset arrives as a space when the client did not percent-encode it.
        parsed = datetime.fromisoformat(_ZONE_AS_SPACE.sub(r"+\1", value.strip()))
    except ValueError:
        raise errors.Invalid(f"query parameter since must be a date-time, got {value!r}") from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return int(parsed.timestamp())


@route(bp, "/repositories/{repository}/commits", ["POST"])
def create_commit_record(repository: str) -> Response:
    """lakeFS's CreateCommitRecord (CommitRecordCreation): a commit record stored as given; 204."""
    body = JsonBody.parse(bp.current_request.raw_body)
    parents = body.str_list("parents")
    record = CommitRecord(
        commit_id=body.required_string("commit_id"),
        version=_required_integer(body, "version", 0, 1),
        committer=_string_field(body, "committer"),
        message=_string_field(body, "message"),
        metarange_id=_string_field(body, "metarange_id"),
        creation_date=_required_integer(body, "creation_date"),
        parents=tuple(parents),
        generation=_required_integer(body, "generation"),
        metadata=body.str_map("metadata"),
    )
    services().engine.commits.create_commit_record(names.repository(repository), record, body.boolean("force"))
    return Response(body=b"", status_code=204, headers={})


def _string_field(body: JsonBody, name: str) -> str:
    # Required, and may be empty: the first commit has no committer and no metarange.
    value = body.string(name, required=True)
    assert value is not None
    return value


def _required_integer(body: JsonBody, name: str, minimum: int | None = None, maximum: int | None = None) -> int:
    value = body.integer(name, minimum, maximum)
    if value is None:
        raise errors.Invalid(f"field {name} is required")
    return value
