"""What one page of ``objects/ls`` costs the app, counted: AWS calls per page on moto with the deployed wiring
(HTTP Basic and Bearer tokens), and the work per row the route spares (no JSON parse of stored user metadata).

Counts, not times (issue 23): the listing row of ``make bench`` times the same route against ``list_objects``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from chalicelib.graveler.records import Entry
from tests.api.support import Api, body_of
from tests.perf.support import CallCounter, app_on_moto

REGION = "us-east-1"
BUCKET = "listing-cost-bucket"
REPO = "listing"
OBJECTS = 30
PAGE = 10
LS = f"/repositories/{REPO}/refs/main/objects/ls"
# A page's AWS calls: the branch (its commit and staging token) and the staging query. Authentication and
# authorization are served from what a warm container keeps (the key pair, the user's policies).
BASIC_CALLS_PER_PAGE = 2
# A Bearer token adds its revocation check: never cached, so that a logout applies at once in every container.
BEARER_CALLS_PER_PAGE = 3


@pytest.fixture
def api(counter: CallCounter) -> Iterator[Api]:
    with app_on_moto(BUCKET, REPO, "lscost") as (api, services):
        engine = services.engine
        for i in range(OBJECTS):
            engine.objects.link_object(
                REPO, "main", f"rows/{i:03}", Entry(f"s3://{BUCKET}/{REPO}/data/{i:03}", 1, f"{i:032x}", 1)
            )
        engine.commits.commit(REPO, "main", "admin", "seed")
        yield api


def _list_all(api: Api, headers: dict[str, str] | None = None) -> int:
    """Pages through the listing, PAGE rows at a time; returns the number of pages."""
    after, pages, rows = "", 0, 0
    while True:
        response = api.get(LS, query={"prefix": "rows/", "amount": PAGE, "after": after}, headers=headers)
        assert response.status_code == 200, response.body
        body = body_of(response)
        pages, rows = pages + 1, rows + len(body["results"])
        if not body["pagination"]["has_more"]:
            assert rows == OBJECTS
            return pages
        after = body["pagination"]["next_offset"]


def _login(api: Api) -> str:
    assert api.credentials is not None
    access_key_id, secret = api.credentials
    response = api.post("/auth/login", json_body={"access_key_id": access_key_id, "secret_access_key": secret})
    assert response.status_code == 200, response.body
    token: str = body_of(response)["token"]
    return token


def test_a_listing_page_makes_two_aws_calls_with_basic_auth(api: Api, counter: CallCounter) -> None:
    _list_all(api)  # warm: the container's caches as a warm Lambda holds them
    pages = 0

    def listing() -> None:
        nonlocal pages
        pages = _list_all(api)

    calls = counter.during(listing)
    assert pages == OBJECTS // PAGE
    total = sum(calls.values())
    assert total <= BASIC_CALLS_PER_PAGE * pages, dict(calls)


def test_a_bearer_listing_page_adds_only_the_revocation_check_and_a_logout_still_applies_at_once(
    api: Api, counter: CallCounter
) -> None:
    bearer = {"authorization": f"Bearer {_login(api)}"}
    _list_all(api, bearer)
    pages = 0

    def listing() -> None:
        nonlocal pages
        pages = _list_all(api, bearer)

    calls = counter.during(listing)
    total = sum(calls.values())
    assert total <= BEARER_CALLS_PER_PAGE * pages, dict(calls)
    # The uncached check is what makes this hold: the very next page after the logout is refused.
    assert api.post("/auth/logout", headers=bearer).status_code == 204
    refused = api.get(LS, query={"prefix": "rows/", "amount": PAGE}, headers=bearer)
    assert refused.status_code == 401
    assert body_of(refused) == {"message": "error authenticating request"}


def test_a_listing_page_does_not_parse_the_stored_user_metadata_of_its_rows(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    with_metadata = 12
    for i in range(with_metadata):
        meta = {"x-lakefs-meta-owner": f"team-{i}", "x-lakefs-meta-q": 'a"b\\c', "x-lakefs-meta-z": "ü"}
        api.upload(REPO, "main", f"meta/{i:03}", b"m", **meta)
    api.commit(REPO, "main", "with metadata")
    parses = 0
    loads = json.loads

    def counting_loads(text: Any, *args: Any, **kwargs: Any) -> Any:
        nonlocal parses
        parses += 1
        return loads(text, *args, **kwargs)

    monkeypatch.setattr(json, "loads", counting_loads)
    response = api.get(LS, query={"prefix": "meta/", "amount": 100})
    monkeypatch.undo()
    assert response.status_code == 200
    results = body_of(response)["results"]
    expected = [{"owner": f"team-{i}", "q": 'a"b\\c', "z": "ü"} for i in range(with_metadata)]
    assert [r["metadata"] for r in results] == expected
    # Each row's stored metadata is JSON already: it goes into the page as it is, not parsed and encoded again.
    assert parses < with_metadata, parses
