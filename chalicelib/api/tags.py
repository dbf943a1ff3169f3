"""Tags: GET|POST /repositories/{repository}/tags, GET|DELETE .../tags/{tag}."""

from __future__ import annotations

from chalice import Blueprint, Response

from . import names, serializers
from .endpoint import json_response, no_content, route, services
from .params import JsonBody, Query

bp = Blueprint(__name__)


@route(bp, "/repositories/{repository}/tags", ["GET"])
def list_tags(repository: str) -> Response:
    q = Query(bp.current_request.query_params)
    amount = q.amount()
    page = services().engine.branches.list_tags(
        names.repository(repository), q.string("prefix"), q.string("after"), amount
    )
    return json_response(serializers.listing(page, serializers.ref))


@route(bp, "/repositories/{repository}/tags", ["POST"])
def create_tag(repository: str) -> Response:
    body = JsonBody.parse(bp.current_request.raw_body)
    # force writes into a read-only repository, as lakeFS's; an existing tag stays a 409 (tags are immutable).
    tag = services().engine.branches.create_tag(
        names.repository(repository),
        body.required_string("id"),
        names.ref(body.required_string("ref")),
        body.boolean("force"),
    )
    return json_response(serializers.ref(tag), 201)


@route(bp, "/repositories/{repository}/tags/{tag}", ["GET"])
def get_tag(repository: str, tag: str) -> Response:
    return json_response(
        serializers.ref(services().engine.branches.get_tag(names.repository(repository), names.tag(tag)))
    )


@route(bp, "/repositories/{repository}/tags/{tag}", ["DELETE"])
def delete_tag(repository: str, tag: str) -> Response:
    force = Query(bp.current_request.query_params).boolean("force")
    services().engine.branches.delete_tag(names.repository(repository), names.tag(tag), force)
    return no_content()
