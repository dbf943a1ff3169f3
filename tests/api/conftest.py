"""API tests: the Chalice app through chalice.test.Client, on the in-memory twins of every port."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from chalice.test import Client

from chalicelib import wiring

from .support import BUCKET, Api, app, memory_services, requests_per_thread


@pytest.fixture
def services() -> Iterator[wiring.Services]:
    with memory_services(BUCKET) as built:
        yield built


@pytest.fixture
def client(services: wiring.Services) -> Iterator[Client]:
    with requests_per_thread(), Client(app) as test_client:
        yield test_client


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
