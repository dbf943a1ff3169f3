"""The listing route encodes its page straight from the page's columns: the same ObjectStats, field for field, as
the per-row serializer, for committed rows, staged rows, tombstones, common prefixes and awkward keys."""

from __future__ import annotations

import json

import lakefs_sdk
import pytest

from chalicelib import wiring
from chalicelib.api import serializers

from .support import Api, body_of, conforms

LS = "/repositories/repo1/refs/{ref}/objects/ls"
PATHS = ["a/1.txt", 'a/quote"d\\back', "a/ünï cödé ✓.txt", "b/c/3.txt", "tab\there", "top.txt"]


@pytest.fixture
def tree(api: Api, repo: str) -> None:
    for i, path in enumerate(PATHS):
        meta = {"x-lakefs-meta-k": f"v{i}", "x-lakefs-meta-z": "ü"} if i % 2 else {}
        api.upload(repo, "main", path, path.encode(), **meta)
    api.commit(repo, "main")
    # Staged on top: one replaced, one deleted, one new.
    api.upload(repo, "main", "a/1.txt", b"again", **{"x-lakefs-meta-new": "1"})
    assert api.delete(f"/repositories/{repo}/branches/main/objects", query={"path": "top.txt"}).status_code == 204
    api.upload(repo, "main", "a/2.txt", b"new")


@pytest.mark.parametrize("ref", ["main", "main@"])
@pytest.mark.parametrize(
    "query",
    [
        {},
        {"user_metadata": "false"},
        {"delimiter": "/"},
        {"prefix": "a/", "amount": "2"},
        {"prefix": "a/", "after": "a/1.txt", "delimiter": "/"},
    ],
)
def test_the_page_is_what_the_per_row_serializer_gives(
    api: Api, tree: None, services: wiring.Services, ref: str, query: dict[str, str]
) -> None:
    response = api.get(LS.format(ref=ref), query=query)
    assert response.status_code == 200 and response.headers["Content-Type"] == "application/json"
    body = conforms(lakefs_sdk.ObjectStatsList, body_of(response))
    assert body is not None
    page = services.engine.objects.list_objects(
        "repo1",
        ref,
        query.get("prefix", ""),
        query.get("delimiter", ""),
        query.get("after", ""),
        int(query.get("amount", "100")),
    )
    with_metadata = query.get("user_metadata") != "false"
    expected = serializers.listing(page, lambda item: serializers.listed_object(item, with_metadata))
    # Through json, as the per-row route encoded it: the same document.
    assert body_of(response) == json.loads(json.dumps(expected))


def test_staged_changes_and_metadata_show_in_the_listing(api: Api, tree: None) -> None:
    listed = {o["path"]: o for o in body_of(api.get(LS.format(ref="main")))["results"]}
    assert set(listed) == (set(PATHS) - {"top.txt"}) | {"a/2.txt"}
    assert listed["a/1.txt"]["metadata"] == {"new": "1"} and listed["a/1.txt"]["size_bytes"] == 5
    assert listed['a/quote"d\\back']["metadata"] == {"k": "v1", "z": "ü"}
    committed = {o["path"] for o in body_of(api.get(LS.format(ref="main@")))["results"]}
    assert committed == set(PATHS)
