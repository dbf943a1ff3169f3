"""Branches: GET|POST /repositories/{repository}/branches, GET|DELETE .../branches/{branch}."""

from __future__ import annotations

from chalice import Blueprint, Response

from . import names, serializers
from .endpoint import json_response, no_content, route, services
from .params import JsonBody, Query

bp = Blueprint(__name__)


@route(bp, "/repositories/{repository}/branches", ["GET"])
def list_branches(repository: str) -> Response:
    q = Query(bp.current_request.query_params)
    amount = q.amount()
    page = services().graveler.list_branches(names.repository(repository), q.str("prefix"), q.str("after"), amount)
    return json_response(serializers.listing(page, amount, serializers.ref))


@route(bp, "/repositories/{repository}/branches", ["POST"])
def create_branch(repository: str) -> Response:
    body = JsonBody.parse(bp.current_request.raw_body)
    branch = services().graveler.create_branch(
        names.repository(repository), body.required_str("name"), names.ref(body.required_str("source"))
    )
    # lakeFS answers with the new branch's commit id as a bare text body.
    return Response(body=branch.commit_id.encode(), status_code=201, headers={"Content-Type": "text/html"})


@route(bp, "/repositories/{repository}/branches/{branch}", ["GET"])
def get_branch(repository: str, branch: str) -> Response:
    found = services().graveler.get_branch(names.repository(repository), names.branch(branch))
    return json_response(serializers.ref(found))


@route(bp, "/repositories/{repository}/branches/{branch}", ["DELETE"])
def delete_branch(repository: str, branch: str) -> Response:
    services().graveler.delete_branch(names.repository(repository), names.branch(branch))
    return no_content()
