"""lakeFS compatibility, round 2, through the API (chalice.test.Client on the in-memory twins): hidden branches,
size_bytes on every diff row, the repository shape and creation order, sample data, lakeFS's error words, the
reported version, the log's order and seconds, and updating an object's user metadata."""

from __future__ import annotations

import json
import tomllib

import lakefs_sdk
import pytest

from chalicelib import wiring
from chalicelib.samples import SAMPLE_COMMIT_MESSAGE, sample_objects
from tests.clocks import engine_clock

from .support import NAMESPACE, ROOT, Api, assert_error, body_of, conforms

R = "/repositories/repo1"


def _branches(api: Api, **query: str) -> list[str]:
    listing = conforms(lakefs_sdk.RefList, body_of(api.get(R + "/branches", query=query)))
    return [ref.id for ref in listing.results]


# ---- 1. hidden branches ---------------------------------------------------------------------------------------


def test_hidden_branches_are_listed_only_with_show_hidden(api: Api, repo: str) -> None:
    for name, hidden in (("aaa", False), ("tx-1", True), ("zzz", False)):
        body = {"name": name, "source": "main", "hidden": hidden}
        assert api.post(R + "/branches", json_body=body).status_code == 201
    assert _branches(api) == ["aaa", "main", "zzz"]
    assert _branches(api, show_hidden="true") == ["aaa", "main", "tx-1", "zzz"]
    assert _branches(api, show_hidden="False") == ["aaa", "main", "zzz"]
    # Pages count the branches shown: a hidden one never takes a slot.
    first = body_of(api.get(R + "/branches", query={"amount": "2"}))
    assert [r["id"] for r in first["results"]] == ["aaa", "main"] and first["pagination"]["has_more"]
    rest = body_of(api.get(R + "/branches", query={"amount": "2", "after": "main"}))
    assert [r["id"] for r in rest["results"]] == ["zzz"] and not rest["pagination"]["has_more"]
    # Still a branch like any other: readable, writable, committable, and hidden after the commit moved it.
    assert body_of(api.get(R + "/branches/tx-1"))["id"] == "tx-1"
    api.upload(repo, "tx-1", "a.txt", b"x")
    api.commit(repo, "tx-1")
    assert _branches(api) == ["aaa", "main", "zzz"]


# ---- 2. size_bytes on every diff row --------------------------------------------------------------------------


@pytest.fixture
def changed(api: Api, repo: str) -> None:
    """main: keep (4 bytes), gone (3 bytes) committed; dev: gone removed, new (5 bytes) added, committed."""
    api.upload(repo, "main", "keep", b"keep")
    api.upload(repo, "main", "gone", b"old")
    api.commit(repo, "main")
    api.post(R + "/branches", json_body={"name": "dev", "source": "main"})
    api.delete(R + "/branches/dev/objects", query={"path": "gone"})
    api.upload(repo, "dev", "new", b"fresh")


def _rows(payload: dict) -> list[tuple[str, str, int | None]]:
    listing = conforms(lakefs_sdk.DiffList, {k: v for k, v in payload.items() if k in ("pagination", "results")})
    return [(d.path, d.type, d.size_bytes) for d in listing.results]


def test_every_diff_row_carries_size_bytes(api: Api, repo: str, changed: None) -> None:
    expected = [("gone", "removed", 0), ("new", "added", 5)]
    assert _rows(body_of(api.get(R + "/branches/dev/diff"))) == expected
    api.commit(repo, "dev")
    assert _rows(body_of(api.get(R + "/refs/main/diff/dev"))) == expected
    assert _rows(body_of(api.get(R + "/refs/main/diff/dev", query={"type": "two_dot"}))) == expected
    preview = body_of(api.post(R + "/refs/dev/merge/main", json_body={"dry_run": True}))
    assert [(d["path"], d["type"], d["size_bytes"]) for d in preview["results"]] == expected
    # A common prefix folded by the delimiter is not an object: no size, as lakeFS.
    api.upload(repo, "dev", "dir/x", b"1")
    folded = body_of(api.get(R + "/branches/dev/diff", query={"delimiter": "/"}))["results"]
    assert folded == [{"type": "prefix_changed", "path": "dir/", "path_type": "common_prefix"}]


# ---- 3. the repository's shape and creation order ------------------------------------------------------------


def test_repositories_say_their_storage_id(api: Api, repo: str) -> None:
    shown = conforms(lakefs_sdk.Repository, body_of(api.get(R)))
    assert shown.storage_id == ""
    listed = body_of(api.get("/repositories"))["results"]
    assert [r["storage_id"] for r in listed] == [""]
    made = api.create_repo("repo2", storage_id="")
    assert made["storage_id"] == ""


def test_an_unknown_storage_id_is_400(api: Api) -> None:
    body = {"name": "repo2", "storage_namespace": f"{NAMESPACE}/repo2", "storage_id": "azure-west"}
    assert "storage_id" in assert_error(api.post("/repositories", json_body=body), 400)
    assert_error(api.get("/repositories/repo2"), 404)


@pytest.mark.parametrize(
    "extra",
    [{"sample_data": True}, {"storage_id": "nope"}, {"storage_namespace": "gs://elsewhere/x"}, {"read_only": True}],
    ids=["sample_data", "storage_id", "namespace", "read_only"],
)
def test_an_existing_name_is_409_before_any_other_check(api: Api, repo: str, extra: dict) -> None:
    body = {"name": repo, "storage_namespace": f"{NAMESPACE}/other", **extra}
    assert assert_error(api.post("/repositories", json_body=body), 409).startswith("repository already exists")
    bare = api.post("/repositories", json_body=body, query={"bare": "true"})
    assert_error(bare, 409)


# ---- 4. sample data -------------------------------------------------------------------------------------------


def test_sample_data_is_committed_into_the_new_repository(api: Api, services: wiring.Services) -> None:
    made = api.create_repo("samples", sample_data=True)
    assert made["id"] == "samples"
    log = body_of(api.get("/repositories/samples/refs/main/commits"))["results"]
    assert [c["message"] for c in log] == [SAMPLE_COMMIT_MESSAGE, "Repository created"]
    assert log[0]["committer"] == "admin"
    assert body_of(api.get("/repositories/samples/branches/main/diff"))["results"] == []
    listed = body_of(api.get("/repositories/samples/refs/main/objects/ls", query={"amount": "100"}))["results"]
    expected = sample_objects("samples")
    assert [(o["path"], o["size_bytes"], o["content_type"]) for o in listed] == [
        (s.path, len(s.data), s.content_type) for s in expected
    ]
    for sample in expected:
        response = api.get(
            "/repositories/samples/refs/main/objects", query={"path": sample.path}, headers={"accept": "*/*"}
        )
        assert response.body == sample.data, sample.path


# The dataset itself (layout, sizes, every file decoded): tests/unit/samples/test_samples.py.


# ---- 5. lakeFS's words ----------------------------------------------------------------------------------------


def test_errors_say_lakefs_words_first(api: Api, repo: str) -> None:
    api.upload(repo, "main", "a", b"1")
    api.commit(repo, "main")
    api.post(R + "/branches", json_body={"name": "dev", "source": "main"})
    api.upload(repo, "dev", "b", b"2")
    api.commit(repo, "dev")
    api.upload(repo, "main", "dirty", b"3")

    merge = api.post(R + "/refs/dev/merge/main", json_body={})
    assert assert_error(merge, 400).startswith("uncommitted changes (dirty branch)")
    api.request("PUT", R + "/branches/main", json_body={"type": "reset"})
    nothing = api.post(R + "/branches/main/commits", json_body={"message": "empty"})
    assert assert_error(nothing, 400).startswith("no changes")
    api.post(R + "/refs/dev/merge/main", json_body={})
    again = api.post(R + "/refs/dev/merge/main", json_body={})
    assert assert_error(again, 400).startswith("no changes")
    api.post(R + "/tags", json_body={"id": "v1", "ref": "main"})
    assert assert_error(api.post(R + "/tags", json_body={"id": "v1", "ref": "main"}), 409).startswith(
        "tag already exists"
    )
    duplicate = api.post(R + "/branches", json_body={"name": "dev", "source": "main"})
    assert assert_error(duplicate, 409).startswith("branch already exists")
    assert assert_error(api.delete(R + "/branches/main"), 403).startswith("cannot delete repository default branch")
    assert assert_error(api.get(R + "/branches/nope"), 404).startswith("branch not found")
    assert assert_error(api.get("/repositories/nope"), 404).startswith("repository not found")


# ---- 6. the version -------------------------------------------------------------------------------------------


def test_config_reports_the_lakefs_api_version_and_lakelets_own(api: Api) -> None:
    version = body_of(api.get("/config"))["version_config"]
    assert version["version"] == lakefs_sdk.__version__ == "1.88.0"
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert version["lakelet_version"] == project
    # lakeFS's word for its open-source server: lakectl warns "the server appears to be Enterprise" on every
    # command when version_context says anything else.
    assert version["version_context"] == "lakeFS"
    assert body_of(api.get("/config/version")) == version
    # The SDK's model takes it, and lakeFS clients compare it as a version (lakefs-spec needs >= 1.3.1).
    parsed = lakefs_sdk.VersionConfig.from_dict(version)
    assert tuple(int(p) for p in parsed.version.split(".")) >= (1, 3, 1)


# ---- 7. the log's order and its seconds ------------------------------------------------------------------------


def test_the_log_orders_by_the_sub_second_time_and_shows_whole_seconds(
    api: Api, repo: str, services: wiring.Services
) -> None:
    second = int(services.engine.ports.clock()) + 10  # after the repository's creation
    ticks = iter(range(1, 90))
    engine_clock(services).source = lambda: second + next(ticks) / 100  # 10 ms a reading, all in one second
    api.post(R + "/branches", json_body={"name": "dev", "source": "main"})
    api.upload(repo, "dev", "f1", b"1")
    api.commit(repo, "dev", "f1")  # generation 2
    api.upload(repo, "dev", "f2", b"2")
    api.commit(repo, "dev", "f2")  # generation 3
    api.upload(repo, "main", "c1", b"1")
    made = api.commit(repo, "main", "c1")  # generation 2: newer than f2, though of a lower generation
    api.post(R + "/refs/dev/merge/main", json_body={"message": "m"})
    log = body_of(api.get(R + "/refs/main/commits"))["results"]
    assert [c["message"] for c in log] == ["m", "c1", "f2", "f1", "Repository created"]
    assert made["creation_date"] == second and isinstance(made["creation_date"], int)
    assert {json.dumps(c["creation_date"]) for c in log[:4]} == {str(second)}


# ---- 9. object user metadata ----------------------------------------------------------------------------------


def test_update_object_user_metadata_is_a_staged_change(api: Api, repo: str) -> None:
    api.upload(repo, "main", "a.txt", b"hello", **{"x-lakefs-meta-old": "1"})
    api.commit(repo, "main")
    before = body_of(api.get(R + "/refs/main/objects/stat", query={"path": "a.txt"}))
    update = api.request(
        "PUT",
        R + "/branches/main/objects/stat/user_metadata",
        query={"path": "a.txt"},
        json_body={"set": {"owner": "data-team", "tier": "gold"}},
    )
    # lakeFS's server answers 204 (its swagger's 201 is not what runs), and lakectl accepts only 204.
    assert (update.status_code, update.body) == (204, b""), update.body
    after = body_of(api.get(R + "/refs/main/objects/stat", query={"path": "a.txt"}))
    assert after["metadata"] == {"owner": "data-team", "tier": "gold"}
    assert (after["physical_address"], after["checksum"], after["size_bytes"]) == (
        before["physical_address"],
        before["checksum"],
        before["size_bytes"],
    )
    committed = body_of(api.get(R + "/refs/main@/objects/stat", query={"path": "a.txt"}))
    assert committed["metadata"] == {"old": "1"}
    assert [(d["path"], d["type"]) for d in body_of(api.get(R + "/branches/main/diff"))["results"]] == [
        ("a.txt", "changed")
    ]
    api.commit(repo, "main", "metadata")
    assert body_of(api.get(R + "/refs/main@/objects/stat", query={"path": "a.txt"}))["metadata"]["tier"] == "gold"


@pytest.mark.parametrize(
    ("query", "body", "status"),
    [
        ({"path": "missing.txt"}, {"set": {"k": "v"}}, 404),
        ({}, {"set": {"k": "v"}}, 400),
        ({"path": "a.txt"}, {}, 400),
        ({"path": "a.txt"}, {"set": {"k": 1}}, 400),
        ({"path": "a.txt"}, {"set": "k=v"}, 400),
    ],
)
def test_update_object_user_metadata_refuses_bad_requests(
    api: Api, repo: str, query: dict, body: dict, status: int
) -> None:
    api.upload(repo, "main", "a.txt", b"hello")
    assert_error(
        api.request("PUT", R + "/branches/main/objects/stat/user_metadata", query=query, json_body=body), status
    )
    assert body_of(api.get(R + "/refs/main/objects/stat", query={"path": "a.txt"}))["metadata"] == {}
