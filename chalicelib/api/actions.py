"""Action runs (lakeFS's ActionsApi): GET /repositories/{repository}/actions/runs (by branch or commit),
.../runs/{run_id}, .../runs/{run_id}/hooks and .../hooks/{hook_run_id}/output."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from chalice import Blueprint, Response

from chalicelib.graveler.actions import ActionRun, HookRun
from chalicelib.graveler.records import Page

from . import names, serializers
from .endpoint import json_response, page_response, route, services
from .params import Query

bp = Blueprint(__name__)


def _time(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _run(run: ActionRun) -> dict[str, Any]:
    return {
        "run_id": run.run_id,
        "branch": run.branch,
        "start_time": _time(run.start_time),
        "end_time": _time(run.end_time),
        "event_type": run.event_type,
        "status": run.status,
        "commit_id": run.commit_id,
    }


def _hook(hook: HookRun) -> dict[str, Any]:
    return {
        "hook_run_id": hook.hook_run_id,
        "action": hook.action,
        "hook_id": hook.hook_id,
        "start_time": _time(hook.start_time),
        "end_time": _time(hook.end_time),
        "status": hook.status,
    }


def _store_and_namespace(repository: str) -> tuple[Any, str]:
    g = services().engine
    if g.ports.hooks is None:
        from chalicelib.graveler import errors

        raise errors.NotFound("actions are not enabled")
    return g.ports.hooks.store, g.repositories.get_repository(names.repository(repository)).storage_namespace


@route(bp, "/repositories/{repository}/actions/runs", ["GET"])
def list_runs(repository: str) -> Response:
    q = Query(bp.current_request.query_params)
    amount = q.amount()
    store, ns = _store_and_namespace(repository)
    page = store.list(
        ns, branch=q.string("branch"), commit_id=q.string("commit"), after=q.string("after"), amount=amount
    )
    return page_response(serializers.listing(page, _run))


@route(bp, "/repositories/{repository}/actions/runs/{run_id}", ["GET"])
def get_run(repository: str, run_id: str) -> Response:
    store, ns = _store_and_namespace(repository)
    return json_response(_run(store.get(ns, run_id)))


@route(bp, "/repositories/{repository}/actions/runs/{run_id}/hooks", ["GET"])
def list_run_hooks(repository: str, run_id: str) -> Response:
    q = Query(bp.current_request.query_params)
    amount = q.amount()
    store, ns = _store_and_namespace(repository)
    after = q.string("after")
    hooks = [h for h in store.get(ns, run_id).hooks if h.hook_run_id > after]
    page = Page(hooks[:amount], len(hooks) > amount, hooks[amount - 1].hook_run_id if len(hooks) > amount else "")
    return page_response(serializers.listing(page, _hook))


@route(bp, "/repositories/{repository}/actions/runs/{run_id}/hooks/{hook_run_id}/output", ["GET"])
def get_run_hook_output(repository: str, run_id: str, hook_run_id: str) -> Response:
    store, ns = _store_and_namespace(repository)
    data = store.output(ns, run_id, hook_run_id)
    return Response(body=data, status_code=200, headers={"Content-Type": "application/octet-stream"})
