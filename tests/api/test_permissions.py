"""Permissions through the API, per role: Admins, SuperUsers, Developers, Viewers, a user in no group, and a
policy scoped to one repository. 401 without valid credentials, 403 when authenticated but not allowed, and
a refused request changes nothing."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from chalice.test import Client

from .support import Api, assert_error, body_of

ROLES = ["Admins", "SuperUsers", "Developers", "Viewers", None]
Op = Callable[[Api], Any]


@pytest.fixture
def as_role(api: Api, client: Client) -> Callable[[str | None], Api]:
    """A client for a fresh user in the given built-in group (None: in no group)."""
    made: dict[str | None, Api] = {}

    def make(group: str | None) -> Api:
        if group not in made:
            user_id = (group or "nobody").lower()
            assert api.post("/auth/users", json_body={"id": user_id}).status_code == 201
            if group:
                assert api.request("PUT", f"/auth/groups/{group}/members/{user_id}").status_code == 201
            pair = body_of(api.post(f"/auth/users/{user_id}/credentials"))
            made[group] = Api(client, (pair["access_key_id"], pair["secret_access_key"]))
        return made[group]

    return make


@pytest.fixture
def data(api: Api) -> None:
    api.create_repo("repo1")
    api.upload("repo1", "main", "a.txt", b"hello")
    api.commit("repo1", "main")
    api.post("/repositories/repo1/branches", json_body={"name": "dev", "source": "main"})


OBJECTS = "/repositories/repo1/refs/main/objects"
OPERATIONS: dict[str, tuple[Op, list[str | None]]] = {
    # name: (operation, roles allowed)
    "list repositories": (lambda a: a.get("/repositories"), ["Admins", "SuperUsers", "Developers", "Viewers"]),
    "read object": (
        lambda a: a.get(OBJECTS, query={"path": "a.txt"}),
        ["Admins", "SuperUsers", "Developers", "Viewers"],
    ),
    "stat object": (
        lambda a: a.get(OBJECTS + "/stat", query={"path": "a.txt"}),
        ["Admins", "SuperUsers", "Developers", "Viewers"],
    ),
    "list objects": (lambda a: a.get(OBJECTS + "/ls"), ["Admins", "SuperUsers", "Developers", "Viewers"]),
    "log": (
        lambda a: a.get("/repositories/repo1/refs/main/commits"),
        ["Admins", "SuperUsers", "Developers", "Viewers"],
    ),
    "read config": (lambda a: a.get("/config"), ["Admins", "SuperUsers", "Developers", "Viewers"]),
    "upload": (
        lambda a: a.post(
            "/repositories/repo1/branches/dev/objects",
            query={"path": "new.txt"},
            body=b"x",
            headers={"content-type": "application/octet-stream"},
        ),
        ["Admins", "SuperUsers", "Developers"],
    ),
    "presigned upload": (
        lambda a: a.get("/repositories/repo1/branches/dev/staging/backing", query={"path": "p.txt"}),
        ["Admins", "SuperUsers", "Developers"],
    ),
    "copy": (
        lambda a: a.post(
            "/repositories/repo1/branches/dev/objects/copy",
            query={"dest_path": "copy.txt"},
            json_body={"src_path": "a.txt", "src_ref": "main"},
        ),
        ["Admins", "SuperUsers", "Developers"],
    ),
    "update object user metadata": (
        lambda a: a.request(
            "PUT",
            "/repositories/repo1/branches/dev/objects/stat/user_metadata",
            query={"path": "a.txt"},
            json_body={"set": {"owner": "me"}},
        ),
        ["Admins", "SuperUsers", "Developers"],
    ),
    "delete object": (
        lambda a: a.delete("/repositories/repo1/branches/dev/objects", query={"path": "a.txt"}),
        ["Admins", "SuperUsers", "Developers"],
    ),
    "create branch": (
        lambda a: a.post("/repositories/repo1/branches", json_body={"name": "feature", "source": "main"}),
        ["Admins", "SuperUsers", "Developers"],
    ),
    "create tag": (
        lambda a: a.post("/repositories/repo1/tags", json_body={"id": "v1", "ref": "main"}),
        ["Admins", "SuperUsers", "Developers"],
    ),
    "create repository": (
        lambda a: a.post("/repositories", json_body={"name": "repo2", "storage_namespace": "s3://test-bucket/r2"}),
        ["Admins", "SuperUsers"],
    ),
    "delete repository": (lambda a: a.delete("/repositories/repo1"), ["Admins", "SuperUsers"]),
    "list users": (lambda a: a.get("/auth/users"), ["Admins"]),
    "create user": (lambda a: a.post("/auth/users", json_body={"id": "mallory"}), ["Admins"]),
    "create policy": (
        lambda a: a.post(
            "/auth/policies",
            json_body={"id": "all", "statement": [{"effect": "allow", "action": ["*"], "resource": "*"}]},
        ),
        ["Admins"],
    ),
    "join Admins": (lambda a: a.request("PUT", "/auth/groups/Admins/members/viewers"), ["Admins"]),
}


@pytest.mark.parametrize("role", ROLES, ids=[r or "no-group" for r in ROLES])
@pytest.mark.parametrize("name", sorted(OPERATIONS))
def test_each_role_may_do_what_its_policies_allow(
    api: Api, as_role: Callable[[str | None], Api], data: None, role: str | None, name: str
) -> None:
    operation, allowed = OPERATIONS[name]
    as_role("Viewers")  # "join Admins" needs the viewers user to exist
    caller = as_role(role)
    before = snapshot(api)
    response = operation(caller)
    if role in allowed:
        assert response.status_code < 400, (response.status_code, response.body)
    else:
        message = assert_error(response, 403)
        assert "not allowed" in message
        assert snapshot(api) == before  # a refused request changes nothing


def snapshot(api: Api) -> dict[str, Any]:
    """Everything a refused request might have changed, as the admin sees it."""
    state: dict[str, Any] = {
        "repositories": body_of(api.get("/repositories"))["results"],
        "users": body_of(api.get("/auth/users"))["results"],
        "admins": body_of(api.get("/auth/groups/Admins/members"))["results"],
        "policies": [p["id"] for p in body_of(api.get("/auth/policies"))["results"]],
    }
    if any(r["id"] == "repo1" for r in state["repositories"]):
        state["branches"] = body_of(api.get("/repositories/repo1/branches"))["results"]
        state["tags"] = body_of(api.get("/repositories/repo1/tags"))["results"]
        state["dev"] = body_of(api.get("/repositories/repo1/refs/dev/objects/ls"))["results"]
    return state


@pytest.mark.parametrize("role", ROLES, ids=[r or "no-group" for r in ROLES])
def test_everyone_manages_their_own_keys_only(api: Api, as_role: Callable[[str | None], Api], role: str | None) -> None:
    caller = as_role(role)
    me = body_of(caller.get("/user"))["user"]["id"]
    own = caller.post(f"/auth/users/{me}/credentials")
    if role is None:
        assert_error(own, 403)  # AuthManageOwnCredentials comes with a group
        return
    assert own.status_code == 201
    key = body_of(own)["access_key_id"]
    assert key in [k["access_key_id"] for k in body_of(caller.get(f"/auth/users/{me}/credentials"))["results"]]
    assert caller.delete(f"/auth/users/{me}/credentials/{key}").status_code == 204
    others = caller.post("/auth/users/admin/credentials")
    if role == "Admins":
        assert others.status_code == 201
    else:
        assert_error(others, 403)


def test_a_policy_scoped_to_one_repository(api: Api, client: Client, data: None) -> None:
    api.create_repo("sales")
    api.upload("sales", "main", "q1.csv", b"1")
    policy = {
        "id": "sales-team",
        "statement": [
            {"effect": "allow", "action": ["fs:*"], "resource": "arn:lakefs:fs:::repository/sales"},
            {"effect": "allow", "action": ["fs:*"], "resource": "arn:lakefs:fs:::repository/sales/*"},
            {"effect": "allow", "action": ["fs:ListRepositories", "fs:ReadConfig"], "resource": "*"},
        ],
    }
    assert api.post("/auth/policies", json_body=policy).status_code == 201
    api.post("/auth/groups", json_body={"id": "sales"})
    api.post("/auth/users", json_body={"id": "sam"})
    api.request("PUT", "/auth/groups/sales/members/sam")
    api.request("PUT", "/auth/groups/sales/policies/sales-team")
    pair = body_of(api.post("/auth/users/sam/credentials"))
    sam = Api(client, (pair["access_key_id"], pair["secret_access_key"]))

    assert sam.get("/repositories/sales/refs/main/objects", query={"path": "q1.csv"}).body == b"1"
    assert sam.upload("sales", "main", "q2.csv", b"2")["size_bytes"] == 1
    assert sam.commit("sales", "main")["message"] == "a commit"
    assert_error(sam.get("/repositories/repo1/refs/main/objects", query={"path": "a.txt"}), 403)
    response = sam.post(
        "/repositories/repo1/branches/main/objects",
        query={"path": "x"},
        body=b"x",
        headers={"content-type": "application/octet-stream"},
    )
    assert_error(response, 403)
    assert_error(sam.delete("/repositories/repo1"), 403)
    # A deny narrows it: no deleting under sales/archive/.
    api.request(
        "PUT",
        "/auth/policies/sales-team",
        json_body={
            **policy,
            "statement": policy["statement"]
            + [
                {
                    "effect": "deny",
                    "action": ["fs:DeleteObject"],
                    "resource": "arn:lakefs:fs:::repository/sales/object/archive/*",
                }
            ],
        },
    )
    sam.upload("sales", "main", "archive/old.csv", b"0")
    api.upload("sales", "main", "tmp.csv", b"t")
    result = sam.post(
        "/repositories/sales/branches/main/objects/delete", json_body={"paths": ["archive/old.csv", "tmp.csv"]}
    )
    assert result.status_code == 200
    assert [(e["path"], e["status_code"]) for e in body_of(result)["errors"]] == [("archive/old.csv", 403)]
    listed = [o["path"] for o in body_of(api.get("/repositories/sales/refs/main/objects/ls"))["results"]]
    assert "archive/old.csv" in listed and "tmp.csv" not in listed


def test_401_and_403_are_told_apart(anonymous: Api, as_role: Callable[[str | None], Api], data: None) -> None:
    assert_error(anonymous.delete("/repositories/repo1"), 401)
    assert_error(as_role("Viewers").delete("/repositories/repo1"), 403)


def test_read_only_repositories_refuse_writes_even_to_admins(api: Api) -> None:
    api.create_repo("frozen", read_only=True)
    branch = "/repositories/frozen/branches/main"
    refused = {
        "upload": api.post(branch + "/objects", query={"path": "a"}, body=b"a", headers={"content-type": "text/plain"}),
        "presigned upload": api.get(branch + "/staging/backing", query={"path": "a"}),
        "delete": api.delete(branch + "/objects", query={"path": "a"}),
        "bulk delete": api.post(branch + "/objects/delete", json_body={"paths": ["a"]}),
        "copy": api.post(branch + "/objects/copy", query={"dest_path": "b"}, json_body={"src_path": "a"}),
        "commit": api.post(branch + "/commits", json_body={"message": "m", "allow_empty": True}),
    }
    statuses = {name: response.status_code for name, response in refused.items()}
    # copy reads its source first: the source does not exist, which a read-only repository cannot change.
    assert statuses == {name: 404 if name == "copy" else 403 for name in refused}
    assert body_of(api.get("/repositories/frozen/refs/main/objects/ls"))["results"] == []
    assert len(body_of(api.get("/repositories/frozen/refs/main/commits"))["results"]) == 1
    assert json.loads(api.get("/repositories/frozen").body)["read_only"] is True
