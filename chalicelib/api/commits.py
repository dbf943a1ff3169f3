"""Commits and history: POST .../branches/{branch}/commits, GET .../commits/{commitId}, GET .../refs/{ref}/commits."""

from __future__ import annotations

from chalice import Blueprint, Response

from chalicelib.graveler import errors

from . import names, serializers
from .endpoint import current_user, json_response, route, services
from .params import JsonBody, Query

bp = Blueprint(__name__)

# Log filters lakeFS offers that Lakelet does not: refusing them beats answering an unfiltered history.
_UNSUPPORTED_LOG_FILTERS = ("objects", "prefixes", "since", "stop_at")


@route(bp, "/repositories/{repository}/branches/{branch}/commits", ["POST"])
def commit(repository: str, branch: str) -> Response:
    body = JsonBody.parse(bp.current_request.raw_body)
    created = services().graveler.commit(
        names.repository(repository),
        names.branch(branch),
        current_user().id,
        body.required_str("message"),
        body.str_map("metadata"),
        body.int("date"),
        body.bool("allow_empty"),
    )
    return json_response(serializers.commit(created), 201)


@route(bp, "/repositories/{repository}/commits/{commitId}", ["GET"])
def get_commit(repository: str, commitId: str) -> Response:  # noqa: N803 (the name is the path parameter's)
    found = services().graveler.get_commit(names.repository(repository), names.ref(commitId))
    return json_response(serializers.commit(found))


@route(bp, "/repositories/{repository}/refs/{ref}/commits", ["GET"])
def log_commits(repository: str, ref: str) -> Response:
    q = Query(bp.current_request.query_params)
    used = [name for name in _UNSUPPORTED_LOG_FILTERS if q.str(name)]
    if used or not q.bool("first_parent", True):
        raise errors.Invalid(f"log filters are not supported: {', '.join(used) or 'first_parent=false'}")
    amount = q.amount()
    page = services().graveler.log(names.repository(repository), names.ref(ref), q.str("after"), amount)
    return json_response(serializers.listing(page, amount, serializers.commit))
