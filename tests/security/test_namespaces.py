"""Guarantee 1: one repository per storage namespace, always.

The claim is a conditional create of ``<namespace>/_lakefs/dummy`` (S3 If-None-Match: *); a namespace inside or
around another repository's, a malformed one, or one outside the deployment's bucket is a 400
(chalicelib/graveler/storage/namespaces.py). A branch creation is tied to the repository's generation, so one racing a
delete never lands in a repository created again under the same name. Seen before: six parallel creates on one
namespace all answered 201; a namespace in another bucket answered 503.
"""

from __future__ import annotations

import base64
import json
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from chalice.test import Client

from chalicelib import wiring
from chalicelib.graveler.reads import shared as reads
from tests.api.support import Api, app, assert_error, requests_per_thread
from tests.e2e.conftest import LocalProcess

from .write_support import BUCKET, NAMESPACE, api, create_repo, credentials, services

__all__ = ["api", "credentials", "services"]  # fixtures


def create(api: Api, name: str, namespace: str) -> Any:
    return api.post("/repositories", json_body={"name": name, "storage_namespace": namespace})


def with_latency(services: wiring.Services, monkeypatch: pytest.MonkeyPatch, seconds: float = 0.02) -> None:
    """Every block store call takes a network round trip, as S3's do: check-then-write races show."""
    blocks = services.engine.ports.blocks
    for name in ("exists", "put", "put_if_absent", "list_blobs"):
        original: Callable[..., Any] | None = getattr(blocks, name, None)
        if original is None:
            continue

        def slow(*args: Any, _original: Callable[..., Any] = original, **kwargs: Any) -> Any:
            time.sleep(seconds)
            return _original(*args, **kwargs)

        monkeypatch.setattr(blocks, name, slow)


def race(credentials: tuple[str, str], bodies: list[dict[str, str]]) -> list[int]:
    """POST /repositories with each body at once, from as many threads (each with its own test client), with the
    app's ``current_request`` kept per thread as the local stack's server keeps it."""
    with requests_per_thread():
        return _race(credentials, bodies)


def _race(credentials: tuple[str, str], bodies: list[dict[str, str]]) -> list[int]:
    barrier = threading.Barrier(len(bodies))
    statuses: list[int] = [0] * len(bodies)

    def attempt(i: int) -> None:
        with Client(app) as client:
            caller = Api(client, credentials)
            barrier.wait()
            statuses[i] = caller.post("/repositories", json_body=bodies[i]).status_code

    threads = [threading.Thread(target=attempt, args=(i,)) for i in range(len(bodies))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return statuses


def test_six_parallel_creates_on_one_namespace_make_exactly_one_repository(
    api: Api, credentials: tuple[str, str], services: wiring.Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    with_latency(services, monkeypatch)
    namespace = f"{NAMESPACE}/shared"
    statuses = race(credentials, [{"name": f"racer-{i}", "storage_namespace": namespace} for i in range(6)])
    assert sorted(statuses) == [201] + [400] * 5, statuses
    repositories = json.loads(api.get("/repositories").body)["results"]
    assert [r["storage_namespace"] for r in repositories] == [namespace]


def test_six_parallel_creates_of_one_name_make_exactly_one_repository(
    api: Api, credentials: tuple[str, str], services: wiring.Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    with_latency(services, monkeypatch)
    statuses = race(credentials, [{"name": "same", "storage_namespace": f"{NAMESPACE}/same-{i}"} for i in range(6)])
    assert statuses.count(201) == 1 and all(s in (400, 409) for s in statuses if s != 201), statuses
    # The losers left no claim behind: their namespaces are free for another repository.
    free = [i for i, s in enumerate(statuses) if s != 201]
    assert create(api, "later", f"{NAMESPACE}/same-{free[0]}").status_code == 201


def test_a_namespace_inside_or_around_another_repository_is_400(api: Api) -> None:
    create_repo(api, "victim")  # s3://security-bucket/victim
    for inside in ("victim/data", "victim/_lakefs/multipart/x", "victim/a/b/c"):
        message = assert_error(create(api, "intruder", f"{NAMESPACE}/{inside}"), 400)
        assert "inside" in message
    assert create(api, "nested", f"{NAMESPACE}/outer/inner").status_code == 201
    assert "contains" in assert_error(create(api, "outer", f"{NAMESPACE}/outer"), 400)
    # Siblings and names that merely share a prefix are fine, and a refusal claimed nothing.
    assert create(api, "victim2", f"{NAMESPACE}/victim2").status_code == 201
    assert create(api, "outerx", f"{NAMESPACE}/outer-x").status_code == 201
    names = [r["id"] for r in json.loads(api.get("/repositories").body)["results"]]
    assert names == ["nested", "outerx", "victim", "victim2"]


def test_the_same_namespace_twice_is_400_even_after_the_first_repository_is_deleted(api: Api) -> None:
    create_repo(api, "first")
    assert "in use" in assert_error(create(api, "second", f"{NAMESPACE}/first/"), 400)
    assert api.delete("/repositories/first").status_code == 204
    # Its data (and the marker) stay in the namespace: GC of a new repository there would delete them.
    assert "in use" in assert_error(create(api, "second", f"{NAMESPACE}/first"), 400)


@pytest.mark.parametrize(
    "namespace",
    [
        f"{NAMESPACE}///x",
        f"{NAMESPACE}/x//y",
        f"{NAMESPACE}/./x",
        f"{NAMESPACE}/x/..",
        f"{NAMESPACE}/../x",
        f"{NAMESPACE}/x?y=1",
        f"{NAMESPACE}/x#frag",
        NAMESPACE,
        f"{NAMESPACE}/",
        f"{NAMESPACE}/x\ny",
        "s3://x",
    ],
)
def test_malformed_namespaces_are_400(api: Api, namespace: str) -> None:
    assert_error(create(api, "repo1", namespace), 400)
    assert json.loads(api.get("/repositories").body)["results"] == []


def test_a_bucket_this_deployment_does_not_use_is_400_naming_the_allowed_prefix(api: Api) -> None:
    for namespace in ("s3://another-bucket/repo1", f"s3://{BUCKET}-2/repo1"):
        message = assert_error(create(api, "repo1", namespace), 400)
        assert f"s3://{BUCKET}/" in message


@pytest.mark.e2e
def test_six_parallel_creates_on_the_local_stack(security_stack: LocalProcess) -> None:
    token = base64.b64encode(f"{security_stack.access_key_id}:{security_stack.secret_access_key}".encode()).decode()
    headers = {"Authorization": f"Basic {token}", "Content-Type": "application/json"}
    with urllib.request.urlopen(urllib.request.Request(security_stack.api_url + "/config", headers=headers)) as got:
        prefix = json.loads(got.read())["storage_config"]["default_namespace_prefix"]
    namespace = f"{prefix.rstrip('/')}/shared-{uuid.uuid4().hex[:8]}"
    barrier = threading.Barrier(6)
    statuses: list[int] = [0] * 6

    def attempt(i: int) -> None:
        body = json.dumps({"name": f"racer-{uuid.uuid4().hex[:8]}", "storage_namespace": namespace}).encode()
        request = urllib.request.Request(
            security_stack.api_url + "/repositories", data=body, headers=headers, method="POST"
        )
        barrier.wait()
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                statuses[i] = response.status
        except urllib.error.HTTPError as e:
            statuses[i] = e.code

    threads = [threading.Thread(target=attempt, args=(i,)) for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(statuses) == [201] + [400] * 5, statuses


def recreate_repository_after_next_resolve(services: wiring.Services, monkeypatch: pytest.MonkeyPatch) -> None:
    """The next ref resolution (between a creation's read of the repository and its write of the branch or tag)
    is followed by deleting repo1 and creating it again on another namespace."""
    engine = services.engine
    resolve = reads.resolve_ref
    done: list[bool] = []

    def resolve_then_lose_the_race(refs: Any, repo_id: str, ref: str) -> Any:
        resolved = resolve(refs, repo_id, ref)
        if not done:
            done.append(True)
            engine.repositories.delete_repository("repo1")
            engine.repositories.create_repository("repo1", f"{NAMESPACE}/repo1-again")
        return resolved

    # Every use case resolves refs through reads.py, which calls refs.resolve_ref.
    monkeypatch.setattr(reads, "resolve_ref", resolve_then_lose_the_race)


def test_a_branch_created_while_its_repository_is_deleted_and_recreated_is_not_inherited(
    api: Api, services: wiring.Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    create_repo(api, "repo1")
    recreate_repository_after_next_resolve(services, monkeypatch)
    response = api.post("/repositories/repo1/branches", json_body={"name": "feature", "source": "main"})
    assert_error(response, 404)
    branches = [b["id"] for b in json.loads(api.get("/repositories/repo1/branches").body)["results"]]
    assert branches == ["main"]
    assert_error(api.get("/repositories/repo1/branches/feature"), 404)


def test_a_tag_created_while_its_repository_is_deleted_and_recreated_is_not_inherited(
    api: Api, services: wiring.Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    create_repo(api, "repo1")
    recreate_repository_after_next_resolve(services, monkeypatch)
    assert_error(api.post("/repositories/repo1/tags", json_body={"id": "v1", "ref": "main"}), 404)
    assert json.loads(api.get("/repositories/repo1/tags").body)["results"] == []
