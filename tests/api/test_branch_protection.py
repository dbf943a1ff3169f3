"""Branch protection through the API: the rules routes (settings with ETag / If-Match, the per-rule InternalApi
routes) and every write route refused on a protected branch, while merges into it go through."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import lakefs_sdk
import pytest
from chalice.test import Client

from chalicelib import wiring

from .support import Api, assert_error, body_of, conforms

SETTINGS = "/repositories/repo1/settings/branch_protection"
RULES = "/repositories/repo1/branch_protection"
BRANCH = "/repositories/repo1/branches/{branch}"
WRITE = "cannot write to protected branch"
COMMIT = "cannot commit to protected branch"


def protect(api: Api, *patterns: str, if_match: str | None = None) -> int:
    headers = {} if if_match is None else {"if-match": if_match}
    body = [lakefs_sdk.BranchProtectionRule(pattern=p).to_dict() for p in patterns]
    return api.request("PUT", SETTINGS, json_body=body, headers=headers).status_code


def etag(response: Any) -> str:
    return next(value for name, value in response.headers.items() if name.lower() == "etag")


def patterns(api: Api) -> list[str]:
    response = api.get(SETTINGS)
    assert response.status_code == 200, response.body
    return [conforms(lakefs_sdk.BranchProtectionRule, rule).pattern for rule in body_of(response)]


def test_rules_round_trip_with_etag_and_if_match(api: Api, repo: str) -> None:
    first = api.get(SETTINGS)
    assert body_of(first) == [] and etag(first) == '""'
    assert protect(api, "main", "release-*", "main") == 204
    assert patterns(api) == ["main", "release-*"]
    current = etag(api.get(SETTINGS))
    assert current != etag(first)
    # A writer that read an older ETag loses: 412, and the rules stay.
    assert_error(api.request("PUT", SETTINGS, json_body=[{"pattern": "x"}], headers={"if-match": etag(first)}), 412)
    assert patterns(api) == ["main", "release-*"]
    assert protect(api, "stable/*", if_match=current) == 204
    assert patterns(api) == ["stable/*"]
    assert protect(api, if_match=current.strip('"')) == 412
    assert protect(api) == 204 and patterns(api) == []


def test_bad_rules_are_400_and_unknown_repositories_404(api: Api, repo: str) -> None:
    for body in ({"pattern": "main"}, [{"pattern": ""}], [{"name": "main"}], ["main"], [{"pattern": "x" * 300}]):
        assert_error(api.request("PUT", SETTINGS, json_body=body), 400)
    assert_error(api.request("PUT", SETTINGS, body=b"[[[[", headers={"content-type": "application/json"}), 400)
    assert_error(api.request("PUT", SETTINGS, json_body=[{"pattern": f"p{i}"} for i in range(101)]), 400)
    assert_error(api.get("/repositories/nope/settings/branch_protection"), 404)
    assert_error(api.request("PUT", "/repositories/nope/settings/branch_protection", json_body=[]), 404)


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        (b'[{"pattern": "main", "note": NaN}]', "not valid JSON"),
        (b'[{"pattern": "main", "note": Infinity}]', "not valid JSON"),
        (b'[{"pattern": "ma\\ud800in"}]', "not valid Unicode"),
        (b'[{"pattern": "main", "note": ' + b"[" * 40 + b"]" * 40 + b"}]", "nests deeper"),
    ],
)
def test_the_rules_body_is_read_by_the_one_json_loader(api: Api, repo: str, raw: bytes, why: str) -> None:
    # What every other JSON route refuses: plain json.loads took NaN, lone surrogates and deep nesting.
    response = api.request("PUT", SETTINGS, body=raw, headers={"content-type": "application/json"})
    assert why in assert_error(response, 400)
    assert patterns(api) == []


def test_internal_per_rule_routes(api: Api, repo: str) -> None:
    assert api.get(RULES + "/set_allowed").status_code == 204
    assert api.post(RULES, json_body={"pattern": "main"}).status_code == 204
    assert api.post(RULES, json_body={"pattern": "dev-*"}).status_code == 204
    assert_error(api.post(RULES, json_body={"pattern": "main"}), 409)
    assert [rule["pattern"] for rule in body_of(api.get(RULES))] == ["main", "dev-*"]
    assert api.delete(RULES, json_body={"pattern": "main"}).status_code == 204
    assert_error(api.delete(RULES, json_body={"pattern": "main"}), 404)
    assert_error(api.post(RULES, json_body={}), 400)
    assert patterns(api) == ["dev-*"]


@pytest.fixture
def protected(api: Api, services: wiring.Services) -> dict[str, Any]:
    """main with two commits, a feature branch with one more, then main and release-* protected."""
    api.create_repo("repo1")
    api.upload("repo1", "main", "a", b"1")
    first = api.commit("repo1", "main", "first")
    api.upload("repo1", "main", "b", b"2")
    api.commit("repo1", "main", "second")
    for name in ("feature", "release-1"):
        assert api.post("/repositories/repo1/branches", json_body={"name": name, "source": "main"}).status_code == 201
    api.upload("repo1", "feature", "c", b"3")
    feature = api.commit("repo1", "feature", "feature work")
    staging = body_of(api.get(BRANCH.format(branch="main") + "/staging/backing", query={"path": "linked"}))
    services.engine.ports.blocks.put(staging["physical_address"], b"linked")
    assert protect(api, "main", "release-*") == 204
    return {"first": first["id"], "feature": feature["id"], "staging": staging}


def test_every_write_route_refuses_a_protected_branch(api: Api, protected: dict[str, Any]) -> None:
    main = BRANCH.format(branch="main")
    head = body_of(api.get(main))["commit_id"]
    refused: dict[str, tuple[Any, str]] = {
        "upload": (
            api.post(
                main + "/objects", query={"path": "x"}, body=b"x", headers={"content-type": "application/octet-stream"}
            ),
            WRITE,
        ),
        "link": (
            api.request(
                "PUT",
                main + "/staging/backing",
                query={"path": "linked"},
                json_body={"staging": protected["staging"], "checksum": "c", "size_bytes": 6},
            ),
            WRITE,
        ),
        "batch upload": (
            api.post(main + "/objects/batch", body=b'{"objects": [{"path": "x", "size_bytes": 1}]}\nx'),
            WRITE,
        ),
        "copy": (api.post(main + "/objects/copy", query={"dest_path": "a2"}, json_body={"src_path": "a"}), WRITE),
        "delete": (api.delete(main + "/objects", query={"path": "a"}), WRITE),
        "user metadata": (
            api.request(
                "PUT", main + "/objects/stat/user_metadata", query={"path": "a"}, json_body={"set": {"k": "v"}}
            ),
            WRITE,
        ),
        "reset": (api.request("PUT", main, json_body={"type": "reset"}), WRITE),
        "reset object": (api.request("PUT", main, json_body={"type": "object", "path": "a"}), WRITE),
        "commit": (api.post(main + "/commits", json_body={"message": "m", "allow_empty": True}), COMMIT),
        "commit async": (api.post(main + "/commits/async", json_body={"message": "m", "allow_empty": True}), COMMIT),
        "revert": (api.post(main + "/revert", json_body={"ref": "main", "parent_number": 0}), COMMIT),
        "cherry-pick": (api.post(main + "/cherry-pick", json_body={"ref": protected["feature"]}), COMMIT),
        "hard reset": (api.request("PUT", main + "/hard_reset", query={"ref": protected["first"]}), COMMIT),
        "delete branch": (api.delete(BRANCH.format(branch="release-1")), "cannot delete protected branch"),
        "write to a glob match": (
            api.post(
                BRANCH.format(branch="release-1") + "/objects",
                query={"path": "x"},
                body=b"x",
                headers={"content-type": "text/plain"},
            ),
            WRITE,
        ),
    }
    for name, (response, message) in refused.items():
        assert assert_error(response, 403) == message, name
    bulk = api.post(main + "/objects/delete", json_body={"paths": ["a", "b"]})
    assert bulk.status_code == 200
    assert [(e["path"], e["status_code"], e["message"]) for e in body_of(bulk)["errors"]] == [
        ("a", 403, WRITE),
        ("b", 403, WRITE),
    ]
    assert body_of(api.get(main))["commit_id"] == head
    assert body_of(api.get(main + "/diff"))["results"] == []
    assert body_of(api.get("/repositories/repo1/refs/main/objects/stat", query={"path": "a"}))["path"] == "a"


def test_merges_into_a_protected_branch_and_other_branches_are_allowed(api: Api, protected: dict[str, Any]) -> None:
    merged = api.post("/repositories/repo1/refs/feature/merge/main", json_body={"message": "ship it"})
    assert merged.status_code == 200, merged.body
    assert body_of(api.get(BRANCH.format(branch="main")))["commit_id"] == body_of(merged)["reference"]
    assert body_of(api.get("/repositories/repo1/refs/main/objects/stat", query={"path": "c"}))["path"] == "c"
    api.upload("repo1", "feature", "d", b"4")
    api.commit("repo1", "feature", "more")
    assert api.delete(BRANCH.format(branch="feature")).status_code == 204
    # Unprotecting takes effect at once in the container that made the change.
    assert protect(api) == 204
    api.upload("repo1", "main", "x", b"x")
    assert api.delete(BRANCH.format(branch="release-1")).status_code == 204


def test_rules_need_their_permissions(api: Api, client: Client, repo: str) -> None:
    def user_in(group: str) -> Api:
        user = group.lower()
        assert api.post("/auth/users", json_body={"id": user}).status_code == 201
        assert api.request("PUT", f"/auth/groups/{group}/members/{user}").status_code == 201
        pair = body_of(api.post(f"/auth/users/{user}/credentials"))
        return Api(client, (pair["access_key_id"], pair["secret_access_key"]))

    developer, viewer = user_in("Developers"), user_in("Viewers")
    assert developer.get(SETTINGS).status_code == 200
    assert developer.get(RULES).status_code == 200
    forbidden: list[Callable[[], Any]] = [
        lambda: developer.request("PUT", SETTINGS, json_body=[{"pattern": "main"}]),
        lambda: developer.post(RULES, json_body={"pattern": "main"}),
        lambda: developer.delete(RULES, json_body={"pattern": "main"}),
        lambda: developer.get(RULES + "/set_allowed"),
        lambda: viewer.get(SETTINGS),
    ]
    for call in forbidden:
        assert_error(call(), 403)
    assert patterns(api) == []
