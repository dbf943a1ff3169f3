"""Repositories: GET|POST /repositories, GET|DELETE /repositories/{repository}."""

from __future__ import annotations

from chalice import Blueprint, Response

from chalicelib.graveler import errors

from . import names, serializers
from .endpoint import json_response, no_content, route, services
from .params import JsonBody, Query

bp = Blueprint(__name__)


@route(bp, "/repositories", ["GET"])
def list_repositories() -> Response:
    q = Query(bp.current_request.query_params)
    amount = q.amount()
    page = services().graveler.list_repositories(q.str("prefix"), q.str("after"), amount)
    return json_response(serializers.listing(page, amount, serializers.repository))


@route(bp, "/repositories", ["POST"])
def create_repository() -> Response:
    body = JsonBody.parse(bp.current_request.raw_body)
    if Query(bp.current_request.query_params).bool("bare") or body.bool("sample_data"):
        raise errors.Invalid("bare repositories and sample data are not supported")
    repo = services().graveler.create_repository(
        body.required_str("name"),
        body.required_str("storage_namespace"),
        body.str("default_branch") or "main",
        body.bool("read_only"),
    )
    return json_response(serializers.repository(repo), 201)


@route(bp, "/repositories/{repository}", ["GET"])
def get_repository(repository: str) -> Response:
    return json_response(serializers.repository(services().graveler.get_repository(names.repository(repository))))


@route(bp, "/repositories/{repository}", ["DELETE"])
def delete_repository(repository: str) -> Response:
    services().graveler.delete_repository(names.repository(repository))
    return no_content()
