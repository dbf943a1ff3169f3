"""Shared by the security suites: one embedded stack (``lakelet up`` in a subprocess) for the tests whose bug
needs real HTTP and a moto server (a presigned URL PUT twice, concurrent creations), started once per session."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.e2e.conftest import LocalProcess, launch_local


@pytest.fixture(scope="session")
def security_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalProcess]:
    local = launch_local(tmp_path_factory.mktemp("lakelet-local-security"))
    try:
        yield local
    finally:
        local.stop()
