"""Objects: read (GET/HEAD, ranges, presigned redirects, If-None-Match), stat, list, upload, copy and delete.

Reads take any ref expression (``.../refs/{ref}/objects``); writes need a branch (``.../branches/{branch}``).
The object path is always the ``path`` query parameter, as in lakeFS.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from email.utils import formatdate
from typing import Any

from chalice import Blueprint, Response
from chalice.app import Request

from chalicelib import http_headers
from chalicelib.auth.addresses import upload_url_may_be_live
from chalicelib.auth.policies import Permission, object_arn, repository_arn
from chalicelib.graveler import errors
from chalicelib.graveler.reads.listing import ListedRows
from chalicelib.graveler.records import Entry, ListedObject
from chalicelib.graveler.validation import validate_path
from chalicelib.settings import ENV_IMPORT_ALLOWED_LOCATIONS

from . import batch_body, multipart, names, serializers
from .endpoint import current_user, json_response, no_content, page_response, raw_body, route, services
from .errors import message_for, status_for
from .params import JsonBody, Query
from .ranges import parse_range

bp = Blueprint(__name__)

META_PREFIX = "x-lakefs-meta-"
DEFAULT_CONTENT_TYPE = multipart.DEFAULT_CONTENT_TYPE
OBJECT = "/repositories/{repository}/refs/{ref}/objects"


def entry_headers(entry: Entry) -> dict[str, str]:
    """Stored values pass through http_headers: an entry written before writes were validated (a content type
    with CR/LF) must neither inject headers nor fail the read."""
    headers = {
        "Content-Type": http_headers.content_type(entry.content_type),
        "ETag": f'"{entry.etag}"' if http_headers.is_safe_value(entry.etag) else '""',
        "Last-Modified": _http_date(entry.mtime),
        "Accept-Ranges": "bytes",
    }
    headers.update(http_headers.metadata_headers(META_PREFIX, entry.user_metadata))
    return headers


def _http_date(mtime: float) -> str:
    """An HTTP date; an mtime outside what a date can say (stored before mtimes were bounded) reads as 1970."""
    try:
        return formatdate(mtime, usegmt=True)
    except (OverflowError, ValueError, OSError):
        return formatdate(0, usegmt=True)


def user_metadata(headers: Mapping[str, str]) -> dict[str, str]:
    # Chalice lowercases header names, so metadata keys come back lowercased (as S3 does with x-amz-meta-*).
    return {name[len(META_PREFIX) :]: value for name, value in headers.items() if name.lower().startswith(META_PREFIX)}


def if_absent(headers: Mapping[str, str]) -> bool:
    condition = headers.get("if-none-match")
    if condition is None:
        return False
    if condition.strip() != "*":
        raise errors.Invalid("If-None-Match supports only '*'")
    return True


def refuse_if_match(headers: Mapping[str, str]) -> None:
    """If-Match (replace only a given version) is honoured by uploads only: here refuse it, never ignore it."""
    if headers.get("if-match") is not None:
        raise errors.Invalid("If-Match is not supported")


def upload_body(headers: Mapping[str, str], raw: bytes) -> tuple[bytes, str]:
    content_type = headers.get("content-type") or multipart.DEFAULT_CONTENT_TYPE
    if multipart.is_form(content_type):
        return multipart.form_field(content_type, raw)
    return raw, content_type


def object_response(
    request: Request, path: str, entry: Entry, disposition: str | None, read: Callable[[int | None, int | None], bytes]
) -> Response:
    """The body (or for HEAD only the headers) of an object read, honouring If-None-Match and Range. Every
    answer with the object's headers is inert in a browser (http_headers.object_headers): the bytes are
    anyone's upload and this is the UI's origin."""
    stored = entry_headers(entry)
    # Typed as Chalice's Response takes its headers (a value may be a list): dict is invariant in its values.
    headers: dict[str, str | list[str]] = {
        **stored,
        **http_headers.object_headers(stored["Content-Type"], path, disposition),
    }
    condition = request.headers.get("if-none-match")
    if condition and condition.strip() in (stored["ETag"], entry.etag):
        return Response(body=b"", status_code=304, headers={"ETag": stored["ETag"]})
    byte_range = parse_range(request.headers.get("range"), entry.size)
    status, start, end = (200, 0, entry.size - 1) if byte_range is None else (206, *byte_range)
    if byte_range is not None:
        headers["Content-Range"] = f"bytes {start}-{end}/{entry.size}"
    headers["Content-Length"] = str(end - start + 1)
    if request.method == "HEAD":
        return Response(body=b"", status_code=status, headers=headers)
    # A whole read asks for no range at all: an S3 range of an empty object does not exist.
    data = read(start, end) if byte_range is not None else read(None, None)
    return Response(body=data, status_code=status, headers=headers)


GONE_MESSAGE = "the data of this object was garbage collected"


@route(bp, OBJECT, ["GET", "HEAD"])
def get_object(repository: str, ref: str) -> Response:
    request = bp.current_request
    q = Query(request.query_params)
    engine = services().engine
    repo_id, ref_name, path = names.repository(repository), names.ref(ref), q.required_string("path")
    disposition = _disposition(q)
    if q.boolean("presign") or request.method == "HEAD":
        # Neither a presigned URL nor a HEAD touches the data: ask whether GC collected it (410, as lakeFS).
        entry, collected = engine.objects.stat_readable(repo_id, ref_name, path)
        if collected:
            raise errors.Gone(GONE_MESSAGE)
    else:
        entry = engine.objects.stat_object(repo_id, ref_name, path)  # a read of collected data answers 410 itself
    if q.boolean("presign"):
        location = engine.objects.presign_object(repository, entry, services().settings.presign_expiry_seconds)
        return Response(body=b"", status_code=302, headers={"Location": location})
    return object_response(
        request, path, entry, disposition, lambda start, end: engine.objects.read_object(repository, entry, start, end)
    )


def _disposition(q: Query) -> str | None:
    """Lakelet's ``disposition=inline`` asks for an inert type to be shown rather than saved (the default and
    what ``attachment`` asks for). lakeFS has no such parameter, so its clients never send it."""
    value = q.string("disposition").strip().lower()
    if value not in ("", "inline", "attachment"):
        raise errors.Invalid("disposition must be inline or attachment")
    return "inline" if value == "inline" else None


@route(bp, OBJECT + "/stat", ["GET"])
def stat_object(repository: str, ref: str) -> Response:
    q = Query(bp.current_request.query_params)
    path = q.required_string("path")
    engine = services().engine
    entry, collected = engine.objects.stat_readable(names.repository(repository), names.ref(ref), path)
    presigned, expiry = None, None
    if q.boolean("presign") and not collected:
        seconds = services().settings.presign_expiry_seconds
        presigned, expiry = engine.objects.presign_object(repository, entry, seconds), int(time.time()) + seconds
    # As lakeFS: the stats of an object whose data GC collected, with status 410 Gone.
    return json_response(
        serializers.object_stats(path, entry, q.boolean("user_metadata", True), presigned, expiry),
        410 if collected else 200,
    )


@route(bp, OBJECT + "/underlyingProperties", ["GET"])
def get_underlying_properties(repository: str, ref: str) -> Response:
    path = Query(bp.current_request.query_params).required_string("path")
    storage_class = services().engine.objects.storage_class(names.repository(repository), names.ref(ref), path)
    return json_response({"storage_class": storage_class})


@route(bp, "/repositories/{repository}/branches/{branch}/objects/stage_allowed", ["GET"])
def upload_object_preflight(repository: str, branch: str) -> Response:
    # As lakeFS: only the permission to write the path is checked (permissions.py); 204 says an upload may go.
    validate_path(Query(bp.current_request.query_params).required_string("path"))
    return no_content()


@route(bp, OBJECT + "/ls", ["GET"])
def list_objects(repository: str, ref: str) -> Response:
    q = Query(bp.current_request.query_params)
    amount, with_metadata = q.amount(), q.boolean("user_metadata", True)
    engine = services().engine
    page = engine.objects.list_objects(
        names.repository(repository),
        names.ref(ref),
        q.string("prefix"),
        q.string("delimiter"),
        q.string("after"),
        amount,
    )
    if not q.boolean("presign") and isinstance(page.results, ListedRows):
        # The common case, built from the page's columns and encoded by orjson: per row, one dict and no Entry.
        body = serializers.encoded_listing(page, page.results, with_metadata)
        return Response(body=body, status_code=200, headers={"Content-Type": "application/json"})
    # As lakeFS's presign=true: each object's physical address is a presigned GET (GC is not asked, as lakeFS
    # does not; a collected object's URL answers S3's 404, and stat or GET through the API tells 410).
    # The route needs only fs:ListObjects, and a URL reads the bytes: as lakeFS does, an object is signed only
    # when the caller may fs:ReadObject it, and otherwise listed as without presign (no URL, no expiry).
    seconds = services().settings.presign_expiry_seconds
    expiry = int(time.time()) + seconds
    user_id, authorizer = current_user().id, services().auth.authorizer

    def presigned(item: ListedObject) -> dict[str, Any]:
        readable = item.entry is not None and authorizer.is_allowed(
            user_id, [Permission("fs:ReadObject", object_arn(repository, item.key))]
        )
        if item.entry is None or not readable:
            return serializers.listed_object(item, with_metadata)
        url = engine.objects.presign_object(repository, item.entry, seconds)
        return serializers.object_stats(item.key, item.entry, with_metadata, url, expiry)

    return page_response(serializers.listing(page, presigned))


@route(bp, "/repositories/{repository}/branches/{branch}/objects", ["POST"])
def upload_object(repository: str, branch: str) -> Response:
    request = bp.current_request
    path = Query(request.query_params).required_string("path")
    data, content_type = upload_body(request.headers, raw_body(request))
    entry = services().engine.objects.upload_object(
        names.repository(repository),
        names.branch(branch),
        path,
        data,
        content_type,
        user_metadata(request.headers),
        if_absent(request.headers),
        Query(request.query_params).boolean("force"),
        request.headers.get("if-match"),
    )
    return json_response(serializers.object_stats(path, entry), 201)


@route(bp, "/repositories/{repository}/branches/{branch}/objects", ["PUT"])
def stage_object(repository: str, branch: str) -> Response:
    """lakeFS's stageObject (ObjectStageCreation): an object already in the store, staged by its address
    (graveler/usecases/staged_objects.py: in the repository's own data, or under the allowed import locations); 201 with
    its ObjectStats."""
    path = Query(bp.current_request.query_params).required_string("path")
    body = JsonBody.parse(bp.current_request.raw_body)
    size = body.integer("size_bytes")
    if size is None or size < 0:
        raise errors.Invalid("field size_bytes must be a non-negative integer")
    claim = Entry(
        physical_address=body.required_string("physical_address"),
        size=size,
        etag=body.required_string("checksum").strip('"'),
        mtime=body.integer("mtime") or int(time.time()),
        content_type=body.string("content_type") or DEFAULT_CONTENT_TYPE,
        user_metadata=body.str_map("metadata"),
    )
    svc = services()
    if upload_url_may_be_live(claim.physical_address, svc.settings.presign_expiry_seconds, time.time()):
        raise errors.Invalid(
            "physical_address was handed out for a presigned upload whose URL may still rewrite it: link it with "
            "PUT .../staging/backing, or stage it once the URL has expired"
        )
    entry = svc.engine.staged.by_address.stage_object(
        names.repository(repository),
        names.branch(branch),
        path,
        claim,
        svc.settings.import_allowed_locations,
        ENV_IMPORT_ALLOWED_LOCATIONS,
        body.boolean("force"),
    )
    return json_response(serializers.object_stats(path, entry), 201)


@route(bp, "/repositories/{repository}/branches/{branch}/objects/batch", ["POST"])
def upload_objects(repository: str, branch: str) -> Response:
    """Lakelet's batch upload (an extension; body format in batch_body.py): 201 with ``results``, the ObjectStats
    of every object in the manifest's order. Needs fs:WriteObject on every path (permissions.py)."""
    request = bp.current_request
    refuse_if_match(request.headers)
    if if_absent(request.headers):
        raise errors.Invalid("a batch upload cannot be conditional: upload objects one by one with If-None-Match")
    objects = batch_body.parse(request.raw_body)
    entries = services().engine.objects.upload_objects(names.repository(repository), names.branch(branch), objects)
    return json_response(
        {"results": [serializers.object_stats(o.path, e) for o, e in zip(objects, entries, strict=True)]}, 201
    )


@route(bp, "/repositories/{repository}/branches/{branch}/objects", ["DELETE"])
def delete_object(repository: str, branch: str) -> Response:
    q = Query(bp.current_request.query_params)
    services().engine.objects.delete_object(
        names.repository(repository), names.branch(branch), q.required_string("path"), q.boolean("force")
    )
    return no_content()


@route(bp, "/repositories/{repository}/branches/{branch}/objects/delete", ["POST"])
def delete_objects(repository: str, branch: str) -> Response:
    repo_id, branch_id = names.repository(repository), names.branch(branch)  # malformed: 400, existence unread
    paths = JsonBody.parse(bp.current_request.raw_body).str_list("paths")
    svc = services()
    user = current_user()
    # As lakeFS does: each path needs its own fs:DeleteObject; a denied path is reported, the others go.
    allowed: list[str] = []
    denied: list[str] = []
    for path in paths:
        permitted = svc.auth.authorizer.is_allowed(
            user.id, [Permission("fs:DeleteObject", object_arn(repository, path))]
        )
        (allowed if permitted else denied).append(path)
    report = [(p, 403, f"not allowed to delete {p}") for p in denied]
    if not allowed and not svc.auth.authorizer.is_allowed(
        user.id, [Permission("fs:ReadRepository", repository_arn(repository))]
    ):
        # Nothing to do, and the caller may not know whether the repository exists: the same answer for one
        # that does and one that does not (looking it up would tell 404 from 200).
        return json_response(serializers.object_errors(report))
    failures = svc.engine.objects.delete_objects(repo_id, branch_id, allowed)
    report += [(p, status_for(e), message_for(e)) for p, e in failures]
    return json_response(serializers.object_errors(report))


@route(bp, "/repositories/{repository}/branches/{branch}/objects/copy", ["POST"])
def copy_object(repository: str, branch: str) -> Response:
    """A shallow copy: the new path shares the source's physical object (always, ``shallow`` or not)."""
    request = bp.current_request
    dest_path = Query(request.query_params).required_string("dest_path")
    body = JsonBody.parse(request.raw_body)
    # Checked for their type only: every copy is shallow, and force (writing to a read-only repository) is
    # not offered.
    body.boolean("shallow")
    body.boolean("force")
    entry = services().engine.objects.copy_object(
        names.repository(repository),
        names.ref(body.string("src_ref") or branch),
        body.required_string("src_path"),
        names.branch(branch),
        dest_path,
        if_absent(request.headers),
    )
    return json_response(serializers.object_stats(dest_path, entry), 201)


@route(bp, "/repositories/{repository}/branches/{branch}/objects/stat/user_metadata", ["PUT"])
def update_object_user_metadata(repository: str, branch: str) -> Response:
    """lakeFS's updateObjectUserMetadata: UpdateObjectUserMetadata {set} replaces the object's user metadata,
    staged on the branch like any change; 204, as lakeFS's server answers (its swagger says 201, but lakectl's
    fs update-metadata accepts only 204, and the SDKs any 2xx)."""
    path = Query(bp.current_request.query_params).required_string("path")
    body = JsonBody.parse(bp.current_request.raw_body)
    if body.nested("set") is None:
        raise errors.Invalid("field set is required")
    services().engine.objects.update_user_metadata(
        names.repository(repository), names.branch(branch), path, body.str_map("set")
    )
    return no_content()
