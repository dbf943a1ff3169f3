"""Uncommitted changes of a branch: GET /repositories/{repository}/branches/{branch}/diff."""

from __future__ import annotations

from chalice import Blueprint, Response

from . import names, serializers
from .endpoint import page_response, route, services
from .params import Query

bp = Blueprint(__name__)


@route(bp, "/repositories/{repository}/branches/{branch}/diff", ["GET"])
def diff_branch(repository: str, branch: str) -> Response:
    q = Query(bp.current_request.query_params)
    amount = q.amount()
    page = services().engine.history.diff_uncommitted(
        names.repository(repository),
        names.branch(branch),
        q.string("prefix"),
        q.string("delimiter"),
        q.string("after"),
        amount,
    )
    return page_response(serializers.listing(page, serializers.diff))
