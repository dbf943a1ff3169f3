"""lakeFS's web UI addresses open our UI (chalicelib/webui.py, webui_links.py): a relative 302 to the same page's
hash route, its query translated; anything under /api/v1 still answers the API's JSON 404."""

from __future__ import annotations

import json

import pytest
from chalice.test import Client

from chalicelib.webui_links import hash_route
from tests.api.support import PREFIX, app


@pytest.fixture
def client() -> Client:
    with Client(app) as c:
        yield c


def _location(client: Client, path: str) -> str:
    response = client.http.get(path)
    assert response.status_code == 302, (path, response.status_code, response.body)
    headers = {k.lower(): v for k, v in response.headers.items()}
    assert headers["cache-control"] == "no-cache"
    return str(headers["location"])


@pytest.mark.parametrize(
    ("path", "location"),
    [
        ("/repositories", "./#/repositories"),
        ("/repositories/quickstart", "../#/repositories/quickstart/objects"),
        ("/repositories/quickstart/objects", "../../#/repositories/quickstart/objects"),
        ("/repositories/x/branches", "../../#/repositories/x/branches"),
        (
            "/repositories/quickstart/objects?ref=main&path=lakes/",
            "../../#/repositories/quickstart/objects?ref=main&prefix=lakes/",
        ),
        (
            "/repositories/quickstart/object?ref=dev&path=lakes/data.parquet",
            "../../#/repositories/quickstart/objects?ref=dev&prefix=lakes/&path=lakes/data.parquet",
        ),
        ("/repositories/q/commits/abc123", "../../../#/repositories/q/commits/abc123"),
        ("/repositories/q/commits?ref=dev", "../../#/repositories/q/commits?ref=dev"),
        ("/repositories/q/branches/dev/revert", "../../../../#/repositories/q/branches"),
        ("/repositories/q/pulls/create", "../../../#/repositories/q/pulls"),
        ("/repositories/q/actions/run-1", "../../../#/repositories/q/actions/run-1"),
        ("/repositories/q/compare?ref=main&compare=dev", "../../#/repositories/q/compare?base=main&compare=dev"),
        ("/repositories/q/settings/retention", "../../../#/repositories/q/settings"),
        ("/auth/users", "../#/admin/users"),
        ("/auth/users/ada/policies/effective", "../../../../#/admin/users/ada"),
        ("/auth/groups/admins/members", "../../../#/admin/groups/admins"),
        ("/auth/login", "../#/repositories"),
        ("/datasets", "./#/repositories"),
    ],
)
def test_lakefs_ui_addresses_redirect_to_our_pages(client: Client, path: str, location: str) -> None:
    assert _location(client, path) == location


def test_the_redirect_is_relative_to_the_path_as_written() -> None:
    # A trailing slash is one folder deeper for the browser resolving the Location.
    from chalicelib.webui_links import relative_redirect

    assert relative_redirect(0, "#/x") == "./#/x" and relative_redirect(3, "#/x") == "../../../#/x"


def test_names_are_percent_encoded_in_the_hash() -> None:
    assert hash_route(["repositories", "a b", "commits", "c/d"], {}) == "#/repositories/a%20b/commits/c%2Fd"


@pytest.mark.parametrize(
    "path", ["/repositories/quickstart/objects", "/repositories/x/branches", "/repositories/x/nope/y/z"]
)
def test_the_api_keeps_its_json_404(client: Client, path: str) -> None:
    # The same paths under /api/v1 are API routes or none: never the UI's redirect. (The test client answers no
    # route with API Gateway's 403; the local server's 404 is tests/ui/test_newcomer_slips.py's.)
    response = client.http.get(PREFIX + path, headers={"accept": "application/json"})
    assert response.status_code in (401, 403, 404), response.status_code
    assert response.headers.get("Location") is None
    assert isinstance(json.loads(response.body), dict)


@pytest.mark.parametrize(
    "path",
    [
        "/repositories/%ff%fe/objects?path=%ed%a0%80",
        "/repositories/%00/commits/%2e%2e",
        "/auth/users/" + "x" * 5000,
        "/repositories/r/object?path=%0d%0aSet-Cookie:%20x=1",
        "/repositories/r/objects?ref=a&ref=b&path=",
    ],
)
def test_hostile_addresses_redirect_inside_the_ui(client: Client, path: str) -> None:
    location = _location(client, path)
    assert "#/" in location and "\r" not in location and "\n" not in location
    assert location.split("#/", 1)[0].strip("./") == ""  # never off the UI's own origin and root
