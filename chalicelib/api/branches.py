"""Branches: GET|POST /repositories/{repository}/branches, GET|DELETE .../branches/{branch}, and the branch
operations: PUT .../branches/{branch} (reset), PUT .../hard_reset, POST .../revert, POST .../cherry-pick."""

from __future__ import annotations

from chalice import Blueprint, Response

from chalicelib.graveler.errors import MergeConflicts

from . import names, serializers
from .diff_merge import conflict_response
from .endpoint import current_user, json_response, no_content, page_response, route, services
from .params import JsonBody, Query

bp = Blueprint(__name__)


@route(bp, "/repositories/{repository}/branches", ["GET"])
def list_branches(repository: str) -> Response:
    q = Query(bp.current_request.query_params)
    amount = q.amount()
    page = services().engine.branches.list_branches(
        names.repository(repository), q.string("prefix"), q.string("after"), amount, q.boolean("show_hidden")
    )
    return page_response(serializers.listing(page, serializers.ref))


@route(bp, "/repositories/{repository}/branches", ["POST"])
def create_branch(repository: str) -> Response:
    body = JsonBody.parse(bp.current_request.raw_body)
    branch = services().engine.branches.create_branch(
        names.repository(repository),
        body.required_string("name"),
        names.ref(body.required_string("source")),
        body.boolean("hidden"),
        body.boolean("force"),
    )
    # lakeFS answers with the new branch's commit id as a bare text body.
    return Response(body=branch.commit_id.encode(), status_code=201, headers={"Content-Type": "text/html"})


@route(bp, "/repositories/{repository}/branches/{branch}", ["GET"])
def get_branch(repository: str, branch: str) -> Response:
    found = services().engine.branches.get_branch(names.repository(repository), names.branch(branch))
    return json_response(serializers.ref(found))


@route(bp, "/repositories/{repository}/branches/{branch}", ["DELETE"])
def delete_branch(repository: str, branch: str) -> Response:
    force = Query(bp.current_request.query_params).boolean("force")
    services().engine.branches.delete_branch(names.repository(repository), names.branch(branch), force)
    return no_content()


# ---- branch operations: reset, hard reset, revert, cherry-pick -------------------------------------------------


@route(bp, "/repositories/{repository}/branches/{branch}", ["PUT"])
def reset_branch(repository: str, branch: str) -> Response:
    """ResetCreation {type: reset | object | common_prefix, path, force}: drops uncommitted changes."""
    body = JsonBody.parse(bp.current_request.raw_body)
    services().engine.rewrites.reset_branch(
        names.repository(repository),
        names.branch(branch),
        body.required_string("type"),
        body.string("path"),
        body.boolean("force"),
    )
    return no_content()


@route(bp, "/repositories/{repository}/branches/{branch}/hard_reset", ["PUT"])
def hard_reset_branch(repository: str, branch: str) -> Response:
    q = Query(bp.current_request.query_params)
    services().engine.rewrites.hard_reset(
        names.repository(repository), names.branch(branch), names.ref(q.required_string("ref")), q.boolean("force")
    )
    return no_content()


@route(bp, "/repositories/{repository}/branches/{branch}/revert", ["POST"])
def revert_branch(repository: str, branch: str) -> Response:
    """RevertCreation {ref, parent_number, commit_overrides {message, metadata}, force, allow_empty}."""
    request = bp.current_request
    body = JsonBody.parse(request.raw_body)
    overrides = body.nested("commit_overrides") or JsonBody({})
    try:
        services().engine.rewrites.revert(
            names.repository(repository),
            names.branch(branch),
            names.ref(body.required_string("ref")),
            current_user().id,
            body.integer("parent_number") or 0,
            overrides.string("message"),
            overrides.str_map("metadata") or None,
            body.boolean("allow_empty"),
            body.boolean("force"),
        )
    except MergeConflicts as e:
        return conflict_response(e, Query(request.query_params).amount())
    return no_content()


@route(bp, "/repositories/{repository}/branches/{branch}/cherry-pick", ["POST"])
def cherry_pick(repository: str, branch: str) -> Response:
    """CherryPickCreation {ref, parent_number, commit_overrides {message, metadata}, force}: 201 with the Commit."""
    request = bp.current_request
    body = JsonBody.parse(request.raw_body)
    overrides = body.nested("commit_overrides") or JsonBody({})
    try:
        commit = services().engine.rewrites.cherry_pick(
            names.repository(repository),
            names.branch(branch),
            names.ref(body.required_string("ref")),
            current_user().id,
            body.integer("parent_number"),
            overrides.string("message"),
            overrides.str_map("metadata") or None,
            body.boolean("force"),
        )
    except MergeConflicts as e:
        return conflict_response(e, Query(request.query_params).amount())
    return json_response(serializers.commit(commit), 201)
