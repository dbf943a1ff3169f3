"""Health, first-time setup and the caller's identity: GET /healthcheck, GET|POST /setup_lakefs, GET /user."""

from __future__ import annotations

from chalice import Blueprint, Response

from . import serializers, session
from .endpoint import current_user, json_response, no_content, route, services
from .params import JsonBody

bp = Blueprint(__name__)

# lakeFS's LoginConfig for its own login form: Lakelet evaluates users, groups and policies itself ("internal"
# RBAC), logs in at /auth/login with no external login page, and keeps the web UI's token in the cookie
# session.py sets.
LOGIN_CONFIG = {
    "RBAC": "internal",
    "login_url": "",
    "login_url_method": "none",
    "login_failed_message": "The credentials don't match.",
    "login_cookie_names": [session.COOKIE_NAME],
    "logout_url": "",
}


@route(bp, "/healthcheck", ["GET"], public=True)
def healthcheck() -> Response:
    return no_content()


@route(bp, "/setup_lakefs", ["GET"], public=True)
def setup_state() -> Response:
    initialized = services().auth.is_initialized()
    return json_response(
        {
            "state": "initialized" if initialized else "not_initialized",
            # Lakelet sends no mail, so it never asks for communication preferences (lakeFS with
            # email_subscription.enabled false answers the same).
            "comm_prefs_missing": False,
            "login_config": LOGIN_CONFIG,
        }
    )


@route(bp, "/setup_lakefs", ["POST"], public=True)
def setup() -> Response:
    body = JsonBody.parse(bp.current_request.raw_body)
    key = body.nested("key")
    access_key_id = key.required_string("access_key_id") if key else None
    secret = key.required_string("secret_access_key") if key else None
    credential, secret = services().setup(body.required_string("username"), access_key_id, secret)
    return json_response(serializers.credentials_with_secret(credential, secret))


@route(bp, "/user", ["GET"])
def get_current_user() -> Response:
    return json_response({"user": serializers.user(current_user())})
