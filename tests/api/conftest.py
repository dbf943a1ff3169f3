"""API tests: the Chalice app through chalice.test.Client, on the in-memory twins of every port."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from chalice.local import LocalChalice
from chalice.test import Client

from chalicelib import wiring

from .support import BUCKET, Api, app, memory_services


@pytest.fixture
def services() -> Iterator[wiring.Services]:
    with memory_services(BUCKET) as built:
        yield built


@pytest.fixture
def client(services: wiring.Services) -> Iterator[Client]:
    # A Chalice app keeps one ``current_request`` for the process; chalice local (and so the local stack's server)
    # keeps it per thread. The tests that race requests from threads need the latter, as deployed each Lambda
    # container serves one request at a time.
    original = type(app)
    app.__class__ = type(f"ThreadLocal{original.__name__}", (LocalChalice, original), {})
    try:
        with Client(app) as test_client:
            yield test_client
    finally:
        app.__class__ = original


@pytest.fixture
def credentials(services: wiring.Services) -> tuple[str, str]:
    credential, secret = services.auth.setup("admin")
    return credential.access_key_id, secret


@pytest.fixture
def api(client: Client, credentials: tuple[str, str]) -> Api:
    return Api(client, credentials)


@pytest.fixture
def anonymous(client: Client) -> Api:
    return Api(client, None)


@pytest.fixture
def repo(api: Api) -> str:
    api.create_repo("repo1")
    return "repo1"
