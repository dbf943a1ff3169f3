"""The web UI's session: the login token carried in an HttpOnly cookie, and the CSRF rule that goes with it.

POST /auth/login answers the token in its body (lakeFS's AuthenticationToken) and also sets it in the cookie
lakeFS's own UI uses (``internal_auth_session``, its ``cookie_auth`` security scheme), so the browser never
holds the token in script-readable storage. The cookie is HttpOnly (no script reads it), SameSite=Strict (a
page on another site never makes the browser send it; the UI's own fetches are same-site, so Strict costs
nothing there) and Secure whenever the request came over HTTPS.

SameSite does not stop a *same-site* attacker: another service on the same host (127.0.0.1 on another port
is the same site) may post forms to us with the cookie attached. So a cookie-authenticated request with an
unsafe method must also carry the ``X-Lakelet-CSRF`` header: a plain form or a no-cors fetch cannot set a
custom header, and a cross-origin fetch that sets one needs a CORS preflight we never grant. Requests that
authenticate with an Authorization header (the SDKs, lakectl) are not affected: browsers never add one
on their own.

Login takes only a JSON body (require_json), so no other page can log the browser in under an account of its
choosing. Logout revokes the token on the server (AuthService.logout), not only the cookie: a copy of it, or
the cookie kept by another tab or a proxy, stops working at once rather than at its expiry.
"""

from __future__ import annotations

from collections.abc import Mapping
from http.cookies import CookieError, SimpleCookie

from chalice import Response

from chalicelib.graveler import errors

COOKIE_NAME = "internal_auth_session"
CSRF_HEADER = "x-lakelet-csrf"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
CSRF_MESSAGE = "cookie-authenticated requests that change state must send the X-Lakelet-CSRF header"
JSON_MEDIA_TYPE = "application/json"


def cookie_token(headers: Mapping[str, str]) -> str | None:
    """The session token from the request's Cookie header, None when there is none."""
    raw = headers.get("cookie")
    if not raw:
        return None
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(raw)
    except CookieError:
        return None
    morsel = jar.get(COOKIE_NAME)
    return morsel.value if morsel is not None and morsel.value else None


def presented_token(headers: Mapping[str, str], method: str) -> str | None:
    """The login token a request carries: a Bearer token, else the session cookie (whose unsafe requests need
    the CSRF header, check_csrf), else None."""
    scheme, _, token = (headers.get("authorization") or "").strip().partition(" ")
    if scheme.lower() == "bearer" and token.strip():
        return token.strip()
    cookie = cookie_token(headers)
    if cookie is not None:
        check_csrf(method, headers)
    return cookie


def require_json(headers: Mapping[str, str]) -> None:
    """Raises Invalid unless the body is declared ``application/json``. A page on any site can make a browser
    POST a form or text/plain (or, from a Blob, no type at all) without asking us first; a JSON content type
    needs a CORS preflight we never grant. The official clients and the web UI always send it."""
    media_type = (headers.get("content-type") or "").partition(";")[0].strip().lower()
    if media_type != JSON_MEDIA_TYPE:
        raise errors.Invalid(f"the request body must be JSON, sent with Content-Type: {JSON_MEDIA_TYPE}")


def check_csrf(method: str, headers: Mapping[str, str]) -> None:
    """Raises Forbidden when a cookie-authenticated unsafe request lacks the CSRF header."""
    if method.upper() not in SAFE_METHODS and not (headers.get(CSRF_HEADER) or "").strip():
        raise errors.Forbidden(CSRF_MESSAGE)


def _secure(headers: Mapping[str, str]) -> str:
    # API Gateway always serves HTTPS and says so; the local stack is plain HTTP on loopback.
    return "; Secure" if (headers.get("x-forwarded-proto") or "").lower() == "https" else ""


def set_cookie(token: str, max_age: int, headers: Mapping[str, str]) -> str:
    """The Set-Cookie value that starts a session (Path=/ so it also covers an API Gateway stage prefix)."""
    return f"{COOKIE_NAME}={token}; Path=/; Max-Age={max(0, max_age)}; HttpOnly; SameSite=Strict{_secure(headers)}"


def clear_cookie(headers: Mapping[str, str]) -> str:
    """The Set-Cookie value that ends a session."""
    return f"{COOKIE_NAME}=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict{_secure(headers)}"


def without_browser_prompt(response: Response, headers: Mapping[str, str]) -> Response:
    """Drops WWW-Authenticate from the UI's 401s: a browser answers that header with its own Basic-auth dialog
    (over the UI's login page, or a stalled fetch). The UI marks its requests with the CSRF header."""
    if response.status_code == 401 and (headers.get(CSRF_HEADER) or "").strip():
        response.headers = {k: v for k, v in response.headers.items() if k.lower() != "www-authenticate"}
    return response
