"""Garbage collection: GET|PUT|DELETE /repositories/{repository}/settings/gc_rules (also as GET|POST|DELETE
.../gc/rules, and GET .../gc/rules/set_allowed) and
POST /repositories/{repository}/gc/prepare_commits and .../gc/prepare_uncommited, in lakeFS's shapes
(GarbageCollectionRules, GarbageCollectionPrepareResponse, PrepareGCUncommittedResponse)."""

from __future__ import annotations

from typing import Any

from chalice import Blueprint, Response

from chalicelib.gc.prepare import PreparedRun, prepare, prepare_uncommitted
from chalicelib.gc.prepare_status import prepared_status
from chalicelib.gc.rules import (
    delete_rules,
    get_rules,
    rules_from_json,
    rules_to_json,
    set_rules,
)
from chalicelib.graveler import errors

from . import names
from .endpoint import json_response, no_content, route, services
from .params import JsonBody, Query

__all__ = ["bp"]

bp = Blueprint(__name__)

RULES = "/repositories/{repository}/settings/gc_rules"
# lakeFS's older, internal spelling of the same three operations (internalGet/Set/DeleteGarbageCollectionRules),
# which its controller serves by calling the ones above; set is a POST there.
INTERNAL_RULES = "/repositories/{repository}/gc/rules"


def prepare_response(prepared: PreparedRun, presigned_url: str | None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "run_id": prepared.run_id,
        "gc_commits_location": prepared.commits_location,
        "gc_addresses_location": prepared.addresses_location,
    }
    if presigned_url is not None:
        body["gc_commits_presigned_url"] = presigned_url
    return body


def _get_rules(repository: str) -> Response:
    return json_response(rules_to_json(get_rules(services().engine, names.repository(repository))))


def _set_rules(repository: str) -> Response:
    raw = bp.current_request.raw_body
    body = JsonBody.parse(raw)  # the shared 400s for an empty, malformed, too deep or non-object body
    set_rules(services().engine, names.repository(repository), rules_from_json(body.data()))
    return no_content()


def _delete_rules(repository: str) -> Response:
    delete_rules(services().engine, names.repository(repository))
    return no_content()


# One route per view: each route checks the permission rules of its own path and methods.
@route(bp, RULES, ["GET"])
def get_gc_rules(repository: str) -> Response:
    return _get_rules(repository)


@route(bp, RULES, ["PUT"])
def set_gc_rules(repository: str) -> Response:
    return _set_rules(repository)


@route(bp, RULES, ["DELETE"])
def delete_gc_rules(repository: str) -> Response:
    return _delete_rules(repository)


@route(bp, INTERNAL_RULES, ["GET"])
def internal_get_gc_rules(repository: str) -> Response:
    return _get_rules(repository)


@route(bp, INTERNAL_RULES, ["POST"])
def internal_set_gc_rules(repository: str) -> Response:
    return _set_rules(repository)


@route(bp, INTERNAL_RULES, ["DELETE"])
def internal_delete_gc_rules(repository: str) -> Response:
    return _delete_rules(repository)


@route(bp, INTERNAL_RULES + "/set_allowed", ["GET"])
def set_gc_rules_preflight(repository: str) -> Response:
    # As lakeFS: 204 when the caller may set the repository's GC rules (permissions.py), checking nothing else.
    return no_content()


def _presigned_commits(storage_namespace: str, commits_location: str) -> str | None:
    built = services()
    if not built.settings.pre_sign_support:
        return None
    files = built.engine.repositories.namespace_files(storage_namespace)
    return files.presign_get(commits_location, built.settings.presign_expiry_seconds)


@route(bp, "/repositories/{repository}/gc/prepare_commits", ["POST"])
def prepare_gc_commits(repository: str) -> Response:
    prepared = prepare(services().engine, names.repository(repository))
    presigned = _presigned_commits(prepared.storage_namespace, prepared.commits_location)
    return json_response(prepare_response(prepared, presigned), 201)


@route(bp, "/repositories/{repository}/gc/prepare_commits/async", ["POST"])
def prepare_gc_commits_async(repository: str) -> Response:
    # Lakelet's prepare runs within the request (gc/prepare_status.py): the task is its run, complete at once.
    prepared = prepare(services().engine, names.repository(repository))
    return json_response({"id": prepared.run_id}, 202)


@route(bp, "/repositories/{repository}/gc/prepare_commits/status", ["GET"])
def prepare_gc_commits_status(repository: str) -> Response:
    engine = services().engine
    repo = names.repository(repository)
    status = prepared_status(engine, repo, Query(bp.current_request.query_params).required_string("id"))
    namespace = engine.repositories.get_repository(repo).storage_namespace
    result = {
        "run_id": status.run_id,
        "gc_commits_location": status.commits_location,
        "gc_addresses_location": status.addresses_location,
    }
    presigned = _presigned_commits(namespace, status.commits_location)
    if presigned is not None:
        result["gc_commits_presigned_url"] = presigned
    body = {"task_id": status.run_id, "completed": True, "update_time": status.update_time, "result": result}
    return json_response(body)


@route(bp, "/repositories/{repository}/gc/prepare_uncommited", ["POST"])
def prepare_gc_uncommitted(repository: str) -> Response:
    raw = bp.current_request.raw_body
    token = JsonBody.parse(raw).string("continuation_token") if raw else None
    # Lakelet writes every staged address in one call and never hands out a continuation token, so any token
    # is not one of its own (lakeFS answers 400 for a token it cannot decode).
    if token:
        raise errors.Invalid("invalid continuation token")
    run = prepare_uncommitted(services().engine, names.repository(repository))
    return json_response({"run_id": run.run_id, "gc_uncommitted_location": run.location}, 201)
