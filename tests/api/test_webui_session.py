"""The web UI's server side: its files at / and /assets/{name}, the session cookie set by POST /auth/login and
accepted by every route, the CSRF header rule for cookie-authenticated writes, logout, and GET /user/permissions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from chalice.test import Client

from chalicelib import webui
from chalicelib.api import session
from tests.api.support import PREFIX, Api, body_of

CSRF = {"x-lakelet-csrf": "1"}


def header(response: object, name: str) -> str:
    headers = {k.lower(): v for k, v in response.headers.items()}  # type: ignore[attr-defined]
    return str(headers[name])


def login_cookie(api: Api, credentials: tuple[str, str]) -> str:
    anonymous = Api(api.client, None)
    response = anonymous.post(
        "/auth/login", json_body={"access_key_id": credentials[0], "secret_access_key": credentials[1]}
    )
    assert response.status_code == 200
    set_cookie = header(response, "set-cookie")
    assert set_cookie.startswith(session.COOKIE_NAME + "=")
    assert "HttpOnly" in set_cookie and "SameSite=Strict" in set_cookie and "Path=/" in set_cookie
    # The cookie carries the very token the body hands to API clients.
    assert body_of(response)["token"] == set_cookie.split(";")[0].split("=", 1)[1]
    return set_cookie.split(";")[0]


def with_cookie(client: Client, cookie: str) -> Api:
    api = Api(client, None)
    original = api.request

    def request(method: str, path: str, **kw: object) -> object:
        headers = {"cookie": cookie, **(kw.pop("headers", None) or {})}  # type: ignore[dict-item]
        return original(method, path, headers=headers, **kw)  # type: ignore[arg-type]

    api.request = request  # type: ignore[method-assign]
    return api


def test_the_session_cookie_authenticates_reads(api: Api, client: Client, credentials: tuple[str, str]) -> None:
    browser = with_cookie(client, login_cookie(api, credentials))
    response = browser.get("/user")
    assert response.status_code == 200
    assert body_of(response)["user"]["id"] == "admin"


def test_a_forged_cookie_is_refused(client: Client) -> None:
    forged = with_cookie(client, f"{session.COOKIE_NAME}=eyJhbGciOiJIUzI1NiJ9.e30.c2lnbmF0dXJl")
    assert forged.get("/user").status_code == 401


def test_cookie_writes_need_the_csrf_header(api: Api, client: Client, credentials: tuple[str, str]) -> None:
    browser = with_cookie(client, login_cookie(api, credentials))
    body = {"name": "repo1", "storage_namespace": "s3://test-bucket/repos/repo1"}
    refused = browser.post("/repositories", json_body=body)
    assert refused.status_code == 403
    assert "X-Lakelet-CSRF" in body_of(refused)["message"]
    assert browser.get("/repositories").json_body["results"] == []  # nothing was created
    assert browser.post("/repositories", json_body=body, headers=CSRF).status_code == 201


def test_authorization_headers_are_not_subject_to_the_csrf_rule(api: Api) -> None:
    # SDKs and lakectl send credentials themselves; a browser never adds them on its own.
    assert api.create_repo("repo1")["id"] == "repo1"


def test_ui_401s_do_not_ask_the_browser_for_basic_credentials(anonymous: Api) -> None:
    plain = anonymous.get("/user")
    assert plain.status_code == 401 and "www-authenticate" in {k.lower() for k in plain.headers}
    from_ui = anonymous.get("/user", headers=CSRF)
    assert from_ui.status_code == 401 and "www-authenticate" not in {k.lower() for k in from_ui.headers}


def test_logout_clears_the_cookie(anonymous: Api) -> None:
    response = anonymous.post("/auth/logout", headers=CSRF)
    assert response.status_code == 204
    assert header(response, "set-cookie").startswith(f"{session.COOKIE_NAME}=;")
    assert "Max-Age=0" in header(response, "set-cookie")


def test_the_cookie_is_secure_behind_https(api: Api, credentials: tuple[str, str]) -> None:
    response = Api(api.client, None).post(
        "/auth/login",
        json_body={"access_key_id": credentials[0], "secret_access_key": credentials[1]},
        headers={"x-forwarded-proto": "https"},
    )
    assert "; Secure" in header(response, "set-cookie")


def test_permissions_tell_a_viewer_from_an_admin(api: Api, client: Client, services: object) -> None:
    api.create_repo("repo1")
    assert api.post("/auth/users", json_body={"id": "vera"}).status_code == 201
    assert api.request("PUT", "/auth/groups/Viewers/members/vera").status_code == 201
    created = body_of(api.post("/auth/users/vera/credentials"))
    viewer = Api(client, (created["access_key_id"], created["secret_access_key"]))
    mine = body_of(viewer.get("/user/permissions", query={"repository": "repo1", "branch": "main"}))["allowed"]
    assert mine["fs:WriteObject"] is False and mine["fs:CreateCommit"] is False
    assert mine["fs:CreateRepository"] is False and mine["auth:ListUsers"] is False
    admin = body_of(api.get("/user/permissions", query={"repository": "repo1"}))["allowed"]
    assert all(admin.values()), admin


def test_permissions_need_a_caller(anonymous: Api) -> None:
    assert anonymous.get("/user/permissions").status_code == 401


@pytest.fixture
def built_ui(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "assets").mkdir()
    (tmp_path / "index.html").write_text("<!doctype html><title>Lakelet</title>")
    (tmp_path / "assets" / "main-ABC.js").write_text("console.log(1)")
    monkeypatch.setattr(webui, "DIST", tmp_path)
    return tmp_path


def test_index_and_assets_are_served(client: Client, built_ui: Path) -> None:
    index = client.http.get("/", headers={"accept": "text/html"})
    assert index.status_code == 200
    assert index.body.startswith(b"<!doctype html>")
    assert header(index, "content-type").startswith("text/html")
    assert header(index, "cache-control") == "no-cache"
    assert "default-src 'self'" in header(index, "content-security-policy")
    script = client.http.get("/assets/main-ABC.js", headers={"accept": "*/*"})
    assert script.status_code == 200 and script.body == b"console.log(1)"
    assert header(script, "content-type").startswith("text/javascript")
    assert "immutable" in header(script, "cache-control")


@pytest.mark.parametrize("name", ["missing.js", "..%2Findex.html", ".hidden.js", "index.html", "main-ABC.exe"])
def test_only_built_assets_are_served(client: Client, built_ui: Path, name: str) -> None:
    response = client.http.get(f"/assets/{name}", headers={"accept": "*/*"})
    assert response.status_code == 404
    assert json.loads(response.body)["message"]


def test_an_unbuilt_ui_says_how_to_build_it(client: Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(webui, "DIST", tmp_path / "nothing")
    response = client.http.get("/", headers={"accept": "text/html"})
    assert response.status_code == 503
    assert b"make webui" in response.body


def test_the_api_prefix_is_untouched(api: Api) -> None:
    assert api.client.http.get(PREFIX + "/healthcheck").status_code == 204


# Login takes JSON only; logout revokes the token on the server.


def _login(anonymous: Api, credentials: tuple[str, str], content_type: str | None) -> object:
    body = json.dumps({"access_key_id": credentials[0], "secret_access_key": credentials[1]}).encode()
    return anonymous.post(
        "/auth/login", body=body, headers={} if content_type is None else {"content-type": content_type}
    )


@pytest.mark.parametrize(
    "content_type",
    [
        "text/plain",
        "text/plain;charset=UTF-8",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        None,
        "application/jsonp",
        "text/json",
    ],
)
def test_login_refuses_what_a_page_on_another_site_can_post(
    anonymous: Api, credentials: tuple[str, str], content_type: str | None
) -> None:
    # A form, a text/plain fetch or a Blob without a type need no CORS preflight: each could log the browser
    # in under the sender's account (login CSRF). The body is valid JSON all the same.
    response = _login(anonymous, credentials, content_type)
    assert response.status_code == 400  # type: ignore[attr-defined]
    assert "Content-Type: application/json" in body_of(response)["message"]  # type: ignore[arg-type]
    assert "set-cookie" not in {k.lower() for k in response.headers}  # type: ignore[attr-defined]


@pytest.mark.parametrize("content_type", ["application/json", "application/json; charset=utf-8", "Application/JSON"])
def test_login_takes_json_as_every_client_sends_it(
    anonymous: Api, credentials: tuple[str, str], content_type: str
) -> None:
    response = _login(anonymous, credentials, content_type)
    assert response.status_code == 200  # type: ignore[attr-defined]
    assert body_of(response)["token"]  # type: ignore[arg-type]


def test_logout_revokes_the_session_token(api: Api, client: Client, credentials: tuple[str, str]) -> None:
    cookie = login_cookie(api, credentials)
    token = cookie.split("=", 1)[1]
    browser, bearer = with_cookie(client, cookie), Api(client, None)
    bearer_header = {"authorization": f"Bearer {token}"}
    assert browser.get("/user").status_code == 200
    assert bearer.get("/user", headers=bearer_header).status_code == 200
    # Without the CSRF header another same-site page could end the session: refused, and nothing revoked.
    assert browser.post("/auth/logout").status_code == 403
    assert browser.get("/user").status_code == 200
    response = browser.post("/auth/logout", headers=CSRF)
    assert response.status_code == 204 and "Max-Age=0" in header(response, "set-cookie")
    # A copy of the cookie, or of the token, no longer works: not in 24 hours, at once.
    assert browser.get("/user").status_code == 401
    assert bearer.get("/user", headers=bearer_header).status_code == 401
    assert browser.post("/auth/logout", headers=CSRF).status_code == 204  # logging out again is harmless
    assert with_cookie(client, login_cookie(api, credentials)).get("/user").status_code == 200  # a new login works


def test_logout_revokes_a_bearer_token(api: Api, client: Client, credentials: tuple[str, str]) -> None:
    token = body_of(_login(Api(client, None), credentials, "application/json"))["token"]  # type: ignore[arg-type]
    bearer = {"authorization": f"Bearer {token}"}
    assert api.get("/user", headers=bearer).status_code == 200
    assert Api(client, None).post("/auth/logout", headers=bearer).status_code == 204
    assert api.get("/user", headers=bearer).status_code == 401
    assert api.get("/user").status_code == 200  # Basic credentials are not sessions: unaffected
