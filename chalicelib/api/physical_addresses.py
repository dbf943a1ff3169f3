"""Presigned uploads: GET|PUT /repositories/{r}/branches/{b}/staging/backing.

GET hands out a fresh physical address in the repository's namespace, signed for (repository, branch, path)
(auth/addresses.py), and with ``presign=true`` a presigned S3 PUT URL for it, so the bytes go straight to
S3 and never through API Gateway or Lambda. A missing branch is a 404 (the branch is read once per 2 s per
branch: a client asks for an address per file; the link reads it again).

PUT links what was uploaded there to the path: the address must verify (else 400), the object must exist and
match the claimed size and checksum; it is copied to an address no URL can write, so the bytes a commit reads
never change (graveler/writes/linking.py). If-None-Match: * makes the link fail with 412 when the path already exists.

Lakelet's ``write_once=true`` (with ``presign=true``) hands out a write-once address: its URL must be sent with
``If-None-Match: *`` and can only create the object, so the link stages the upload itself without copying it.
"""

from __future__ import annotations

import time

from chalice import Blueprint, Response

from chalicelib.auth.addresses import is_write_once
from chalicelib.graveler import errors
from chalicelib.graveler.records import Entry
from chalicelib.graveler.validation import validate_path

from . import names, serializers
from .endpoint import json_response, route, services
from .objects import DEFAULT_CONTENT_TYPE, if_absent, refuse_if_match
from .params import JsonBody, Query

bp = Blueprint(__name__)

BACKING = "/repositories/{repository}/branches/{branch}/staging/backing"


@route(bp, BACKING, ["GET"])
def get_physical_address(repository: str, branch: str) -> Response:
    q = Query(bp.current_request.query_params)
    path = q.required_string("path")
    validate_path(path)
    write_once = q.boolean("write_once")
    if write_once and not q.boolean("presign"):
        # Written with the client's own credentials, nothing makes the address write-once.
        raise errors.Invalid("write_once needs presign=true: only a presigned URL can be made write-once")
    svc = services()
    engine = svc.engine
    engine.objects.check_upload_branch(names.repository(repository), names.branch(branch))
    address = svc.auth.address_signer().sign(
        repository, branch, path, engine.objects.new_physical_address(repository), write_once
    )
    # presigned_url is nullable in lakeFS's schema, and null when not asked for.
    location: dict[str, object] = {"physical_address": address, "presigned_url": None}
    if q.boolean("presign"):
        seconds = svc.settings.presign_expiry_seconds
        location["presigned_url"] = engine.repositories.presign_upload(address, seconds, write_once)
        location["presigned_url_expiry"] = int(time.time()) + seconds
    return json_response(location)


@route(bp, BACKING, ["PUT"])
def link_physical_address(repository: str, branch: str) -> Response:
    request = bp.current_request
    path = Query(request.query_params).required_string("path")
    refuse_if_match(request.headers)
    body = JsonBody.parse(request.raw_body)
    staging = body.nested("staging")
    if staging is None:
        raise errors.Invalid("field staging is required")
    svc = services()
    address = svc.auth.address_signer().verify(
        names.repository(repository), names.branch(branch), path, staging.required_string("physical_address")
    )
    size = body.integer("size_bytes")
    if size is None or size < 0:
        raise errors.Invalid("field size_bytes must be a non-negative integer")
    claim = Entry(
        physical_address=address,
        size=size,
        etag=body.required_string("checksum").strip('"'),  # S3 ETags come quoted
        mtime=body.integer("mtime") or int(time.time()),
        content_type=body.string("content_type") or DEFAULT_CONTENT_TYPE,
        user_metadata=body.str_map("user_metadata"),
    )
    linked = svc.engine.objects.link_upload(
        repository, branch, path, address, claim, if_absent(request.headers), is_write_once(address)
    )
    return json_response(serializers.object_stats(path, linked))
