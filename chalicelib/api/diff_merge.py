"""Diff and merge between refs: GET .../refs/{left}/diff/{right}, GET and POST .../refs/{source}/merge/{dest},
and lakeFS's asynchronous merge: POST .../merge/{dest}/async and GET .../merge/{dest}/status?id=.

The shapes are lakeFS's (DiffList, FindMergeBaseResult, Merge, MergeResult) with Lakelet's additions, which the
official clients ignore: a 409 also lists the conflicts, each with what each side did; a merge body may carry
``path_strategies`` and ``dry_run`` (a preview that commits nothing). Conflict lists and previews are pages:
``amount`` and ``after`` in the query string, as in every lakeFS listing.
"""

from __future__ import annotations

from typing import Any

from chalice import Blueprint, Response

from chalicelib.graveler import errors
from chalicelib.graveler.errors import MergeConflicts
from chalicelib.graveler.merge import Decision, KeyConflict, MergeChange
from chalicelib.graveler.merge.policy import MergePreview
from chalicelib.graveler.records import Commit, Diff, Page
from chalicelib.graveler.runs.workflow_runner import inline_task_id
from chalicelib.iceberg.layout import table_of_pointer

from . import names, serializers, tasks
from .endpoint import URL_PREFIX, current_user, json_response, page_response, route, services
from .errors import message_for, status_for
from .params import JsonBody, Query

__all__ = ["bp"]

bp = Blueprint(__name__)

_RESOLUTION = {Decision.TAKE_SOURCE: "source-wins", Decision.TAKE_DEST: "dest-wins", None: None}


# ---- shapes ---------------------------------------------------------------------------------------------------


def diff_item(item: Diff, right_stats: bool) -> dict[str, Any]:
    """lakeFS's Diff; with ``right_stats`` the right side's DiffObjectStat (include_right_stats)."""
    out = serializers.diff(item)
    if right_stats and item.entry is not None:
        out["right"] = {
            "checksum": item.entry.etag,
            "mtime": item.entry.mtime,
            "content_type": item.entry.content_type,
            "metadata": dict(item.entry.user_metadata),
        }
    return out


def conflict_item(conflict: KeyConflict) -> dict[str, Any]:
    """One conflicting path: what the source and the destination did to it since the merge base (added,
    changed or deleted) and, when a strategy settles it, which side wins."""
    out: dict[str, Any] = {
        "path": conflict.key,
        "source": str(conflict.source),
        "destination": str(conflict.destination),
    }
    if conflict.resolution is not None:
        out["resolution"] = _RESOLUTION[conflict.resolution]
    return out


def change_item(change: MergeChange) -> dict[str, Any]:
    """A Diff row of a merge preview; a conflicting path also carries its conflict_item."""
    out = serializers.diff(Diff(change.key, change.type, change.entry))
    if change.conflict is not None:
        out["conflict"] = conflict_item(change.conflict)
    return out


def conflict_response(error: MergeConflicts, amount: int) -> Response:
    """The lakeFS 409 ({"message"}) with the first page of the unresolved conflicts; the rest come from a merge
    preview with only_conflicts and after = next_offset."""
    unresolved = error.unresolved
    has_more = len(unresolved) > amount
    page = Page(unresolved[:amount], has_more, unresolved[amount - 1].key if has_more else "")
    tables = [t for t in (table_of_pointer(c.key) for c in unresolved) if t is not None]
    message = message_for(error)
    if tables:
        # A table's pointer names it: say which tables changed on both sides (no row-level merge).
        message += f"; Iceberg tables changed on both sides: {', '.join(tables)}"
    body = {
        "message": message,
        "conflicts": [conflict_item(c) for c in page.results],
        "pagination": serializers.pagination(page),
    }
    return json_response(body, status_for(error))


def _preview(preview: MergePreview, amount: int) -> dict[str, Any]:
    summary = preview.summary
    return {
        # MergeResult's one required field: the destination is where it was.
        "reference": preview.destination.id,
        "dry_run": True,
        "source_commit_id": preview.source.id,
        "destination_commit_id": preview.destination.id,
        "base_commit_id": preview.base.id,
        "summary": {
            "added": summary.added,
            "removed": summary.removed,
            "changed": summary.changed,
            "conflict": summary.conflicts,
            "unresolved": summary.unresolved,
        },
        **serializers.listing(preview.page, change_item),
    }


def path_strategies(raw: bytes | str | None) -> list[tuple[str, str]]:
    """The body's ``path_strategies``: a list of {"path": glob, "strategy": "source-wins"|"dest-wins"|"fail"}."""
    if not raw:
        return []
    value = JsonBody.parse(raw).raw("path_strategies")
    if value is None:
        return []
    if not isinstance(value, list):
        raise errors.Invalid("field path_strategies must be a list")
    rules: list[tuple[str, str]] = []
    for rule in value:
        if (
            not isinstance(rule, dict)
            or not isinstance(rule.get("path"), str)
            or not isinstance(rule.get("strategy"), str)
        ):
            raise errors.Invalid('each path strategy must be {"path": "<glob>", "strategy": "<strategy>"}')
        rules.append((rule["path"], rule["strategy"]))
    return rules


# ---- routes ---------------------------------------------------------------------------------------------------


# API Gateway allows one variable name per path position: {ref} here as in .../refs/{ref}/objects (lakeFS
# calls it leftRef or sourceRef; clients never see the name).
DIFF = "/repositories/{repository}/refs/{ref}/diff/{rightRef}"
MERGE = "/repositories/{repository}/refs/{ref}/merge/{destinationBranch}"


@route(bp, DIFF, ["GET"])
def diff_refs(repository: str, ref: str, rightRef: str) -> Response:
    q = Query(bp.current_request.query_params)
    amount = q.amount()
    page = services().engine.history.diff_refs(
        names.repository(repository),
        names.ref(ref),
        names.ref(rightRef),
        q.string("type", "three_dot"),
        q.string("prefix"),
        q.string("delimiter"),
        q.string("after"),
        amount,
    )
    right_stats = q.boolean("include_right_stats")
    return page_response(serializers.listing(page, lambda item: diff_item(item, right_stats)))


@route(bp, MERGE, ["GET"])
def find_merge_base(repository: str, ref: str, destinationBranch: str) -> Response:
    source, destination, base = services().engine.history.find_merge_base(
        names.repository(repository), names.ref(ref), names.ref(destinationBranch)
    )
    return json_response(
        {"source_commit_id": source.id, "destination_commit_id": destination.id, "base_commit_id": base.id}
    )


def _merge(
    repository: str, ref: str, destination: str, raw: bytes | str | None, body: JsonBody, wait_seconds: float
) -> Commit:
    """engine.merges.merge with the request's body. Raises StillRunning when the workflow outlives the wait."""
    return services().engine.merges.merge(
        names.repository(repository),
        names.ref(ref),
        names.branch(destination),
        current_user().id,
        body.string("message") or "",
        body.str_map("metadata"),
        body.string("strategy"),
        path_strategies(raw),
        body.boolean("squash_merge"),
        body.boolean("allow_empty"),
        body.boolean("force"),
        wait_seconds=wait_seconds,
    )


def _body() -> tuple[bytes | str | None, JsonBody]:
    raw = bp.current_request.raw_body
    return raw, JsonBody.parse(raw) if raw else JsonBody({})


def _status_url(repository: str, ref: str, destination: str, task_id: str) -> str:
    return f"{URL_PREFIX}/repositories/{repository}/refs/{ref}/merge/{destination}/status?id={task_id}"


@route(bp, MERGE, ["POST"])
def merge(repository: str, ref: str, destinationBranch: str) -> Response:
    """Inline, or as the merge workflow above the size threshold: waits for it within API Gateway's limit and
    answers 202 with the task id (as .../merge/{destination}/async does) if it goes on past that."""
    raw, body = _body()
    q = Query(bp.current_request.query_params)
    amount = q.amount()
    if body.boolean("dry_run") or q.boolean("dry_run"):
        preview = services().engine.history.preview_merge(
            names.repository(repository),
            names.ref(ref),
            names.branch(destinationBranch),
            body.string("strategy"),
            path_strategies(raw),
            q.string("prefix"),
            q.string("after"),
            amount,
            q.boolean("only_conflicts"),
        )
        return json_response(_preview(preview, amount))
    try:
        merged = _merge(repository, ref, destinationBranch, raw, body, services().settings.workflow_wait_seconds)
    except MergeConflicts as e:
        return conflict_response(e, amount)
    except errors.StillRunning as running:
        return tasks.accepted(running.task_id, _status_url(repository, ref, destinationBranch, running.task_id))
    return json_response({"reference": merged.id})


@route(bp, MERGE + "/async", ["POST"])
def merge_async(repository: str, ref: str, destinationBranch: str) -> Response:
    """lakeFS's mergeIntoBranchAsync: 202 TaskCreation; small merges have completed by then."""
    raw, body = _body()
    try:
        task_id = inline_task_id(
            _merge(repository, ref, destinationBranch, raw, body, 0).id, names.branch(destinationBranch)
        )
    except MergeConflicts as e:
        return conflict_response(e, Query(bp.current_request.query_params).amount())
    except errors.StillRunning as running:
        task_id = running.task_id
    return json_response({"id": task_id}, 202)


@route(bp, MERGE + "/status", ["GET"])
def merge_async_status(repository: str, ref: str, destinationBranch: str) -> Response:
    """lakeFS's mergeIntoBranchAsyncStatus: MergeAsyncStatus (its result is MergeResult)."""
    task_id = Query(bp.current_request.query_params).required_string("id")
    status = services().engine.merges.merge_status(
        names.repository(repository), names.branch(destinationBranch), task_id
    )
    return json_response(tasks.status_body(status, lambda commit: {"reference": commit.id}))
