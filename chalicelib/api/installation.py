"""The installation's own small operations that lakeFS's web UI and clients call: communication preferences
(POST /setup_comm_prefs), usage statistics (POST /statistics), the auth service's capabilities
(GET /auth/capabilities), the usage report (GET /usage-report/summary) and the GC grace period
(GET /config/garbage-collection).

Lakelet sends nothing anywhere: preferences and statistics are checked as lakeFS checks them and then dropped
(nothing is stored or sent). The usage report is lakeFS's: the installation id and the API and S3 gateway requests
of each month (chalicelib/usage), as JSON, or as lakeFS's text with ``Accept: text/plain``. docs/api.md lists the
differences.
"""

from __future__ import annotations

import re

from chalice import Blueprint, Response

from chalicelib.graveler import errors
from chalicelib.settings import GCSettings

from . import serializers
from .endpoint import json_response, no_content, route, services
from .params import JsonBody

__all__ = ["bp"]

bp = Blueprint(__name__)

# A bare address, as lakeFS's validateEmail takes it (net/mail, no display name "Alice <a@b>").
_EMAIL = re.compile(r"[^@\s<>()\[\]\\,;:\"]+@[^@\s<>()\[\]\\,;:\"]+")


@route(bp, "/setup_comm_prefs", ["POST"], public=True)
def setup_comm_prefs() -> Response:
    body = JsonBody.parse(bp.current_request.raw_body)
    email = body.string("email") or ""
    if not email:
        raise errors.Invalid("email is required")
    if not _EMAIL.fullmatch(email):
        raise errors.Invalid("invalid email address")
    for name in ("firstName", "lastName", "companyName"):
        body.string(name)
    for name in ("featureUpdates", "securityUpdates"):
        if not isinstance(body.raw(name), bool):
            raise errors.Invalid(f"field {name} is required and must be a boolean")
    return json_response(None)


@route(bp, "/statistics", ["POST"])
def post_stats_events() -> Response:
    events = JsonBody.parse(bp.current_request.raw_body).raw("events")
    if not isinstance(events, list):
        raise errors.Invalid("field events is required and must be a list")
    for event in events:
        if not isinstance(event, dict):
            raise errors.Invalid("invalid value: each event must be an object")
        fields = JsonBody(event)
        if not fields.string("class"):
            raise errors.Invalid("invalid value: class is required")
        if not fields.string("name"):
            raise errors.Invalid("invalid value: name is required")
        count = fields.integer("count")
        if count is None or count < 0:
            raise errors.Invalid("invalid value: count must be a non-negative integer")
    return no_content()


@route(bp, "/auth/capabilities", ["GET"], public=True)
def get_auth_capabilities() -> Response:
    # No mail is ever sent: users are created with credentials, never invited, and no password is reset by mail.
    return json_response({"invite_user": False, "forgot_password": False})


@route(bp, "/usage-report/summary", ["GET"])
def get_usage_report_summary() -> Response:
    usage = services().usage
    if usage is None:
        raise errors.NotFound("installation not found")  # lakeFS's answer without a reporter
    report = usage.report()
    if bp.current_request.headers.get("accept") == "text/plain":
        return Response(
            body=serializers.usage_report_text(report).encode(),
            status_code=200,
            headers={"Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store, must-revalidate"},
        )
    return json_response(serializers.usage_report(report))


@route(bp, "/config/garbage-collection", ["GET"])
def get_garbage_collection_config() -> Response:
    # lakeFS's grace period is how long a fresh address stays collectable-proof; Lakelet's GC never collects an
    # object younger than its minimum age (docs/gc.md), which is the same promise to the client.
    return json_response({"grace_period": GCSettings.from_env().min_age_seconds})
