"""No repository may be collected, or created bare, where that would delete another repository's data: a bare
repository (the refs restore's target) inside or around a repository's namespace is refused, one on a live
repository's own namespace is allowed (a restore's copy, as in lakeFS) but GC then refuses both, and a bare
repository's namespace is claimed, so no repository is created on it afterwards."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from chalice.test import Client

from chalicelib import wiring
from chalicelib.graveler.storage.namespaces import marker_address
from tests.api.support import NAMESPACE, Api, app, assert_error

RULES = {"default_retention_days": 7, "branches": []}


@pytest.fixture
def api(memory: wiring.Services) -> Iterator[Api]:
    credential, secret = memory.auth.setup("admin")
    with Client(app) as client:
        api = Api(client, (credential.access_key_id, secret))
        api.create_repo("live")
        api.upload("live", "main", "data.csv", b"id\n1\n")
        api.commit("live", "main", "data")
        assert api.request("PUT", "/repositories/live/settings/gc_rules", json_body=RULES).status_code == 204
        yield api


def _bare(api: Api, name: str, namespace: str) -> Any:
    body = {"name": name, "storage_namespace": namespace, "default_branch": "main"}
    return api.post("/repositories", json_body=body, query={"bare": "true"})


@pytest.mark.parametrize("namespace", [f"{NAMESPACE}/live/inner", f"{NAMESPACE}/live/data/x", NAMESPACE])
def test_a_bare_repository_inside_or_around_another_is_refused(api: Api, namespace: str) -> None:
    message = assert_error(_bare(api, "copy", namespace), 400)
    assert "live" in message, message
    assert_error(api.get("/repositories/copy"), 404)


def test_gc_refuses_both_repositories_that_share_a_namespace(api: Api) -> None:
    assert _bare(api, "copy", f"{NAMESPACE}/live").status_code == 201  # a restore's copy, as lakeFS allows
    for repo in ("live", "copy"):
        message = assert_error(api.post(f"/repositories/{repo}/gc/prepare_commits"), 400)
        assert "refused" in message and "other repository's data" in message, message
    # Once the copy is gone, the repository is collected again.
    assert api.delete("/repositories/copy").status_code == 204
    assert api.post("/repositories/live/gc/prepare_commits").status_code == 201


def test_a_bare_repository_claims_its_namespace(api: Api, memory: wiring.Services) -> None:
    fresh = f"{NAMESPACE}/restored"
    assert _bare(api, "restored", fresh).status_code == 201
    assert memory.engine.ports.blocks.exists(marker_address(fresh))
    body = {"name": "other", "storage_namespace": fresh, "default_branch": "main"}
    assert "already in use" in assert_error(api.post("/repositories", json_body=body), 400)
    inner = {"name": "inner", "storage_namespace": f"{fresh}/in", "default_branch": "main"}
    assert "inside" in assert_error(api.post("/repositories", json_body=inner), 400)
    # A deleted repository's namespace (its marker stayed) is where a restore rebuilds it, as before.
    assert api.delete("/repositories/live").status_code == 204
    assert _bare(api, "live", f"{NAMESPACE}/live").status_code == 201
