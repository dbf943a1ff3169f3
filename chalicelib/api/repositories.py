"""Repositories: GET|POST /repositories, GET|DELETE /repositories/{repository}.

POST checks what lakeFS checks, in lakeFS's order: a name already taken is a 409 before anything else (the
client's ``create(exist_ok=True)`` relies on it), then the storage id (Lakelet has one store, id ""). With
``sample_data`` the new repository gets the sample dataset, committed (chalicelib/samples).
"""

from __future__ import annotations

from chalice import Blueprint, Response

from chalicelib.graveler import errors

from . import names, serializers
from .endpoint import current_user, json_response, no_content, route, services
from .params import JsonBody, Query

bp = Blueprint(__name__)


@route(bp, "/repositories", ["GET"])
def list_repositories() -> Response:
    q = Query(bp.current_request.query_params)
    amount = q.amount()
    page = services().engine.repositories.list_repositories(
        q.string("prefix"), q.string("after"), amount, q.string("search")
    )
    return json_response(serializers.listing(page, serializers.repository))


@route(bp, "/repositories", ["POST"])
def create_repository() -> Response:
    body = JsonBody.parse(bp.current_request.raw_body)
    engine = services().engine
    name = body.required_string("name")
    engine.repositories.refuse_existing_repository(name)
    storage_id = body.string("storage_id")
    if storage_id not in (None, serializers.SINGLE_STORAGE_ID):
        raise errors.Invalid(f'unknown storage_id {storage_id!r}: this server has a single store, id ""')
    if Query(bp.current_request.query_params).boolean("bare"):
        # lakeFS's plumbing for refs-restore: the record only, no commit, no branch, the namespace unclaimed.
        bare = engine.repositories.create_bare_repository(
            name,
            body.required_string("storage_namespace"),
            body.string("default_branch") or "main",
            body.boolean("read_only"),
        )
        return json_response(serializers.repository(bare), 201)
    sample_data = body.boolean("sample_data")
    if sample_data and body.boolean("read_only"):
        raise errors.Invalid("sample data cannot be written into a read-only repository")
    repo = engine.repositories.create_repository(
        name,
        body.required_string("storage_namespace"),
        body.string("default_branch") or "main",
        body.boolean("read_only"),
    )
    if sample_data:
        # Imported here: the sample dataset's modules are a cold start's cost for a request few make.
        from chalicelib import samples

        samples.populate(engine, repo, current_user().id)
    return json_response(serializers.repository(repo), 201)


@route(bp, "/repositories/{repository}", ["GET"])
def get_repository(repository: str) -> Response:
    return json_response(
        serializers.repository(services().engine.repositories.get_repository(names.repository(repository)))
    )


@route(bp, "/repositories/{repository}", ["DELETE"])
def delete_repository(repository: str) -> Response:
    force = Query(bp.current_request.query_params).boolean("force")
    services().engine.repositories.delete_repository(names.repository(repository), force)
    return no_content()
