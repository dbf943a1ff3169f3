"""Every route of app.py: which are public, that every other one has a permission rule and refuses missing or
wrong credentials."""

from __future__ import annotations

import base64
import logging
import re

import pytest
from chalice.test import Client

from chalicelib import webui, wiring
from chalicelib.api.permissions import rule_for

from .support import PREFIX, Api, app, assert_error, basic, body_of

PUBLIC = {
    ("GET", "/healthcheck"),
    ("GET", "/setup_lakefs"),
    ("POST", "/setup_lakefs"),
    ("POST", "/auth/login"),
    ("POST", "/auth/logout"),
    # Public in lakeFS's spec too (security: []): what the login page and setup wizard call before any login.
    ("GET", "/auth/capabilities"),
    # The OpenAPI document of the routes (api/openapi.py), public as lakeFS's /openapi.json.
    ("GET", "/openapi.json"),
    ("POST", "/setup_comm_prefs"),
    # lakeFS OSS answers these 501 (api/unsupported.py); public in lakeFS's spec.
    ("POST", "/sts/login"),
    ("GET", "/oidc/callback"),
    ("POST", "/auth/external/principal/login"),
}
# The web UI's files and lakeFS's UI addresses (chalicelib/webui.py): public, outside the API, never data.
UI_ROUTES = webui.UI_ROUTES
# The Iceberg REST catalog, the app's other face: its views check the caller's policies per operation (by the
# objects each one touches) rather than through the permission table; tests/api/test_iceberg_requests.py checks
# that every one of its routes but the token endpoint refuses a caller without credentials.
ICEBERG_PREFIX = "/iceberg/api/v1"


def all_routes() -> list[tuple[str, str]]:
    return sorted(
        (method, path.removeprefix(PREFIX))
        for path, methods in app.routes.items()
        if path not in UI_ROUTES and not path.startswith(ICEBERG_PREFIX + "/")
        for method in methods
    )


PROTECTED = [r for r in all_routes() if r not in PUBLIC]


def concrete(path: str) -> str:
    """The route with real values in its parameters: a request that would succeed with credentials."""
    return re.sub(r"\{[^}]+\}", lambda m: {"{branch}": "main", "{ref}": "main", "{tag}": "v1"}.get(m[0], "repo1"), path)


def test_every_route_is_under_api_v1_and_public_or_in_the_permission_table() -> None:
    assert all(path.startswith((PREFIX + "/", ICEBERG_PREFIX + "/")) for path in app.routes if path not in UI_ROUTES)
    assert all(set(app.routes[path]) == {"GET"} for path in UI_ROUTES)
    assert {path for path in app.routes if not path.startswith((PREFIX + "/", ICEBERG_PREFIX + "/"))} == UI_ROUTES
    unmapped = [(m, p) for m, p in all_routes() if (m, p) not in PUBLIC and rule_for(m, p) is None]
    assert unmapped == []
    assert set(all_routes()) >= PUBLIC


def wrong_credentials(key: str, secret: str) -> list[str]:
    return [
        basic(key, secret + "x"),  # wrong secret
        basic("AKIAJNOSUCHKEY00000Q", secret),  # unknown key
        basic(key, ""),  # empty secret
        "Basic " + base64.b64encode(key.encode()).decode(),  # no colon
        "Basic not-base64!!",
        "Bearer " + secret,  # another scheme
        basic(key, secret).replace("Basic", "Digest"),
        "",
    ]


@pytest.mark.parametrize(("method", "path"), PROTECTED, ids=[f"{m} {p}" for m, p in PROTECTED])
def test_protected_routes_refuse_missing_and_wrong_credentials(
    api: Api, anonymous: Api, credentials: tuple[str, str], method: str, path: str
) -> None:
    api.create_repo("repo1")
    api.post("/repositories/repo1/tags", json_body={"id": "v1", "ref": "main"})
    url = concrete(path)
    kwargs = {"query": {"path": "a.txt"}, "json_body": {"name": "x", "message": "m", "paths": ["a"]}}
    with_body = method != "HEAD"

    response = anonymous.request(method, url, **kwargs)  # type: ignore[arg-type]
    check_unauthorized(response, with_body)
    for header in wrong_credentials(*credentials):
        response = anonymous.request(method, url, headers={"authorization": header}, **kwargs)  # type: ignore[arg-type]
        check_unauthorized(response, with_body)
    # The same request with the right credentials gets past authentication.
    assert api.request(method, url, **kwargs).status_code != 401  # type: ignore[arg-type]


def check_unauthorized(response, with_body: bool) -> None:  # type: ignore[no-untyped-def]
    if with_body:
        assert assert_error(response, 401) == "error authenticating request"
    else:
        assert response.status_code == 401 and response.body == b""
    assert response.headers["WWW-Authenticate"].startswith("Basic")


def test_unauthenticated_writes_change_nothing(api: Api, anonymous: Api) -> None:
    anonymous.post("/repositories", json_body={"name": "sneaky", "storage_namespace": "s3://test-bucket/sneaky"})
    api.create_repo("repo1")
    anonymous.delete("/repositories/repo1")
    assert [r["id"] for r in body_of(api.get("/repositories"))["results"]] == ["repo1"]


NOT_IN_OSS = {("POST", "/sts/login"), ("GET", "/oidc/callback"), ("POST", "/auth/external/principal/login")}
PREFS = {"email": "a@example.com", "featureUpdates": False, "securityUpdates": False}


@pytest.mark.parametrize(("method", "path"), sorted(PUBLIC - {("POST", "/auth/login")}))
def test_public_routes_need_no_credentials(anonymous: Api, method: str, path: str) -> None:
    body = PREFS if path == "/setup_comm_prefs" else {"username": "admin"}
    kwargs = {"json_body": body} if method == "POST" else {}
    expected = (501,) if (method, path) in NOT_IN_OSS else (200, 204)
    assert anonymous.request(method, path, **kwargs).status_code in expected  # type: ignore[arg-type]


def test_login_takes_a_key_pair_instead_of_credentials(anonymous: Api, credentials: tuple[str, str]) -> None:
    key, secret = credentials
    response = anonymous.post("/auth/login", json_body={"access_key_id": key, "secret_access_key": secret})
    assert response.status_code == 200
    wrong = anonymous.post("/auth/login", json_body={"access_key_id": key, "secret_access_key": secret + "x"})
    assert assert_error(wrong, 401) == "error authenticating request"


def test_requests_without_an_accept_header_get_json(api: Api, client: Client, credentials: tuple[str, str]) -> None:
    response = client.http.get(PREFIX + "/repositories", headers={"authorization": basic(*credentials)})
    assert response.status_code == 200
    assert body_of(response)["results"] == []


def test_secrets_are_never_logged(
    client: Client, credentials: tuple[str, str], caplog: pytest.LogCaptureFixture, services: wiring.Services
) -> None:
    key, secret = credentials
    caplog.set_level(logging.DEBUG)

    def explode(*_: object) -> None:
        raise RuntimeError("boom")

    services.engine.repositories.list_repositories = explode  # type: ignore[method-assign]
    Api(client, (key, secret)).get("/repositories")
    Api(client, (key, secret + "x")).get("/repositories")
    key = {"access_key_id": "AKIAX", "secret_access_key": "setup-secret-value"}
    Api(client, None).post("/setup_lakefs", json_body={"username": "x", "key": key})
    assert "boom" in caplog.text  # the failure itself was logged ...
    for value in (secret, secret + "x", "setup-secret-value", basic(key, secret)):
        assert value not in caplog.text  # ... and no secret with it
